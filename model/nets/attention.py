"""Scaled dot-product attention and one multi-head module for self-, causal and cross-attention."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    *,
    split_scale: bool = False,
    dropout: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Attention over the last two dimensions; returns ``(out, weights)``.

    ``q`` is ``(..., Tq, s)``, ``k`` is ``(..., Tk, s)``, ``v`` is ``(..., Tk, sv)``. ``mask`` is a
    boolean tensor broadcastable to ``(..., Tq, Tk)``; True means "may attend". With
    ``split_scale`` the queries and keys are each divided by ``s ** 0.25`` (as Bloem's wide heads and a
    Keras self-attention layer do) instead
    of dividing the scores by ``sqrt(s)``: the same numbers, arranged differently.

    A query row whose keys are all masked gets zero weights (not NaN).
    """
    scores = attention_scores(q, k, split_scale=split_scale)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        # rows with no visible key come out of softmax as NaN; make them attend to nothing
        weights = weights.nan_to_num(0.0)
    if dropout > 0.0:
        weights = F.dropout(weights, p=dropout)
    return weights @ v, weights


def attention_scores(q: Tensor, k: Tensor, *, split_scale: bool = False) -> Tensor:
    """Scaled scores ``(..., Tq, Tk)`` before the mask: ``q @ k.T / sqrt(s)``, or with ``split_scale``
    ``(q / s ** 0.25) @ (k / s ** 0.25).T``."""
    s = q.size(-1)
    if split_scale:
        return (q / s**0.25) @ (k / s**0.25).transpose(-2, -1)
    return (q @ k.transpose(-2, -1)) / math.sqrt(s)


@dataclass(frozen=True, eq=False)
class AttentionTrace:
    """What one attention call computed, for explaining a weight; every tensor is the module's own.

    Per-head tensors are ``(B, heads, T, s)``; ``scores`` and ``weights`` are ``(B, heads, Tq, Tk)``.
    """

    x: Tensor  # (B, Tq, dim) the input the queries were projected from
    context: Tensor | None  # (B, Tk, dim) the input of keys and values; None where they came from a cache
    q: Tensor
    k: Tensor
    v: Tensor
    mask: Tensor | None  # boolean, broadcastable to (B, heads, Tq, Tk); True = may attend; None = all
    scores: Tensor  # scaled scores before the mask (attention_scores)
    weights: Tensor  # the softmax of the masked scores: what return_attention gives
    heads: Tensor  # (B, heads, Tq, s) each head's output (head_mask applied), before unify
    split_scale: bool  # how the scores were scaled


@dataclass(eq=False)
class Probe:
    """An opt-in request, passed to a model's forward, for the internals of one attention call.

    ``kind`` ("encoder", "decoder" or "cross") and ``layer`` choose the call; the forward pass fills
    ``trace``. The caller owns the probe, so a model shared between sessions keeps no state.
    """

    kind: str
    layer: int
    trace: AttentionTrace | None = None


def probe_at(probe: Probe | None, kind: str, layer: int) -> Probe | None:
    """``probe`` where it asks for ``kind`` attention in ``layer``, else None: how models route it."""
    return probe if probe is not None and (probe.kind, probe.layer) == (kind, layer) else None


def causal_mask(t_q: int, t_k: int | None = None, device: torch.device | None = None) -> Tensor:
    """Boolean ``(t_q, t_k)`` mask: query i may see keys 0..i (aligned at the end if t_k > t_q)."""
    t_k = t_q if t_k is None else t_k
    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(diagonal=t_k - t_q)


def padding_mask(ids: Tensor, pad_id: int) -> Tensor:
    """``(B, 1, 1, T)`` boolean mask that hides padding keys."""
    return (ids != pad_id)[:, None, None, :]


