"""One typed result per model run: what pages, exports, the explorer and analyses all read.

A run of any model (ours or a Hugging Face one) becomes a :class:`RunResult`: the prediction, what
the model could not read, and one :class:`AttentionKind` per kind of attention (encoder self-,
decoder self-, cross-attention), each holding every layer and head as one
``(layers, heads, queries, keys)`` float32 array (a large causal kind only its lower triangle, which
reads like that array: :mod:`model.core.triangle`) with the tokens and names of both axes and the
mask that says which cells the model could not attend to. Nothing here imports streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from model.core.tokenize import EOS, PAD, SOS, UNK
from model.core.triangle import CausalMaps, held

SPECIAL_TOKENS = (SOS, EOS, PAD, UNK)


@dataclass(frozen=True, eq=False)
class AttentionKind:
    """Every layer and head of one kind of attention for one input."""

    name: str  # "encoder", "decoder" or "cross"
    title: str  # "Encoder self-attention", shown above the view
    # (layers, heads, queries, keys) float32; a large causal kind holds only its lower triangle, and reads
    # like the dense array (model.core.triangle.CausalMaps)
    weights: np.ndarray | CausalMaps
    queries: list[str]  # row tokens, as the model read them ("<unk>" words keep their text)
    keys: list[str]  # column tokens
    query_axis: str  # "query = English"
    key_axis: str  # "key = German"
    mask: np.ndarray  # (queries, keys) bool: True where the model may attend (causal, padding)
    special: list[bool]  # per key: a special token or a word read as <unk>
    cross: bool = False  # queries and keys are different sequences
    kv_heads: int = 0  # grouped-query attention: query head h reads key/value head h // (heads // kv_heads); 0: its own
    window: int = 0  # a sliding window: in window_layers, query i cannot see key j when i - j >= window (0: none)
    window_layers: tuple[int, ...] = ()  # the layers that attend within the window (Mistral: all; Gemma 2: every other)

    def __post_init__(self) -> None:
        L, H, Tq, Tk = self.weights.shape
        if (len(self.queries), len(self.keys)) != (Tq, Tk):
            raise ValueError(
                f"{self.name}: {len(self.queries)} query and {len(self.keys)} key tokens for weights of shape "
                f"{self.weights.shape}"
            )
        if self.mask.shape != (Tq, Tk) or len(self.special) != Tk:
            raise ValueError(f"{self.name}: mask {self.mask.shape} or special flags do not match {Tq} × {Tk}")
        if self.kv_heads and (self.kv_heads > H or H % self.kv_heads):
            raise ValueError(f"{self.name}: {H} query heads cannot share {self.kv_heads} key/value heads evenly")
        if any(not 0 <= layer < L for layer in self.window_layers):
            raise ValueError(f"{self.name}: window layers {self.window_layers} outside 0..{L - 1}")

    def layer_mask(self, layer: int) -> np.ndarray:
        """``(queries, keys)`` bool: where ``layer`` may attend, the mask and, in a sliding-window layer,
        the window."""
        if not self.window or layer not in self.window_layers:
            return self.mask
        q, k = np.indices(self.mask.shape)
        return self.mask & (q - k < self.window)

    @property
    def layers(self) -> int:
        return self.weights.shape[0]

    @property
    def heads(self) -> int:
        return self.weights.shape[1]

    def head(self, layer: int, head: int) -> np.ndarray:
        """``(queries, keys)`` weights of one head."""
        return self.weights[layer, head]


@dataclass(frozen=True, eq=False)
class RunResult:
    """One input through one model."""

    task: str  # "classifier", "generator", "translator", or "hub" for a Hugging Face model
    kinds: dict[str, AttentionKind]  # in display order: encoder, decoder, cross
    prediction: str  # the label, the generated text, the translation
    probs: dict[str, float] = field(default_factory=dict)  # class or next-character probabilities
    unknown: list[str] = field(default_factory=list)  # input tokens outside the vocabulary
    truncated: bool = False  # the input was cut to the model's length
    limit: int = 0  # how many input tokens the model reads
    unit: str = "words"  # what the input is counted in: "words", "characters", "tokens"
    read: int = 0  # how many input tokens the model read
    unknown_read: int = 0  # how many of those became <unk>
    notes: dict[str, str] = field(default_factory=dict)  # anything else a page shows (e.g. "reference")
    # the token ids the maps were computed from, so a weight can be recomputed (model.analysis.explain):
    # {"ids": [...]} for the classifier and generator, {"src": [...], "tgt": [...]} for the translator
    inputs: dict[str, list[int]] = field(default_factory=dict)

    @property
    def all_unknown(self) -> bool:
        """The model saw nothing but ``<unk>``: nothing worth drawing."""
        return self.read > 0 and self.unknown_read == self.read

    @property
    def confidence(self) -> float:
        return max(self.probs.values()) if self.probs else float("nan")


def stack_layers(layers: Sequence[torch.Tensor], item: int = 0) -> np.ndarray:
    """Batch item ``item`` of per-layer ``(batch, heads, queries, keys)`` maps as one
    ``(layers, heads, queries, keys)`` float32 array."""
    return torch.stack([w[item] for w in layers]).detach().to("cpu", torch.float32).numpy()


def attention_kind(
    name: str,
    layers: Sequence[torch.Tensor] | np.ndarray,
    queries: Sequence[str],
    keys: Sequence[str],
    *,
    mask: np.ndarray | None = None,
    special: Sequence[bool] | None = None,
    title: str | None = None,
    axes: tuple[str, str] | None = None,
    kv_heads: int = 0,
    window: int = 0,
    window_layers: Sequence[int] = (),
) -> AttentionKind:
    """An :class:`AttentionKind` from per-layer tensors (or a stacked array). A model's runs take the title
    and axis names from its description (:mod:`model.core.specs`); without them the title is ``name`` and
    the axes "query" and "key". The mask defaults to "every cell visible", ``special`` to none;
    ``kv_heads``, ``window`` and ``window_layers`` as :class:`AttentionKind` has them."""
    weights = layers if isinstance(layers, (np.ndarray, CausalMaps)) else stack_layers(layers)
    if not isinstance(weights, CausalMaps):
        weights = held(np.ascontiguousarray(weights, dtype=np.float32), mask)  # a large causal map: its triangle
    q_axis, k_axis = axes or ("query", "key")
    Tq, Tk = weights.shape[-2:]
    return AttentionKind(
        name=name,
        title=title or name,
        weights=weights,
        queries=list(queries),
        keys=list(keys),
        query_axis=q_axis,
        key_axis=k_axis,
        mask=np.ones((Tq, Tk), dtype=bool) if mask is None else np.asarray(mask, dtype=bool),
        special=[False] * Tk if special is None else list(special),
        cross=name == "cross",
        kv_heads=int(kv_heads),
        window=int(window or 0),
        window_layers=tuple(int(x) for x in window_layers) if window else (),
    )


def causal(n: int) -> np.ndarray:
    """``(n, n)`` bool: query i may see keys 0..i."""
    return np.tril(np.ones((n, n), dtype=bool))


def special_keys(tokens: Sequence[str], unknown: Sequence[str] = ()) -> list[bool]:
    """One flag per key token: a special token, or a word outside the vocabulary (read as <unk>)."""
    unknown = set(unknown) - set(SPECIAL_TOKENS)
    return [t in SPECIAL_TOKENS or t in unknown for t in tokens]
