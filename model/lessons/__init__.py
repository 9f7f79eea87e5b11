"""The teaching material: the hand-worked example (``hand``), the multi-head reshape (``reshape``),
workshop questions (``workshop``) and classroom questions built from the models (``questions``, with
``classroom_kinds`` for how a round shows in the explorer). The rooms themselves are ``rooms``."""
