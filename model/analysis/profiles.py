"""Head profiles: a handful of numbers per attention head that say what kind of head it is.

For one input, every head of every layer gets these metrics, each a mean over the query rows of
its ``(queries, keys)`` weights ``w`` (rows are softmax outputs that sum to 1):

- ``entropy``: ``-sum_j w_ij log2 w_ij`` in bits; 0 when each query looks at a single key,
  ``log2(T)`` when it spreads evenly over ``T`` keys.
- ``previous``: ``w[i, i-1]`` over the queries that have a previous token (i >= 1).
- ``self``: ``w[i, i]``, the diagonal.
- ``first``: ``w[i, 0]``, the first key (often ``<sos>`` or the first word: a "no-op" sink).
- ``special``: the total weight on special keys (``<sos>``, ``<eos>``, ``<pad>``, ``<unk>`` and
  words the model read as ``<unk>``).
- ``monotonic`` (cross-attention only): the Spearman rank correlation between the query position
  ``i`` and the position of its strongest key ``argmax_j w_ij``. 1: the alignment walks forward
  through the source in order; -1: backward; 0: no order, including a head whose strongest key
  never moves (:func:`~model.analysis.ranks.spearman` itself is NaN on such a constant row).
- ``forward`` (cross-attention only): the share of consecutive queries ``(i, i+1)`` whose
  strongest key does not move backward (1 for any monotonic alignment, also a constant one).

``previous`` and ``self`` need self-attention (the same tokens on both axes); ``monotonic`` and
``forward`` need at least two queries. A metric that does not apply is NaN. Nothing here imports
streamlit: :func:`head_profiles` returns arrays, and pages turn them into tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model.analysis.measures import HELP, profile_names
from model.analysis.ranks import spearman

# the columns for self- and cross-attention and their help, read from the measures' records
SELF_METRICS = profile_names(cross=False)  # entropy, previous, self, first, special
CROSS_METRICS = profile_names(cross=True)  # entropy, first, special, monotonic, forward
METRIC_HELP = {m: HELP[m] for m in dict.fromkeys(SELF_METRICS + CROSS_METRICS)}


def _as_array(weights) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().to("cpu", torch.float32).numpy()
    return np.asarray(weights, dtype=np.float64)


def entropy_bits(w: np.ndarray) -> np.ndarray:
    """``(..., Tq, Tk)`` -> ``(...)``: the mean over query rows of each row's entropy in bits."""
    p = np.clip(w, 0.0, None)
    logs = np.log2(np.where(p > 0, p, 1.0))  # 0 · log 0 counts as 0
    return (-(p * logs).sum(-1)).mean(-1)


def previous_token(w: np.ndarray) -> np.ndarray:
    """Mean of ``w[i, i-1]`` over queries i >= 1; NaN with a single token."""
    if w.shape[-2] < 2:
        return np.full(w.shape[:-2], np.nan)
    return np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(-1)


def self_weight(w: np.ndarray) -> np.ndarray:
    """Mean of the diagonal ``w[i, i]``."""
    return np.diagonal(w, axis1=-2, axis2=-1).mean(-1)


def first_token(w: np.ndarray) -> np.ndarray:
    """Mean weight on key 0."""
    return w[..., 0].mean(-1)


def special_weight(w: np.ndarray, special: Sequence[bool]) -> np.ndarray:
    """Mean over queries of the total weight on the keys flagged in ``special``."""
    mask = np.asarray(special, dtype=bool)
    return w[..., mask].sum(-1).mean(-1)


def monotonicity(w: np.ndarray) -> np.ndarray:
    """``(..., Tq, Tk)`` -> ``(...)``: Spearman correlation of query position and argmax key position; NaN
    with one query. A head whose strongest key never moves has no Spearman (a constant row, see
    :mod:`model.analysis.ranks`): it keeps no order, so it counts as 0 here."""
    strongest = w.argmax(-1).reshape(-1, w.shape[-2])
    positions = np.arange(w.shape[-2])
    stuck = lambda row: len(row) > 1 and (row == row[0]).all()
    return np.array([0.0 if stuck(row) else spearman(positions, row) for row in strongest]).reshape(w.shape[:-2])


def forward_steps(w: np.ndarray) -> np.ndarray:
    """Share of consecutive queries whose argmax key does not move backward; NaN with one query."""
    if w.shape[-2] < 2:
        return np.full(w.shape[:-2], np.nan)
    strongest = w.argmax(-1)
    return (np.diff(strongest, axis=-1) >= 0).mean(-1)


# each profile measure's computation on ``(..., Tq, Tk)`` weights and the special-key flags
COMPUTE = {
    "entropy": lambda w, special: entropy_bits(w),
    "previous": lambda w, special: previous_token(w),
    "self": lambda w, special: self_weight(w),
    "first": lambda w, special: first_token(w),
    "special": special_weight,
    "monotonic": lambda w, special: monotonicity(w),
    "forward": lambda w, special: forward_steps(w),
}


