"""Transformer blocks (encoder-style and decoder-style) and the attention-maps container."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from model.nets.attention import MultiHeadAttention, Probe


@dataclass
class AttentionMaps:
    """Attention weights per layer, each ``(batch, heads, queries, keys)``.

    ``encoder`` holds self-attention of the classifier and generator too (the generator's is
    causal); ``decoder`` and ``cross`` are the translator's masked self- and cross-attention.
    """

    encoder: list[Tensor] = field(default_factory=list)
    decoder: list[Tensor] = field(default_factory=list)
    cross: list[Tensor] = field(default_factory=list)

    def to(self, device: torch.device | str) -> AttentionMaps:
        return AttentionMaps(*([w.to(device) for w in ws] for ws in (self.encoder, self.decoder, self.cross)))


def embed(tok: nn.Embedding, pos: nn.Embedding, ids: Tensor, *, start: int = 0) -> Tensor:
    """Token embeddings scaled by √width plus learned positions ``start``, ``start + 1``, ...: every
    model's first line (the dropout after it is the model's)."""
    positions = torch.arange(start, start + ids.size(1), device=ids.device)
    return tok(ids) * math.sqrt(tok.embedding_dim) + pos(positions)


def layer_head_mask(head_mask: Tensor | None, layer: int) -> Tensor | None:
    """Row ``layer`` of a ``(layers, heads)`` head mask, or None."""
    return None if head_mask is None else head_mask[layer]


def check_probe(probe: Probe | None, layers: dict[str, int]) -> None:
    """Raise a ValueError unless ``probe`` asks for a kind and layer the model has (``layers`` per kind)."""
    if probe is None:
        return
    if probe.kind not in layers:
        raise ValueError(f"this model has no {probe.kind!r} attention; choose one of {', '.join(layers)}")
    if not 0 <= probe.layer < layers[probe.kind]:
        raise ValueError(f"{probe.kind} layer {probe.layer} does not exist; choose 0..{layers[probe.kind] - 1}")


class FeedForward(nn.Sequential):
    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim))


class EncoderBlock(nn.Module):
    """Self-attention then feed-forward, each in a residual branch (pre- or post-norm)."""

    def __init__(
        self,
        dim: int,
        heads: int,
        ff_dim: int,
        dropout: float,
        *,
        wide: bool = False,
        norm_first: bool = True,
        attn_dropout: float | None = None,
    ) -> None:
        """``attn_dropout`` is the dropout on the attention weights; None: ``dropout``."""
        super().__init__()
        a = dropout if attn_dropout is None else attn_dropout
        self.attn = MultiHeadAttention(dim, heads, wide=wide, dropout=a)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """``probe`` (see MultiHeadAttention) is filled by this block's self-attention."""
        kw = dict(mask=mask, need_weights=need_weights, head_mask=head_mask, probe=probe)
        if self.norm_first:
            h, w = self.attn(self.norm1(x), **kw)
            x = x + self.drop(h)
            return x + self.drop(self.ff(self.norm2(x))), w
        h, w = self.attn(x, **kw)
        x = self.norm1(x + self.drop(h))
        return self.norm2(x + self.drop(self.ff(x))), w


class DecoderBlock(nn.Module):
    """Masked self-attention, cross-attention over the encoder memory, then feed-forward."""

    def __init__(
        self,
        dim: int,
        heads: int,
        ff_dim: int,
        dropout: float,
        *,
        wide: bool = False,
        norm_first: bool = True,
        attn_dropout: float | None = None,
    ) -> None:
        """``attn_dropout`` is the dropout on both attentions' weights; None: ``dropout``."""
        super().__init__()
        a = dropout if attn_dropout is None else attn_dropout
        self.self_attn = MultiHeadAttention(dim, heads, wide=wide, dropout=a)
        self.cross_attn = MultiHeadAttention(dim, heads, wide=wide, dropout=a)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.drop = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        cross_mask: Tensor | None = None,
        *,
        need_weights: bool = False,
        self_head_mask: Tensor | None = None,
        cross_head_mask: Tensor | None = None,
        cache: dict[str, dict[str, Tensor]] | None = None,
        self_probe: Probe | None = None,
        cross_probe: Probe | None = None,
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """``cache`` (see MultiHeadAttention): ``{"self": {}, "cross": {}}`` kept between decoding steps;
        ``self_probe`` and ``cross_probe`` are filled by the self- and cross-attention."""
        sc, cc = (cache["self"], cache["cross"]) if cache is not None else (None, None)
        skw = dict(mask=self_mask, need_weights=need_weights, head_mask=self_head_mask, cache=sc, probe=self_probe)
        ckw = dict(need_weights=need_weights, head_mask=cross_head_mask, cache=cc, probe=cross_probe)
        if self.norm_first:
            h, ws = self.self_attn(self.norm1(x), **skw)
            x = x + self.drop(h)
            h, wc = self.cross_attn(self.norm2(x), memory, cross_mask, **ckw)
            x = x + self.drop(h)
            return x + self.drop(self.ff(self.norm3(x))), ws, wc
        h, ws = self.self_attn(x, **skw)
        x = self.norm1(x + self.drop(h))
        h, wc = self.cross_attn(x, memory, cross_mask, **ckw)
        x = self.norm2(x + self.drop(h))
        return self.norm3(x + self.drop(self.ff(x))), ws, wc
