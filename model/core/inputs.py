"""A run's ids as one forward pass's arguments, for our own models: what explanation and attribution re-run."""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from model.core.checkpoint import Checkpoint
from model.core.inference import model_device


def input_tensors(ck: Checkpoint, inputs: dict[str, list[int]]) -> tuple[Tensor, ...]:
    """The forward pass's arguments from ``inputs``, checked against the model's vocabularies and lengths."""
    model, dev = ck.model, model_device(ck)
    names = ck.spec.inputs
    if not isinstance(inputs, dict) or set(names) - set(inputs):
        raise ValueError(f"the {ck.task} needs inputs {{{', '.join(repr(n) for n in names)}}}: RunResult.inputs")
    c = model.config
    limit = getattr(c, ck.spec.limit_field)  # in positions, <sos> and <eos> included
    sizes = {
        "ids": getattr(c, "vocab_size", None),
        "src": getattr(c, "src_vocab_size", None),
        "tgt": getattr(c, "tgt_vocab_size", None),
    }
    out = []
    for name in names:
        ids = [int(i) if isinstance(i, (int, np.integer)) else i for i in inputs[name]]
        if not ids:
            raise ValueError(f"inputs[{name!r}] is empty; explain needs the ids the model read")
        if len(ids) > limit:
            raise ValueError(f"inputs[{name!r}] has {len(ids)} ids; the model reads at most {limit}")
        if not all(isinstance(i, int) and 0 <= i < sizes[name] for i in ids):
            raise ValueError(f"inputs[{name!r}] holds ids outside the vocabulary (0..{sizes[name] - 1})")
        out.append(torch.tensor([ids], device=dev))
    return tuple(out)
