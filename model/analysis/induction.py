"""Induction on the text at hand: how much a head copies forward what followed this token last time.

The head finder scores induction on repeated random tokens (:mod:`model.analysis.heads`). On a model
page's own input, a causal head's **induction here** is the same weight read on the text itself (Olsson
et al. 2022, "In-context Learning and Induction Heads", the prefix-matching pattern): for every query
``i`` whose token appeared before, with ``j`` its most recent earlier position and ``j + 1 < i``, the
weight ``a[i, j + 1]`` on the token that followed it; the score is the mean over those rows. Rows without
an earlier occurrence do not count; an input with no such row has no score (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def induction_rows(ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``(queries, keys)``: each query ``i`` with an earlier copy of its token, and ``j + 1`` for that copy's
    most recent position ``j`` (only where ``j + 1 < i``)."""
    last: dict[int, int] = {}
    queries, keys = [], []
    for i, t in enumerate(ids):
        j = last.get(int(t))
        if j is not None and j + 1 < i:
            queries.append(i)
            keys.append(j + 1)
        last[int(t)] = i
    return np.array(queries, dtype=int), np.array(keys, dtype=int)


def induction_here(weights: np.ndarray, ids: Sequence[int]) -> tuple[np.ndarray, int]:
    """``(L, H)`` induction-here scores of ``weights`` ``(L, H, T, T)`` (an array, or anything indexed ``[l, h]``
    like one) on the tokens ``ids``, and how many rows they average (0: NaN scores, the text repeats no token)."""
    L, H, T = weights.shape[0], weights.shape[1], weights.shape[-2]
    q, k = induction_rows(ids[:T])
    if not len(q):
        return np.full((L, H), np.nan), 0
    # one head at a time: a long run's maps may be a causal triangle (model.core.triangle.CausalMaps), whose
    # [l, h] builds one map, where np.asarray would build every map at once in float64
    out = np.empty((L, H))
    for l in range(L):
        for h in range(H):
            out[l, h] = np.asarray(weights[l, h], dtype=float)[q, k].mean()
    return out, len(q)
