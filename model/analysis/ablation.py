"""Head ablation: switch heads off through ``head_mask`` and compare the model before and after.

A switched-off head still computes its attention weights, but its output is multiplied by 0
before the heads are unified, so its own layer's weights do not change; every layer above it
(and, in the translator, the decoder reading an ablated encoder) sees a different input. The
shared model is never touched: only ``head_mask`` arguments change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from model.analysis.inference import Classification, Translation, classify, model_device, source_ids, translate
from model.nets.blocks import AttentionMaps
from model.nets.translator import Translator
from model.training.checkpoint import Checkpoint
from model.training.tokenize import encode_chars

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


@dataclass
class NextChar:
    """The generator's next-character distribution after a prompt and its attention over the prompt."""

    chars: list[str]  # the context window as typed (unknown characters were read as <unk>)
    probs: dict[str, float]  # vocabulary entry -> probability of coming next
    attention: AttentionMaps  # encoder: causal maps, (1, heads, T, T) per layer
    unknown: list[str]  # characters outside the vocabulary
    truncated: bool  # the prompt was cut to its last block_size characters


def next_char(ck: Checkpoint, prompt: str, *, head_mask: Tensor | None = None) -> NextChar:
    """What the generator would write after ``prompt`` (its last context window); ValueError when empty."""
    vocab, model = ck.vocabs["chars"], ck.model
    if not prompt:
        raise ValueError("the prompt is empty; type a few characters")
    block = model.config.block_size
    window = prompt[-block:]
    ids = torch.tensor([encode_chars(vocab, window)], device=model_device(ck))
    with torch.no_grad():
        logits, maps = model(ids, return_attention=True, head_mask=head_mask)
    probs = torch.softmax(logits[0, -1].float(), -1).tolist()
    unknown = sorted({ch for ch in window if ch not in vocab})
    return NextChar(list(window), dict(zip(vocab.itos, probs)), maps.to("cpu"), unknown, len(prompt) > block)


Result = Classification | NextChar | Translation


@dataclass
class Ablation:
    """One input through the model with all heads on (``before``) and with ``off`` switched off (``after``).

    ``after_maps`` is the ablated model's attention on exactly the tokens of ``before`` (for the
    translator: teacher-forced on the unablated translation), so ``before.attention - after_maps``
    is defined even when the ablated translation has a different length.
    """

    off: tuple[Head, ...]
    before: Result
    after: Result
    after_maps: AttentionMaps


def run(ck: Checkpoint, text: str, *, head_mask: Tensor | dict[str, Tensor] | None = None) -> Result:
    """The prediction and attention of ``ck`` on ``text``: classify, next character or translate."""
    if ck.task == "classifier":
        return classify(ck, text, head_mask=head_mask)
    if ck.task == "generator":
        return next_char(ck, text, head_mask=head_mask)
    if ck.task == "translator":
        return translate(ck, text, head_mask=head_mask)
    raise ValueError(f"unknown task {ck.task!r}; expected classifier, generator or translator")


def ablate(ck: Checkpoint, text: str, off: Iterable[Head]) -> Ablation:
    """Run ``text`` with every head on, then with the heads in ``off`` switched off."""
    off = tuple(sorted(set(off)))
    mask = model_head_mask(ck.model, off)
    before = run(ck, text)
    after = run(ck, text, head_mask=mask)
    if ck.task != "translator":
        return Ablation(off, before, after, after.attention)
    # The translation as written with every head on, read again with the heads off: both sides from
    # one teacher-forced pass each (greedy's kept maps agree only to rounding), so nothing off changes nothing.
    src = torch.tensor([source_ids(ck, text)[1]], device=model_device(ck))
    tgt = torch.tensor([[ck.vocabs["tgt"].stoi[t] for t in before.tgt_in]], device=src.device)
    with torch.no_grad():
        _, plain = ck.model(src, tgt, return_attention=True)
        _, maps = ck.model(src, tgt, return_attention=True, head_mask=mask)
    return Ablation(off, replace(before, attention=plain.to("cpu")), after, maps.to("cpu"))


def attention_delta(before: AttentionMaps, after: AttentionMaps) -> AttentionMaps:
    """``before - after`` for every layer of every kind; the shapes must match."""
    delta = AttentionMaps()
    for kind in KINDS:
        a, b = getattr(before, kind), getattr(after, kind)
        if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b)):
            shapes = [tuple(x.shape) for x in a], [tuple(y.shape) for y in b]
            raise ValueError(f"{kind} attention differs in shape before {shapes[0]} and after {shapes[1]}")
        getattr(delta, kind).extend(x - y for x, y in zip(a, b))
    return delta