class MultiHeadAttention(nn.Module):
    """Multi-head attention with narrow or wide heads.

    Narrow heads (Bloem's final version, the seq2seq tutorial's translator) split the model width
    ``dim`` into ``heads`` slices of ``dim // heads``; wide heads (Bloem's first version, a Keras
    self-attention layer) give each head the full width ``dim`` and a unifying projection maps
    ``heads * dim`` back to ``dim``. Pass ``context`` for cross-attention, a boolean ``mask`` for
    padding and/or causality.

    ``forward`` returns ``(out, weights)``; ``weights`` is ``(B, heads, Tq, Tk)`` when
    ``need_weights`` is true, else None, and then the fused
    ``torch.nn.functional.scaled_dot_product_attention`` kernel does the work.
    ``head_mask`` (``(heads,)`` of 0/1 or floats) scales each head's output before the heads are
    unified, which switches heads off without touching the shared module.

    ``cache`` (a dict the caller keeps between decoding steps) makes step-by-step decoding
    incremental: cross-attention projects the fixed ``context`` to keys and values once, and
    self-attention appends the new positions' keys and values to those of the earlier ones, so
    ``x`` need only hold the new positions (with no causal mask: they come after every cached one).

    ``probe`` (a :class:`Probe`) asks for this call's internals: it takes the explicit path (as
    ``need_weights`` does) and its ``trace`` is filled with the queries, keys, values, scores, weights
    and per-head outputs.
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        *,
        wide: bool = False,
        dropout: float = 0.0,
        bias: bool = True,
        split_scale: bool = False,
    ) -> None:
        super().__init__()
        if not wide and dim % heads:
            raise ValueError(f"narrow heads need dim ({dim}) divisible by heads ({heads})")
        self.dim, self.heads, self.wide = dim, heads, wide
        self.head_dim = dim if wide else dim // heads
        inner = self.head_dim * heads
        self.to_q = nn.Linear(dim, inner, bias=bias)
        self.to_k = nn.Linear(dim, inner, bias=bias)
        self.to_v = nn.Linear(dim, inner, bias=bias)
        self.unify = nn.Linear(inner, dim, bias=bias)
        self.dropout = dropout
        self.split_scale = split_scale
        self._packed: dict[bool, tuple] = {}  # see packed_weights; not state, never saved

    def project(self, x: Tensor, context: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
        """Queries from ``x``, keys and values from ``context`` (``x`` itself when None), in one
        matrix product where they share an input, as torch.nn.MultiheadAttention packs them."""
        weight, bias = self.packed_weights(context is None)
        packed = F.linear(x if context is None else context, weight, bias).split(self.to_q.out_features, dim=-1)
        if context is None:
            return packed[0], packed[1], packed[2]
        return self.to_q(x), packed[0], packed[1]

    def packed_weights(self, with_query: bool) -> tuple[Tensor, Tensor | None]:
        """The key and value (and, ``with_query``, query) projections stacked into one weight and bias.

        Where no gradient is wanted the stack is kept and rebuilt only when a weight changes (its
        storage or its in-place version counter): step-by-step decoding otherwise copies every
        layer's weights at every step, a quarter of greedy decoding's time on CPU."""
        projections = (self.to_q, self.to_k, self.to_v) if with_query else (self.to_k, self.to_v)
        params = [t for p in projections for t in (p.weight, p.bias) if t is not None]

        def stack() -> tuple[Tensor, Tensor | None]:
            bias = torch.cat([p.bias for p in projections]) if self.to_q.bias is not None else None
            return torch.cat([p.weight for p in projections]), bias

        if torch.is_grad_enabled():
            return stack()
        stamp = tuple((t.data_ptr(), t._version) for t in params)
        kept = self._packed.get(with_query)
        if kept is None or kept[0] != stamp:
            with torch.inference_mode(False), torch.no_grad():  # ordinary tensors, usable in any mode
                kept = self._packed[with_query] = (stamp, *stack())
        return kept[1], kept[2]

    def split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.heads, self.head_dim).transpose(1, 2)  # (B, h, T, s)

    def forward(
        self,
        x: Tensor,
        context: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        need_weights: bool = False,
        head_mask: Tensor | None = None,
        cache: dict[str, Tensor] | None = None,
        probe: Probe | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        B, T, _ = x.shape
        # the keys' input, for a probe: lost for cached self-attention positions (only their k, v are kept)
        key_input = context if context is not None else (None if cache is not None and "k" in cache else x)
        if cache is not None and context is not None and "k" in cache:
            q, k, v = self.split_heads(self.to_q(x)), cache["k"], cache["v"]
        else:
            q, k, v = map(self.split_heads, self.project(x, context))
            if cache is not None:
                if "k" in cache:  # self-attention: earlier positions first
                    k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
                cache["k"], cache["v"] = k, v
        p = self.dropout if self.training else 0.0
        if need_weights or probe is not None:
            out, weights = scaled_dot_product_attention(q, k, v, mask, split_scale=self.split_scale, dropout=p)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            weights = None
            if mask is not None:
                # the fused kernel returns NaN for fully masked rows; match the reference path
                out = out.nan_to_num(0.0)
        if head_mask is not None:
            out = out * head_mask.to(out.dtype).view(1, self.heads, 1, 1)
        if probe is not None:
            probe.trace = AttentionTrace(
                x,
                key_input,
                q,
                k,
                v,
                mask,
                attention_scores(q, k, split_scale=self.split_scale),
                weights,
                out,
                self.split_scale,
            )
            weights = weights if need_weights else None
        out = out.transpose(1, 2).reshape(B, T, self.heads * self.head_dim)  # (B, T, h*s)
        return self.unify(out), weights
