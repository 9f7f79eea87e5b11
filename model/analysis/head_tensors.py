"""The head finder's measures (defined in :mod:`model.analysis.heads`) as tensor reductions on the maps' own
device: nothing of a map goes to the host, only ``(lines, heads)`` sums and counts leave these functions.

One layer's maps ``w`` are ``(B, H, Tq, Tk)``, right-padded: line ``b`` has ``qlen[b]`` query rows and
``klen[b]`` keys, and its padding keys hold no weight. Every row measure is a function of three sums over
the keys of each query row ``i``, read from the map once, and of four single cells:

- ``m_i = sum_{j >= 1} w_ij`` (the weight left once the sink, key 0, is dropped), ``E_i = sum_{j >= 1}
  w_ij ln w_ij`` (0 ln 0 = 0) and, for self-attention, ``D_i = sum_j w_ij |i - j|``;
- ``w_i0``, ``w_i1``, ``w_ii`` and ``w_i,i-1``.

So ``first = w_i0``, ``self = w_ii``, ``previous = w_i,i-1``, ``distance = D_i`` and ``entropy = -(E_i +
w_i0 ln w_i0) / ln 2`` bits. Without the sink the row is ``w_ij / m_i`` and each measure follows
algebraically: ``first = w_i1 / m``, ``previous = w_i,i-1 / m``, ``self = w_ii / m``, ``distance = (D_i -
i w_i0) / m`` (the dropped key sits ``i`` positions back) and ``entropy = -(E_i / m - ln m) / ln 2``. A row
with ``m <= EMPTY`` does not count.

A causal map is exactly zero above its diagonal (a masked softmax), so its rows are read a block of
:data:`ROW_BLOCK` rows at a time, each block only up to its last row's key (about 56% of the map at 512
tokens), and there ``D_i = i (m_i + w_i0) - sum_j j w_ij``: ``m`` and ``sum_j j w_ij`` are one matrix
product. Precision: ``m`` and ``D`` in float64 (each block cast, the products ``j w_ij`` exact); ``w ln w``
and its row sum in the map's dtype (float32: its error, ~1e-7 of a row's entropy, is the float32 log's own
order); everything after in float64 (MPS has no float64: float32 there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from model.analysis.measures import finder_names, measure
from model.analysis.ranks import spearman_rows

# the finder's measures by group, read from their records (model.analysis.measures)
ROW_METRICS = finder_names("row")  # previous, first, self, entropy, distance
PROBE_METRICS = finder_names("probe")  # induction, duplicate
CROSS_METRICS = finder_names("cross")  # monotonic, forward
BASE_METRICS = ROW_METRICS + PROBE_METRICS + CROSS_METRICS
METRICS = tuple(m for name in BASE_METRICS for m in (name, f"{name}_nosink"))
EMPTY = 1e-6  # a row left with less weight than this once the sink is dropped is not renormalised
PATTERN_MAX = 8  # the largest drawn pattern: each line keeps its first PATTERN_MAX × PATTERN_MAX block
ROW_BLOCK = {"cpu": 64, "": 128}  # rows of a causal map read at once: on the CPU, and on an accelerator
CELLS = 1 << 22  # at most this many weights of a non-causal map are cast to float64 at once
LN2 = math.log(2.0)
Sums = dict[str, tuple[Tensor, Tensor]]  # metric -> (sum, count), each (..., heads)


def applies(metric: str, *, cross: bool, causal: bool) -> bool:
    """Whether ``metric`` (with or without ``_nosink``) is defined for a kind of attention (its record's kinds)."""
    return measure(metric).applies(cross=cross, causal=causal)


def accumulator(device: torch.device | str) -> torch.dtype:
    """The dtype sums are kept in on ``device``: float64, but float32 on Apple MPS (it has no float64)."""
    return torch.float32 if torch.device(device).type == "mps" else torch.float64


def row_terms(w: Tensor, *, causal: bool, cross: bool) -> dict[str, Tensor]:
    """Per row of ``w`` ``(B, H, Tq, Tk)``, each ``(B, H, Tq)`` in the accumulator dtype: ``m`` (the weight on
    keys >= 1), ``E1`` and ``E0`` (``sum_j w_ij ln w_ij`` over keys >= 1 and the first key's term) and, for
    self-attention, ``D``. Summed over keys >= 1 directly, not as ``S - w_i0``: a sink row's ``m`` is tiny."""
    acc = accumulator(w.device)
    B, H, Tq, Tk = w.shape
    tiny = torch.finfo(w.dtype).tiny
    pos = torch.arange(Tk, device=w.device, dtype=acc)
    weights = torch.stack([(pos > 0).to(acc), pos], 1)  # (Tk, 2): sum_{j >= 1} w_ij and sum_j j w_ij
    step = ROW_BLOCK["cpu" if w.device.type == "cpu" else ""] if causal else max(1, CELLS // max(1, B * H * Tk))
    parts: dict[str, list[Tensor]] = {"m": [], "E1": [], "E0": [], "D": []}
    for r0 in range(0, Tq, step):
        r1 = min(Tq, r0 + step)
        v = w[..., r0:r1, : (r1 if causal else Tk)]
        lw = v.clamp_min(tiny)
        lw.log_()
        lw.mul_(v)  # w ln w, 0 where w is 0
        parts["E1"].append(lw[..., 1:].sum(-1))
        parts["E0"].append(lw[..., 0])
        x = v.to(acc)
        if causal:  # keys past the block's last row hold no weight: sum_j j w_ij is a matrix product
            sd = x @ weights[: v.shape[-1]]
            parts["m"].append(sd[..., 0])
            parts["D"].append(pos[r0:r1] * (sd[..., 0] + x[..., 0]) - sd[..., 1])
        else:
            parts["m"].append(x[..., 1:].sum(-1))
            if not cross:
                parts["D"].append((x * (pos[r0:r1, None] - pos[None, :]).abs()).sum(-1))
    return {k: torch.cat(v, -1).to(acc) for k, v in parts.items() if v}


def _pooled(names: Sequence[str], values: Sequence[Tensor], rows: Sequence[Tensor]) -> Sums:
    """metric -> (sum over the rows it applies to, their count), each ``(..., heads)``: ``values`` and their
    ``rows`` masks ``(..., heads, rows)`` stacked, so that every metric is one reduction."""
    vals = torch.stack(torch.broadcast_tensors(*values))
    use = torch.stack([r.expand_as(vals[0]) for r in rows])
    sums, counts = torch.where(use, vals, 0).sum(-1), use.sum(-1).to(vals.dtype)
    return {name: (sums[k], counts[k]) for k, name in enumerate(names)}


def layer_sums(w: Tensor, qlen: Sequence[int], *, cross: bool, causal: bool) -> Sums:
    """Every row measure of one layer's right-padded maps ``w`` ``(B, H, Tq, Tk)`` (line ``b`` has ``qlen[b]``
    rows), with and without the sink: metric -> ``(B, H)`` sums and counts, on ``w``'s device."""
    t = row_terms(w, causal=causal, cross=cross)
    acc = t["m"].dtype
    B, H, Tq, Tk = w.shape
    i = torch.arange(Tq, device=w.device)
    valid = (i[None, :] < torch.tensor(list(qlen), device=w.device)[:, None])[:, None, :]  # (B, 1, Tq)
    c0 = w[..., 0].to(acc)
    c1 = w[..., 1].to(acc) if Tk > 1 else torch.zeros_like(c0)
    kept = t["m"] > EMPTY
    m = torch.where(kept, t["m"], 1.0)
    entropy = -(t["E1"] + t["E0"]) / LN2
    entropy_nosink = -(t["E1"] / m - torch.log(m)) / LN2
    if cross:
        names = ("first", "entropy", "first_nosink", "entropy_nosink")
        return _pooled(names, (c0, entropy, c1 / m, entropy_nosink), (valid, valid, valid & kept, valid & kept))
    diag = w.diagonal(dim1=-2, dim2=-1).to(acc)
    sub = F.pad(w.diagonal(offset=-1, dim1=-2, dim2=-1), (1, 0)).to(acc)
    one, two = valid & (i >= 1), valid & (i >= 2)
    nosink = torch.stack([sub, c1, diag, t["D"] - c0 * i]) / m
    names = ("previous", "first", "self", "entropy", "distance")
    names += ("previous_nosink", "first_nosink", "self_nosink", "distance_nosink", "entropy_nosink")
    values = (sub, c0, diag, entropy, t["D"], *nosink, entropy_nosink)
    return _pooled(names, values, (one, one, valid, valid, valid, two & kept, two & kept, *[one & kept] * 3))


def cross_sums(w: Tensor, qlen: Sequence[int], klen: Sequence[int]) -> Sums:
    """``monotonic`` and ``forward`` (with and without the first key) of one layer's cross-attention
    ``(B, H, Tq, Tk)``, each line cut to its own queries and keys: ``(B, H)`` sums and counts; a line with
    one query has none. ``monotonic`` counts 1 a line; ``forward`` counts its ``n - 1`` steps."""
    acc = accumulator(w.device)
    B, H = w.shape[:2]
    out = {m: [torch.zeros(B, H, dtype=acc, device=w.device) for _ in "sc"] for m in CROSS_METRICS}
    out |= {f"{m}_nosink": [torch.zeros(B, H, dtype=acc, device=w.device) for _ in "sc"] for m in CROSS_METRICS}
    for b, (n, k) in enumerate(zip(qlen, klen)):
        if n < 2:
            continue
        a = w[b, :, :n, :k]
        for suffix, top in (("", a.argmax(-1)), ("_nosink", a[..., 1:].argmax(-1) if k > 1 else None)):
            if top is None:
                continue
            rho = spearman_rows(torch.arange(n, device=w.device), top, dtype=acc)
            stuck = (top == top[..., :1]).all(-1)  # the strongest key never moves: no order, 0 (rho is NaN)
            out["monotonic" + suffix][0][b] = torch.where(stuck, 0.0, rho)
            out["monotonic" + suffix][1][b] = 1.0
            out["forward" + suffix][0][b] = (top.diff(dim=-1) >= 0).sum(-1).to(acc)
            out["forward" + suffix][1][b] = float(n - 1)
    return {m: (s, c) for m, (s, c) in out.items()}


def probe_layer_sums(w: Tensor, start: int, n: int) -> Sums:
    """``induction`` and ``duplicate``, with and without the sink, of probe maps ``(..., H, T, T)`` whose
    copies of ``n`` tokens start at ``start >= 1`` and ``start + n``: ``(..., H)`` sums and counts over the
    second copy's rows ``i`` of ``w[i, i - n + 1]`` and ``w[i, i - n]``."""
    rows = torch.arange(start + n, start + 2 * n, device=w.device)
    ind, dup = cell_sums(w, rows, rows - n + 1), cell_sums(w, rows, rows - n)
    return {"induction": ind[0], "duplicate": dup[0], "induction_nosink": ind[1], "duplicate_nosink": dup[1]}


def cell_sums(w: Tensor, rows: Tensor, keys: Tensor) -> tuple[tuple[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """The weight each query row ``rows[r]`` of maps ``(..., H, T, T)`` puts on its key ``keys[r]``, pooled
    over those rows, as ``(sum, count)`` without and with the sink dropped, each ``(..., H)``: the probes'
    ``induction`` and ``duplicate`` (:func:`probe_layer_sums`) and induction on a text's own repeats
    (:mod:`model.analysis.induction`) are this one measure on different rows."""
    acc = accumulator(w.device)
    part, at = w[..., rows, :], torch.arange(len(rows), device=w.device)  # (..., H, R, T) and 0..R-1
    cell = part[..., at, keys].to(acc)
    m = part[..., 1:].sum(-1, dtype=acc)
    kept = m > EMPTY
    m = torch.where(kept, m, 1.0)
    got = _pooled(("w", "w_nosink"), (cell, cell / m), (torch.ones_like(kept), kept))
    return got["w"], got["w_nosink"]


def first_blocks(layers: Sequence[Tensor], qlen: Sequence[int], klen: Sequence[int]) -> Tensor:
    """Each line's first ``PATTERN_MAX × PATTERN_MAX`` block ``(B, L, H, B', B')`` as float16, NaN past the
    line's own queries and keys."""
    B = PATTERN_MAX
    block = torch.stack([w[..., :B, :B] for w in layers], 1)
    block = F.pad(block, (0, B - block.shape[-1], 0, B - block.shape[-2]), value=float("nan"))
    i = torch.arange(B, device=block.device)
    q = torch.tensor(list(qlen), device=block.device)[:, None, None, None, None]
    k = torch.tensor(list(klen), device=block.device)[:, None, None, None, None]
    inside = (i[:, None] < q) & (i[None, :] < k)
    return torch.where(inside, block, float("nan")).to(torch.float16)


def decile_picks(values: Tensor, k: int = 10) -> tuple[Tensor, Tensor]:
    """Each head's examples from per-line scores ``values`` ``(N, ...)``: the top line, then the line in the
    middle of each of the ``k`` deciles, highest first (NaN lines left out), as line indices ``(k + 1, ...)``
    and whether each pick exists (:func:`model.analysis.heads.deciles`, for every head at once)."""
    finite = torch.isfinite(values)
    order = torch.sort(torch.where(finite, -values, float("inf")), dim=0, stable=True).indices
    n = finite.sum(0)  # (L, H)
    d = torch.arange(k, device=values.device).view(-1, *[1] * n.dim())
    lo, hi = d * n // k, (d + 1) * n // k
    pos = torch.cat([torch.zeros_like(n)[None], ((lo + hi - 1) // 2).clamp_min(0)])
    ok = torch.cat([(n > 0)[None], hi > lo])
    return order.gather(0, pos.clamp(max=max(0, values.shape[0] - 1))), ok
