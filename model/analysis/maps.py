"""Attention analysis in plain torch: head means, rollout, dropping tokens, the causal mask step by step.

Everything here reads a model without changing it (no hooks, no mode switches), so the app can
call it on the one cached model that every session shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from model.core.results import AttentionKind
from model.nets.attention import Probe, causal_mask
from model.nets.generator import Generator


def mean_over_heads(weights: Tensor) -> Tensor:
    """``(..., heads, Tq, Tk)`` -> ``(..., Tq, Tk)``."""
    if weights.dim() < 3:
        raise ValueError(f"weights must be (..., heads, queries, keys); got shape {tuple(weights.shape)}")
    return weights.mean(dim=-3)


def renormalise_rows(weights: Tensor) -> Tensor:
    """Divide each row (last dimension) by its sum; rows that sum to zero stay zero."""
    total = weights.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, weights / total.clamp(min=torch.finfo(weights.dtype).tiny), 0.0)


def attention_rollout(layers: Sequence[Tensor]) -> Tensor:
    """Attention rollout (Abnar & Zuidema, 2020) over self-attention layers, first layer first.

    Each layer is ``(..., heads, T, T)``. Heads are averaged, the identity is added for the
    residual connection and rows are renormalised, then the layers are multiplied from the
    first upward: row i of the result ``(..., T, T)`` says how much of input token j flows into
    position i at the top. Every row sums to 1.
    """
    if not layers:
        raise ValueError("attention rollout needs at least one layer of attention weights")
    rollout = None
    for i, w in enumerate(layers):
        a = mean_over_heads(w)
        if a.size(-1) != a.size(-2):
            raise ValueError(f"layer {i}: rollout needs square self-attention; got {tuple(a.shape[-2:])}")
        a = renormalise_rows(a + torch.eye(a.size(-1), dtype=a.dtype, device=a.device))
        if rollout is not None and rollout.shape != a.shape:
            raise ValueError(f"layer {i} has shape {tuple(a.shape)}, layer 0 had {tuple(rollout.shape)}")
        rollout = a if rollout is None else a @ rollout
    return rollout


def drop_tokens(weights: Tensor, keep_queries: Sequence[bool], keep_keys: Sequence[bool] | None = None) -> Tensor:
    """Remove the query rows and key columns not kept, then renormalise each row over the kept keys.

    ``weights`` is ``(..., Tq, Tk)``; ``keep_keys`` defaults to ``keep_queries`` (self-attention).
    A row whose kept keys had no weight at all stays zero rather than becoming NaN.
    """
    keep_keys = keep_queries if keep_keys is None else keep_keys
    Tq, Tk = weights.shape[-2:]
    if len(keep_queries) != Tq or len(keep_keys) != Tk:
        raise ValueError(
            f"weights have {Tq} queries and {Tk} keys but {len(keep_queries)} query and "
            f"{len(keep_keys)} key flags were given"
        )
    q = torch.as_tensor(list(keep_queries), dtype=torch.bool, device=weights.device)
    k = torch.as_tensor(list(keep_keys), dtype=torch.bool, device=weights.device)
    return renormalise_rows(weights[..., q, :][..., k])


@dataclass
class CausalSteps:
    """One head's causal attention, step by step; each tensor is ``(B, T, T)`` except ``mask``."""

    scores: Tensor  # q·k / sqrt(s), before masking
    mask: Tensor  # (T, T) bool: True where the query may see the key (itself and the past)
    masked: Tensor  # scores with -inf where the mask is False
    weights: Tensor  # softmax of the masked scores: what the model's forward returns


@torch.no_grad()
def causal_steps(model: Generator, ids: Tensor, layer: int, head: int) -> CausalSteps:
    """Head ``head`` of layer ``layer`` of a generator, step by step, from the model's own forward pass
    (a :class:`~model.nets.attention.Probe` of that layer: no copy of the attention arithmetic here).
    The softmax is ``model(ids, return_attention=True)``'s weights for that layer and head."""
    c = model.config
    if model.training:
        raise ValueError("causal_steps explains the model in eval mode; call model.eval() first")
    if not 0 <= layer < len(model.blocks):
        raise ValueError(f"layer {layer} does not exist; the model has layers 0..{len(model.blocks) - 1}")
    if not 0 <= head < c.heads:
        raise ValueError(f"head {head} does not exist; each layer has heads 0..{c.heads - 1}")
    T = ids.size(1)
    if not 0 < T <= c.block_size:
        raise ValueError(f"ids have {T} positions; give 1..{c.block_size} (the context length)")
    probe = Probe("encoder", layer)
    model(ids, probe=probe)
    t = probe.trace
    scores, mask = t.scores[:, head], causal_mask(T, device=ids.device)
    return CausalSteps(scores, mask, scores.masked_fill(~mask, float("-inf")), t.weights[:, head])


@torch.no_grad()
def last_query_attention(model: Generator, ids: Tensor, *, head_mask: Tensor | None = None) -> list[Tensor]:
    """What the last position of ``ids`` ``(B, T)`` attended to: ``(B, heads, T)`` per layer.

    This is the decoding step that produced the next character, so ``ids`` is cut to the
    model's context length from the left, as ``generate`` does.
    """
    if ids.size(1) == 0:
        raise ValueError("ids are empty; give at least one position")
    _, maps = model(ids[:, -model.config.block_size :], return_attention=True, head_mask=head_mask)
    return [w[:, :, -1] for w in maps.encoder]


def without_special(kind: AttentionKind) -> AttentionKind:
    """``kind`` with its special tokens (and words read as ``<unk>``) removed from both axes and each row
    renormalised over the keys that remain. Self-attention drops the same positions from the queries;
    cross-attention keeps every query."""
    keep_keys = [not s for s in kind.special]
    keep_queries = [True] * len(kind.queries) if kind.cross else keep_keys
    w = drop_tokens(torch.from_numpy(np.asarray(kind.weights)), keep_queries, keep_keys).numpy()
    pick = lambda xs, keep: [x for x, k in zip(xs, keep) if k]  # noqa: E731
    mask = kind.mask[np.ix_(keep_queries, keep_keys)]
    return replace(
        kind,
        weights=np.ascontiguousarray(w, dtype=np.float32),
        queries=pick(kind.queries, keep_queries),
        keys=pick(kind.keys, keep_keys),
        mask=mask,
        special=[False] * sum(keep_keys),
    )


def rollout_of(kind: AttentionKind) -> np.ndarray:
    """Attention rollout of a self-attention kind, ``(tokens, tokens)``."""
    return attention_rollout([torch.from_numpy(w)[None] for w in kind.weights])[0].numpy()
