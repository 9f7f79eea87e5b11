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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from model.analysis.profiles import forward_steps, monotonicity

ROW_METRICS = ("previous", "first", "self", "entropy", "distance")
PROBE_METRICS = ("induction", "duplicate")
CROSS_METRICS = ("monotonic", "forward")
BASE_METRICS = ROW_METRICS + PROBE_METRICS + CROSS_METRICS
METRICS = tuple(m for name in BASE_METRICS for m in (name, f"{name}_nosink"))
CHUNK = 1 << 22  # weights a line's metrics work on at once (32 MB as float64)
EMPTY = 1e-6  # a row left with less weight than this once the sink is dropped is not renormalised
PATTERN_MAX = 8  # the largest drawn pattern: each line keeps its first PATTERN_MAX × PATTERN_MAX block
METRIC_HELP = {
    "previous": "mean weight on the token just before the query",
    "first": "mean weight on the first token (the sink)",
    "self": "mean weight on the query's own position",
    "entropy": "bits: 0 = each query looks at one key",
    "distance": "mean distance, in positions, between a query and what it looks at",
    "induction": "repeated random tokens: weight on the token after this one's earlier copy",
    "duplicate": "repeated random tokens: weight on this token's earlier copy",
    "monotonic": "cross-attention: Spearman correlation of query and strongest-key positions",
    "forward": "cross-attention: share of steps whose strongest key does not move back",
}


def applies(metric: str, *, cross: bool, causal: bool) -> bool:
    """Whether ``metric`` (with or without ``_nosink``) is defined for a kind of attention."""
    base = metric.removesuffix("_nosink")
    if base in CROSS_METRICS:
        return cross
    if base in PROBE_METRICS:
        return causal and not cross
    return base in ("first", "entropy") or not cross


def drop_sink(w: np.ndarray, *, cross: bool) -> tuple[np.ndarray, np.ndarray]:
    """``w`` without its first position (keys only for cross-attention), each row renormalised; and
    ``(..., rows)`` bool, the rows that kept some weight (the others are zero and must not count)."""
    v = w[..., 1:] if cross else w[..., 1:, 1:]
    mass = v.sum(-1, keepdims=True)
    kept = mass[..., 0] > EMPTY
    return np.where(mass > EMPTY, v / np.where(mass > EMPTY, mass, 1.0), 0.0), kept


