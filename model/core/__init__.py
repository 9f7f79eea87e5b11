"""The floor every other part of ``model`` stands on: tokenisers, checkpoints (a model with its
vocabularies), inference (text in, predictions out) and the typed result of a run."""