@dataclass(frozen=True, eq=False)
class HeadProfiles:
    """Metric name -> ``(layers, heads)`` array, for one attention kind of one input."""

    metrics: dict[str, np.ndarray]
    cross: bool  # cross-attention: monotonic/forward instead of previous/self

    @property
    def shape(self) -> tuple[int, int]:
        return next(iter(self.metrics.values())).shape

    def rows(self) -> list[dict[str, float]]:
        """One dict per head, layer by layer: ``{"layer", "head", <metric>: value, ...}``."""
        L, H = self.shape
        return [
            {"layer": l, "head": h, **{name: float(m[l, h]) for name, m in self.metrics.items()}}
            for l in range(L)
            for h in range(H)
        ]

    def matrix(self, names: Sequence[str] | None = None) -> np.ndarray:
        """``(layers · heads, metrics)``, heads in the order of :meth:`rows`."""
        names = list(self.metrics) if names is None else list(names)
        return np.stack([self.metrics[n].reshape(-1) for n in names], axis=-1)


def head_profiles(weights, *, special: Sequence[bool] | None = None, cross: bool = False) -> HeadProfiles:
    """Profile every head of ``weights`` ``(layers, heads, queries, keys)`` (array or tensor).

    ``special`` flags the special keys (default: none); ``cross`` says the queries and keys are
    different sequences (the translator's cross-attention). Raises ``ValueError`` saying what to fix.
    """
    w = _as_array(weights)
    if w.ndim != 4:
        raise ValueError(f"weights must be (layers, heads, queries, keys); got shape {w.shape}")
    L, H, Tq, Tk = w.shape
    if not (L and H and Tq and Tk):
        raise ValueError(f"weights have an empty dimension: shape {w.shape}")
    if not cross and Tq != Tk:
        raise ValueError(f"self-attention must be square; got {Tq} queries and {Tk} keys (pass cross=True)")
    special = [False] * Tk if special is None else list(special)
    if len(special) != Tk:
        raise ValueError(f"{len(special)} special-token flags were given for {Tk} keys")
    names = CROSS_METRICS if cross else SELF_METRICS
    return HeadProfiles({n: np.asarray(COMPUTE[n](w, special), dtype=float) for n in names}, cross)


def standardise(x: np.ndarray) -> np.ndarray:
    """Each column minus its mean, divided by its standard deviation; constant columns become 0."""
    x = np.asarray(x, dtype=float)
    std = x.std(axis=0)
    return np.where(std > 0, (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)


def comparable_metrics(profiles: HeadProfiles) -> list[str]:
    """The metrics defined (finite) for every head: the ones a distance can use."""
    return [name for name, m in profiles.metrics.items() if np.isfinite(m).all()]


def nearest_heads(profiles: HeadProfiles, layer: int, head: int, k: int = 5) -> list[dict[str, float]]:
    """The ``k`` heads closest to ``(layer, head)``: Euclidean distance between standardised metric
    vectors (each metric scaled to mean 0, standard deviation 1 over all heads, so bits and
    fractions weigh alike). Ties keep layer-then-head order; the head itself is left out."""
    L, H = profiles.shape
    if not (0 <= layer < L and 0 <= head < H):
        raise ValueError(f"head ({layer}, {head}) does not exist; layers 0..{L - 1}, heads 0..{H - 1}")
    names = comparable_metrics(profiles)
    if not names:
        raise ValueError("no metric is defined for every head, so heads cannot be compared")
    z = standardise(profiles.matrix(names))
    me = layer * H + head
    dist = np.sqrt(((z - z[me]) ** 2).sum(axis=1))
    order = sorted((i for i in range(L * H) if i != me), key=lambda i: (round(float(dist[i]), 12), i))
    return [{"layer": i // H, "head": i % H, "distance": float(dist[i])} for i in order[:k]]


def neighbourhood(profiles: HeadProfiles, layer: int, head: int, k: int = 5) -> list[dict]:
    """``(layer, head)`` itself (distance 0), then its ``k`` nearest heads (:func:`nearest_heads`): each with
    its layer, head, distance, every metric and ``"z"``, its standardised vector over
    :func:`comparable_metrics` (the one the distance is measured on)."""
    H = profiles.shape[1]
    near = nearest_heads(profiles, layer, head, k=k)
    z = standardise(profiles.matrix(comparable_metrics(profiles)))
    rows = profiles.rows()
    heads = [{"layer": layer, "head": head, "distance": 0.0}, *near]
    return [{**rows[n["layer"] * H + n["head"]], **n, "z": z[n["layer"] * H + n["head"]]} for n in heads]
