"""Spearman's rank correlation, once: for two sequences (numpy) and for many rows at once (torch, on the rows'
own device). Head profiles and the head finder (a cross-attention head's ``monotonic`` alignment) and the
contributions' rank agreement (:mod:`model.analysis.contributions`) all read it.

A constant sequence has no ranks to correlate (every value ties, the ranks' spread is 0 and Pearson's formula
divides 0 by 0), so its Spearman is **undefined: NaN**, as below two points. Callers that give a constant row a
meaning say so where they use it: ``monotonic`` reads a head whose strongest key never moves as 0, "no order"
(:func:`model.analysis.profiles.monotonicity`, :func:`model.analysis.head_tensors.cross_sums`), and the
contributions' agreement leaves such a layer out of its mean (``nanmean``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor


def ranks(x: Sequence[float]) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their ranks."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for value in np.unique(x):
        tied = x == value
        r[tied] = r[tied].mean()
    return r


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho, Pearson's correlation of the ranks (Spearman 1904), ties sharing their mean rank;
    NaN below two points or when either sequence is constant (see the module docstring)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) != len(y):
        raise ValueError(f"spearman needs sequences of equal length; got {len(x)} and {len(y)}")
    if len(x) < 2:
        return float("nan")
    rx, ry = ranks(x) - (len(x) + 1) / 2, ranks(y) - (len(y) + 1) / 2
    denom = np.sqrt((rx**2).sum() * (ry**2).sum())
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")


def _row_ranks(y: Tensor, dtype: torch.dtype) -> Tensor:
    """0-based ranks along the last axis, ties sharing their mean rank (pairwise counts: rows are short)."""
    less = (y[..., None, :] < y[..., :, None]).sum(-1)
    same = (y[..., None, :] == y[..., :, None]).sum(-1)
    return less.to(dtype) + (same.to(dtype) - 1) / 2


def spearman_rows(x: Tensor, y: Tensor, *, dtype: torch.dtype = torch.float64) -> Tensor:
    """:func:`spearman` of each pair of rows of ``x`` and ``y`` (broadcast, ``(..., n)``) at once, on their
    device, computed in ``dtype``: ``(...)``, NaN where a row is constant or ``n < 2``."""
    x, y = torch.broadcast_tensors(x, y)
    rx, ry = _row_ranks(x, dtype), _row_ranks(y, dtype)
    rx, ry = rx - rx.mean(-1, keepdim=True), ry - ry.mean(-1, keepdim=True)
    denom = torch.sqrt((rx**2).sum(-1) * (ry**2).sum(-1))
    return torch.where(denom > 0, (rx * ry).sum(-1) / torch.where(denom > 0, denom, 1.0), float("nan"))
