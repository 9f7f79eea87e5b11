"""Our models, one module each, and the registry that names them.

A module here (``classifier.py``, ``generator.py``, ``translator.py``) holds one :class:`ModelEntry`: the
model's description (its attention kinds, inputs, limits, labels, default corpus), its network and config,
the recipe it was trained by and the texts the explore pages open on. Everything that used to list the
models in a table of its own reads :data:`MODELS` instead (``model.core.specs.SPECS``, the checkpoint loader,
the head finder's default corpus, the recipe replay, the explore pages). A new model is a new module here
and one line in :data:`MODELS`.
"""

from __future__ import annotations

from model.zoo import classifier, generator, translator
from model.zoo.records import Examples, ModelEntry

__all__ = ["MODELS", "Examples", "ModelEntry", "model_entry"]

# name -> entry, in the order the app offers them
MODELS: dict[str, ModelEntry] = {m.ENTRY.name: m.ENTRY for m in (classifier, generator, translator)}


def model_entry(name: str) -> ModelEntry:
    """The entry of our model ``name``; a ValueError that lists them otherwise."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
    return MODELS[name]
