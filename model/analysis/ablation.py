"""Head ablation: switch heads off through ``head_mask`` and compare the model before and after.

A switched-off head still computes its attention weights, but its output is multiplied by 0
before the heads are unified, so its own layer's weights do not change; every layer above it
(and, in the translator, the decoder reading an ablated encoder) sees a different input. The
shared model is never touched: only ``head_mask`` arguments change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor, nn

from model.analysis.runs import run, with_weights
from model.core.checkpoint import Checkpoint
from model.core.inference import model_device
from model.core.results import RunResult
from model.nets.translator import Translator

Head = tuple[str, int, int]  # (kind, layer, head); kind is "encoder", "decoder" or "cross"
KINDS = ("encoder", "decoder", "cross")


def head_layout(model: nn.Module) -> dict[str, tuple[int, int]]:
    """``(layers, heads)`` per attention kind: the classifier and generator only have "encoder"."""
    c = model.config
    if isinstance(model, Translator):
        return {
            "encoder": (c.enc_layers, c.heads),
            "decoder": (c.dec_layers, c.heads),
            "cross": (c.dec_layers, c.heads),
        }
    return {"encoder": (c.layers, c.heads)}


def head_masks(layout: dict[str, tuple[int, int]], off: Iterable[Head]) -> dict[str, Tensor]:
    """A ``(layers, heads)`` float mask per kind of ``layout``: 1 everywhere, 0 at the heads in ``off``."""
    masks = {kind: torch.ones(shape) for kind, shape in layout.items()}
    for kind, layer, head in off:
        if kind not in masks:
            raise ValueError(f"this model has no {kind!r} attention; choose one of {', '.join(masks)}")
        layers, heads = layout[kind]
        if not (0 <= layer < layers and 0 <= head < heads):
            raise ValueError(
                f"{kind} layer {layer}, head {head} does not exist; there are layers 0..{layers - 1} "
                f"with heads 0..{heads - 1}"
            )
        masks[kind][layer, head] = 0.0
    return masks


def model_head_mask(model: nn.Module, off: Iterable[Head]) -> Tensor | dict[str, Tensor]:
    """The ``head_mask`` argument ``model`` takes, on its device: a dict for the translator, else a tensor."""
    dev = next(model.parameters()).device
    masks = {k: m.to(dev) for k, m in head_masks(head_layout(model), off).items()}
    return masks if isinstance(model, Translator) else masks["encoder"]


@dataclass(frozen=True, eq=False)
class Ablation:
    """One input through the model with all heads on (``before``) and with ``off`` switched off (``after``).

    ``after`` holds the ablated model's prediction, and its attention on exactly the tokens of
    ``before`` (for the translator: teacher-forced on the unablated translation), so the two
    subtract cell by cell even when the ablated translation has a different length.
    """

    off: tuple[Head, ...]
    before: RunResult
    after: RunResult

    def delta(self) -> dict[str, np.ndarray]:
        """``before - after`` per kind, ``(layers, heads, queries, keys)``."""
        return {k: self.before.kinds[k].weights - self.after.kinds[k].weights for k in self.before.kinds}

    def change_per_head(self, kind: str) -> np.ndarray:
        """The largest ``|before - after|`` of any weight, per head of ``kind``: ``(layers, heads)``."""
        return np.abs(self.delta()[kind]).max(axis=(2, 3))

    def off_in(self, kind: str) -> set[tuple[int, int]]:
        """The ``(layer, head)`` pairs of ``kind`` that are switched off."""
        return {(layer, head) for k, layer, head in self.off if k == kind}


def ablate(ck: Checkpoint, text: str, off: Iterable[Head]) -> Ablation:
    """Run ``text`` with every head on, then with the heads in ``off`` switched off."""
    off = tuple(sorted(set(off)))
    mask = model_head_mask(ck.model, off)
    before = run(ck, text)
    after = run(ck, text, head_mask=mask)
    if ck.spec.output != "text":  # one forward pass reads the whole input
        return Ablation(off, before, after)
    # The translation as written with every head on, read again with the heads off: both sides from
    # one teacher-forced pass each (greedy's kept maps agree only to rounding), so nothing off changes nothing.
    src = torch.tensor([before.inputs["src"]], device=model_device(ck))
    tgt = torch.tensor([before.inputs["tgt"]], device=src.device)
    with torch.no_grad():
        _, plain = ck.model(src, tgt, return_attention=True)
        _, maps = ck.model(src, tgt, return_attention=True, head_mask=mask)
    plain, maps = plain.to("cpu"), maps.to("cpu")
    before = with_weights(before, {k: getattr(plain, k) for k in KINDS})
    after = replace(with_weights(before, {k: getattr(maps, k) for k in KINDS}), prediction=after.prediction)
    return Ablation(off, before, after)
