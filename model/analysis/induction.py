"""Induction on the text at hand: how much a head copies forward what followed this pair of tokens last time.

The head finder scores induction on repeated random tokens (:mod:`model.analysis.heads`): on the second
copy's rows, the weight on the token after this one's earlier copy. On a model page's own input a causal
head's **induction here** is that same measure (:func:`model.analysis.head_tensors.cell_sums`) read on the
rows where induction applies (Olsson et al. 2022, "In-context Learning and Induction Heads"): a query ``i``
whose token and the token before it appeared together earlier, the pair ``(t[i-1], t[i])`` at ``(j-1, j)``
with ``j < i``; its key is ``j + 1``, the token that followed them then (the most recent such ``j``, and
only where ``j + 1 < i``: in a run like "aaa" that key is the query itself). A query whose token alone
appeared before does not count: on a character model almost every character did, and a head attending
to what followed an earlier "e" is not copying a repeat. An input with no such row has no score (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from model.analysis.head_tensors import cell_sums


def induction_rows(ids: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """``(queries, keys)``: each query ``i`` whose pair ``(ids[i-1], ids[i])`` occurred earlier, at positions
    ``(j-1, j)``, and ``j + 1`` for the most recent such ``j`` (only where ``j + 1 < i``)."""
    last: dict[tuple, int] = {}
    queries, keys = [], []
    for i in range(1, len(ids)):
        pair = (ids[i - 1], ids[i])
        j = last.get(pair)
        if j is not None and j + 1 < i:
            queries.append(i)
            keys.append(j + 1)
        last[pair] = i
    return np.array(queries, dtype=int), np.array(keys, dtype=int)


def induction_here(weights: np.ndarray, ids: Sequence) -> tuple[np.ndarray, int]:
    """``(L, H)`` induction-here scores of ``weights`` ``(L, H, T, T)`` (an array, or anything indexed ``[l, h]``
    like one) on the tokens ``ids``: the share of each applicable row's weight on its key, 0 to 1, averaged;
    and how many rows they average (0: NaN scores, the text repeats no pair of tokens)."""
    L, H, T = weights.shape[0], weights.shape[1], weights.shape[-2]
    q, k = induction_rows(ids[:T])
    if not len(q):
        return np.full((L, H), np.nan), 0
    rows, keys = torch.from_numpy(q), torch.from_numpy(k)
    # one head at a time: a long run's maps may be a causal triangle (model.core.triangle.CausalMaps), whose
    # [l, h] builds one map, where np.asarray would build every map at once in float64
    out = np.empty((L, H))
    for l in range(L):
        for h in range(H):
            w = torch.from_numpy(np.asarray(weights[l, h], dtype=np.float64))[None]  # (1, T, T): one "head"
            (total, count), _ = cell_sums(w, rows, keys)
            out[l, h] = float(total[0] / count[0])
    return out, len(q)
