"""What each head does over a corpus: scores pooled over every query row of every line (the head finder).

For one line, a kind's weights ``a`` are ``(layers, heads, queries, keys)`` softmax rows. Each score
below is a mean over query rows, pooled over the corpus: the sum over every applicable row of every
line divided by the number of those rows (a long line weighs more than a short one, as in HeadVis):

- ``previous`` = mean ``a[i, i-1]`` over rows i >= 1 (previous-token heads: Elhage et al. 2021,
  "A Mathematical Framework for Transformer Circuits"; TransformerLens's ``previous_token_head``).
- ``first`` = mean ``a[i, 0]`` over rows i >= 1 (every row of cross-attention, whose first row is not
  forced onto key 0): the first-token "attention sink" (Xiao et al. 2024, "Efficient Streaming
  Language Models with Attention Sinks"; Clark et al. 2019, "What Does BERT Look At?", on [CLS]/[SEP]).
- ``self`` = mean ``a[i, i]``; ``entropy`` = mean ``-sum_j a_ij log2 a_ij`` in bits (0 log 0 = 0);
  ``distance`` = mean ``sum_j a_ij |i - j|``, the expected distance in positions (Vig & Belinkov 2019,
  "Analyzing the Structure of Attention in a Transformer Language Model", mean attention distance).
- causal self-attention only, on probes ``[prefix] + r + r`` of ``n`` random distinct tokens ``r``
  repeated twice (Olsson et al. 2022, "In-context Learning and Induction Heads"): over the rows ``i``
  of the second copy, ``induction`` = mean ``a[i, i-n+1]`` (the token after this one's earlier copy)
  and ``duplicate`` = mean ``a[i, i-n]`` (this token's earlier copy).
- cross-attention only (:mod:`model.analysis.profiles`, reused): ``monotonic``, the Spearman
  correlation of query position and strongest-key position, a mean over lines; ``forward``, the share
  of consecutive queries whose strongest key does not move back, pooled over steps.

A score that does not apply to a kind (``previous`` on cross-attention, ``induction`` on a
bidirectional encoder) is NaN here and null in JSON, never 0. Each score also exists without the
sink, ``<name>_nosink``: the first position is dropped (as query and key in self-attention, as key in
cross-attention), every remaining row is renormalised to sum to 1 and the score is taken on that
matrix; a row whose weight was all on the first position (left mass <= :data:`EMPTY`) cannot be
renormalised and is left out of that head's count.

``detect_score`` is TransformerLens's ``detect_head`` similarity (transformer_lens/head_detector.py,
``compute_head_attention_similarity_score``, v4.3.0): ``mul`` = ``sum(A * P) / sum(A)`` and
``abs`` = ``1 - sum|A - P| / n`` on an ``n × n`` attention pattern ``A`` and detection pattern ``P``,
optionally with the first key column and the diagonal zeroed (its ``exclude_bos`` and
``exclude_current_token``: ``mul`` drops those cells from both sums, ``abs`` from the error while still
dividing by ``n``); TransformerLens rounds ``abs``'s error ``sum|A - P| / n`` to 3 decimals, we do not.
Its ``detect_head`` tokenizes a string with ``to_tokens``, which prepends a BOS by default, whereas the
finder reads a GPT-2 line without one: :func:`pattern_scores` is ``detect_head`` with
``cfg.default_prepend_bos = False``, so its "first key" is the line's first token. (TransformerLens 4
has no ``HookedTransformer``; tests/test_heads.py runs ``detect_head`` on a ``TransformerBridge`` of the
same weights and checks both against these scores.)

The sums are tensor reductions (:mod:`model.analysis.head_tensors`, on the maps' device in a corpus pass);
:class:`KindTally` (:mod:`model.analysis.head_tally`) pools them over a corpus.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from model.analysis.head_tally import KindTally
from model.analysis.head_tensors import (
    BASE_METRICS,
    CROSS_METRICS,
    EMPTY,
    METRICS,
    PATTERN_MAX,
    PROBE_METRICS,
    ROW_METRICS,
    applies,
    cross_sums,
    layer_sums,
    probe_layer_sums,
)
from model.analysis.measures import HELP

__all__ = ["BASE_METRICS", "CROSS_METRICS", "EMPTY", "METRICS", "PATTERN_MAX", "PROBE_METRICS", "ROW_METRICS"]
__all__ += ["KindTally", "applies", "deciles", "detect_score", "line_sums", "pattern_scores", "probe_sums"]
# A model has a head for a role only when its best head scores at least this over the corpus: this share of
# each row's weight on the role's key, several times what an even spread gives (about 0.05 on a 20-token
# row). Below it the pages name no head for the role (a translator's best "induction" head scores 0.03).
PLAYS = 0.3
CHUNK = 1 << 22  # weights a line's metrics work on at once (32 MB as float64)
METRIC_HELP = {m: HELP[m] for m in BASE_METRICS}  # the finder's help texts (model.analysis.measures)
Sums = dict[str, tuple[np.ndarray, np.ndarray]]


def line_sums(w, *, cross: bool) -> Sums:
    """Every row metric of one line's ``(L, H, Tq, Tk)`` map, with and without the sink, as (sum, count).

    Worked a block of heads at a time (every metric is one head's own): at 1,024 tokens a 12 × 12 map is
    1.2 GB as float64, so at most :data:`CHUNK` weights are held as float64. ``w`` may be an array or a
    run's :class:`~model.core.triangle.CausalMaps`; the sums are :mod:`model.analysis.head_tensors`' own,
    in float64 on the CPU (the map is read as any map: nothing is assumed of its upper triangle)."""
    L, H, Tq, Tk = w.shape
    if L * H * Tq * Tk <= CHUNK:
        return _line_sums(np.asarray(w, dtype=np.float64), cross=cross)
    step = max(1, min(H, CHUNK // (Tq * Tk)))  # heads at a time
    out: Sums = {}
    for layer in range(L):
        for h in range(0, H, step):
            block = _line_sums(np.asarray(w[layer, h : h + step], dtype=np.float64)[None], cross=cross)
            for metric, (total, count) in block.items():
                sums, counts = out.setdefault(metric, (np.zeros((L, H)), np.zeros((L, H))))
                sums[layer, h : h + step], counts[layer, h : h + step] = total[0], count[0]
    return out


def _line_sums(w: np.ndarray, *, cross: bool) -> Sums:
    """:func:`line_sums` of a float64 ``(L, H, Tq, Tk)`` map, whole: each layer one "line" of a batch."""
    L, H, Tq, Tk = w.shape
    t = torch.from_numpy(w)
    sums = layer_sums(t, [Tq] * L, cross=cross, causal=False)
    if not (Tk > 1 and (cross or Tq > 1)):  # no row is left once the sink is dropped
        sums = {m: v for m, v in sums.items() if not m.endswith("_nosink")}
    if cross and Tq > 1:
        more = cross_sums(t, [Tq] * L, [Tk] * L)
        sums |= {m: v for m, v in more.items() if Tk > 1 or not m.endswith("_nosink")}
    return {m: (s.numpy(), c.numpy()) for m, (s, c) in sums.items()}


def probe_sums(w, start: int, n: int) -> Sums:
    """``induction``/``duplicate`` of one probe's causal ``(L, H, T, T)`` map, with and without the sink
    (``start >= 1``, so that dropping position 0 leaves both copies whole)."""
    if start < 1:
        raise ValueError("a probe needs a first position before its two copies (start >= 1)")
    sums = probe_layer_sums(torch.from_numpy(np.asarray(w, dtype=np.float64)), start, n)
    return {m: (s.numpy(), c.numpy()) for m, (s, c) in sums.items()}


def detect_score(attention, pattern, *, measure: str = "mul", exclude_bos: bool = False, exclude_current=False):
    """TransformerLens's ``detect_head`` score of ``attention`` ``(..., n, n)`` against ``pattern`` ``(n, n)``
    (see the module docstring): ``mul`` = ``sum(A·P) / sum(A)``, ``abs`` = ``1 - sum|A - P| / n``."""
    a = np.array(attention, dtype=np.float64)
    p = np.asarray(pattern, dtype=np.float64)
    n = p.shape[-1]
    if p.shape != (n, n) or a.shape[-2:] != (n, n):
        raise ValueError(f"the pattern must be square and as large as the attention; got {p.shape} and {a.shape}")
    if measure not in ("mul", "abs"):
        raise ValueError(f"unknown measure {measure!r}; choose mul or abs")
    keep = np.ones((n, n))
    if exclude_bos:
        keep[:, 0] = 0
    if exclude_current:
        np.fill_diagonal(keep, 0)
    if measure == "mul":
        a = a * keep
        total = a.sum((-2, -1))
        return np.where(total > 0, (a * p).sum((-2, -1)) / np.where(total > 0, total, 1.0), np.nan)
    return 1.0 - (np.abs(a - p) * keep).sum((-2, -1)) / n


def pattern_scores(blocks: Sequence[np.ndarray], pattern, **options) -> np.ndarray:
    """Each head's :func:`detect_score` against ``pattern`` ``(n, n)``, the mean over the lines with at
    least ``n`` positions; ``blocks`` are :class:`KindTally` blocks. For causal attention a line's first
    ``n × n`` block is exactly its map on its first ``n`` tokens (nothing later is seen), so this is
    TransformerLens's ``detect_head`` on each line cut to ``n`` tokens (read without a BOS), averaged over
    the lines as it averages a list of prompts, one by one, for a named pattern (a tensor: one prompt)."""
    n = np.asarray(pattern).shape[-1]
    if not 1 <= n <= PATTERN_MAX:
        raise ValueError(f"a drawn pattern is 1 to {PATTERN_MAX} positions wide; got {n}")
    used = [b[..., :n, :n].astype(np.float64) for b in blocks if not np.isnan(b[0, 0, n - 1, 0])]
    if not used:
        raise ValueError(f"no line of the corpus has {n} positions; draw a smaller pattern")
    return np.mean([detect_score(b, pattern, **options) for b in used], axis=0)


def deciles(values: np.ndarray, k: int = 10) -> list[int]:
    """Line indices for a head's examples: the top line, then one line from the middle of each of the
    ``k`` deciles of its scores, highest decile first (HeadVis's "top activations by decile"). NaN lines
    are left out."""
    idx = np.flatnonzero(np.isfinite(values))
    if not idx.size:
        return []
    order = idx[np.argsort(-values[idx], kind="stable")]
    picks = [int(order[0])]
    for d in range(k):
        lo, hi = d * len(order) // k, (d + 1) * len(order) // k
        if hi > lo:
            picks.append(int(order[(lo + hi - 1) // 2]))
    return picks