def row_values(w: np.ndarray, *, cross: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per query row of ``w`` ``(..., Tq, Tk)``: metric -> (values ``(..., Tq)``, rows it applies to ``(Tq,)``)."""
    Tq, Tk = w.shape[-2:]
    rows = np.arange(Tq)
    p = np.clip(w, 0.0, None)
    out = {
        "first": (w[..., 0], rows >= (0 if cross else 1)),
        "entropy": (-(p * np.log2(np.where(p > 0, p, 1.0))).sum(-1), np.ones(Tq, bool)),
    }
    if not cross:
        prev = np.zeros(w.shape[:-1])
        prev[..., 1:] = np.diagonal(w, offset=-1, axis1=-2, axis2=-1)
        out["previous"] = (prev, rows >= 1)
        out["self"] = (np.diagonal(w, axis1=-2, axis2=-1), np.ones(Tq, bool))
        out["distance"] = ((w * np.abs(rows[:, None] - np.arange(Tk)[None, :])).sum(-1), np.ones(Tq, bool))
    return out


def probe_values(w: np.ndarray, start: int, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per query row of a probe's causal map ``w`` ``(..., T, T)`` whose copies of ``n`` tokens start at
    ``start`` and ``start + n``: ``induction`` and ``duplicate`` and the rows (the second copy's) they apply to."""
    T = w.shape[-1]
    rows = np.arange(T)
    second = (rows >= start + n) & (rows < start + 2 * n)
    ind, dup = np.zeros(w.shape[:-1]), np.zeros(w.shape[:-1])
    i = rows[second]
    ind[..., i] = w[..., i, i - n + 1]
    dup[..., i] = w[..., i, i - n]
    return {"induction": (ind, second), "duplicate": (dup, second)}


def _pooled(values: dict[str, tuple[np.ndarray, np.ndarray]], kept: np.ndarray | None, suffix: str) -> dict:
    """metric -> (sum over applicable rows ``(L, H)``, their count ``(L, H)``)."""
    out = {}
    for name, (vals, rows) in values.items():
        use = np.broadcast_to(rows, vals.shape) if kept is None else kept & rows
        out[name + suffix] = ((vals * use).sum(-1), use.sum(-1).astype(float))
    return out


def line_sums(w, *, cross: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every row metric of one line's ``(L, H, Tq, Tk)`` map, with and without the sink, as (sum, count).

    Worked a block of heads at a time (every metric is one head's own): at 1,024 tokens a 12 × 12 map is
    1.2 GB as float64 and each metric copies it, so at most :data:`CHUNK` weights are held as float64.
    ``w`` may be an array or a run's :class:`~model.core.triangle.CausalMaps`."""
    L, H, Tq, Tk = w.shape
    if L * H * Tq * Tk <= CHUNK:
        return _line_sums(np.asarray(w, dtype=np.float64), cross=cross)
    step = max(1, min(H, CHUNK // (Tq * Tk)))  # heads at a time
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for layer in range(L):
        for h in range(0, H, step):
            block = _line_sums(np.asarray(w[layer, h : h + step], dtype=np.float64)[None], cross=cross)
            for metric, (total, count) in block.items():
                sums, counts = out.setdefault(metric, (np.zeros((L, H)), np.zeros((L, H))))
                sums[layer, h : h + step], counts[layer, h : h + step] = total[0], count[0]
    return out


def _line_sums(w: np.ndarray, *, cross: bool) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`line_sums` of a float64 ``(L, H, Tq, Tk)`` map, whole."""
    out = _pooled(row_values(w, cross=cross), None, "")
    if w.shape[-1] > 1 and (cross or w.shape[-2] > 1):
        v, kept = drop_sink(w, cross=cross)
        out.update(_pooled(row_values(v, cross=cross), kept, "_nosink"))
    if cross and w.shape[-2] > 1:
        one = np.ones(w.shape[:-2])
        out["monotonic"] = (monotonicity(w), one)
        out["forward"] = (forward_steps(w) * (w.shape[-2] - 1), one * (w.shape[-2] - 1))
        if w.shape[-1] > 1:
            out["monotonic_nosink"] = (monotonicity(w[..., 1:]), one)
            out["forward_nosink"] = (forward_steps(w[..., 1:]) * (w.shape[-2] - 1), one * (w.shape[-2] - 1))
    return out


def probe_sums(w, start: int, n: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``induction``/``duplicate`` of one probe's causal ``(L, H, T, T)`` map, with and without the sink
    (``start >= 1``, so that dropping position 0 leaves both copies whole)."""
    if start < 1:
        raise ValueError("a probe needs a first position before its two copies (start >= 1)")
    w = np.asarray(w, dtype=np.float64)
    out = _pooled(probe_values(w, start, n), None, "")
    v, kept = drop_sink(w, cross=False)
    out.update(_pooled(probe_values(v, start - 1, n), kept, "_nosink"))
    return out


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


@dataclass
class KindTally:
    """Running sums of one kind of attention over a corpus: nothing of a line's map is kept but its
    per-head scores (for the examples by decile) and, for a square kind, its first ``PATTERN_MAX`` block."""

    name: str
    cross: bool
    causal: bool
    shape: tuple[int, int]  # (layers, heads)
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    counts: dict[str, np.ndarray] = field(default_factory=dict)
    per_line: dict[str, list[np.ndarray]] = field(default_factory=dict)  # metric -> one (L, H) per line
    blocks: list[np.ndarray] = field(default_factory=list)  # per line (L, H, B, B) float16, NaN past the line
    lines: int = 0

    def _add(self, sums: dict) -> None:
        for name, (s, c) in sums.items():
            self.sums[name] = self.sums.get(name, 0.0) + s
            self.counts[name] = self.counts.get(name, 0.0) + c

    def add_line(self, w: np.ndarray) -> None:
        """One line's ``(L, H, Tq, Tk)`` map. Every metric gets one per-line entry for every line, NaN where
        the line has none (a one-token line has no row left once the sink is dropped)."""
        sums = line_sums(w, cross=self.cross)
        self._add(sums)
        nan = np.full(self.shape, np.nan, dtype=np.float32)
        for name in sums.keys() - self.per_line.keys():
            self.per_line[name] = [nan] * self.lines
        for name, values in self.per_line.items():
            s, c = sums.get(name, (None, None))
            values.append(nan if s is None else np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan).astype(np.float32))
        self.lines += 1
        if not self.cross:
            B = min(PATTERN_MAX, w.shape[-1])
            block = np.full((*w.shape[:2], PATTERN_MAX, PATTERN_MAX), np.nan, dtype=np.float16)
            block[..., :B, :B] = w[..., :B, :B]
            self.blocks.append(block)

    def reorder(self, order: Sequence[int]) -> None:
        """Put the lines read so far in ``order`` (line ``i`` becomes the ``order[i]``-th read)."""
        self.per_line = {m: [v[i] for i in order] for m, v in self.per_line.items()}
        self.blocks = [self.blocks[i] for i in order] if self.blocks else []

    def add_probe(self, w: np.ndarray, start: int, n: int) -> None:
        self._add(probe_sums(w, start, n))

    def scores(self) -> dict[str, np.ndarray]:
        """metric -> ``(L, H)`` pooled means; NaN where the metric does not apply or had no rows."""
        out = {}
        for m in METRICS:
            if m in self.sums and applies(m, cross=self.cross, causal=self.causal):
                c = self.counts[m]
                out[m] = np.where(c > 0, self.sums[m] / np.where(c > 0, c, 1.0), np.nan)
            else:
                out[m] = np.full(self.shape, np.nan)
        return out


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
