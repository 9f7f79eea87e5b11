"""The multi-head reshape steps as matrix views (:mod:`viz.matrixview`), each element coloured by the
head it belongs to, and as one table of every number.

A 3-D or 4-D step tensor is drawn as one 2-D grid: the axes up to and including the first token
axis ``t`` become rows, the rest become columns. So ``(b, t, h, s)`` shows heads side by side in
the columns, ``(b, h, t, s)`` and ``(b·h, t, s)`` stack them in the rows, and a reader can follow
one colour (one head) from step to step.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

from viz.common import to_numpy, unique_labels
from viz.matrixview import matrix_payload


def _axis_labels(dims: Sequence[str], sizes: Sequence[int], tokens: Sequence[str] | None, heads: int) -> list[str]:
    """One label per flattened index, e.g. ``"b0 · h1 · 2:short"``; unique by construction.

    A folded ``b·h`` index i is shown with where it came from: ``"3=b1h0"`` for i = b·heads + h.
    """
    parts = []
    for dim, n in zip(dims, sizes):
        if dim == "t" and tokens is not None:
            parts.append(unique_labels(tokens))
        elif dim == "b·h":
            parts.append([f"{i}=b{i // heads}h{i % heads}" for i in range(n)])
        else:
            parts.append([f"{dim}{i}" for i in range(n)])
    if len(parts) == 1 and dims[0] not in ("t",):
        return [str(i) for i in range(sizes[0])]  # a single flat axis: plain column numbers
    return [" · ".join(combo) for combo in itertools.product(*parts)]


def split_axes(dims: Sequence[str]) -> int:
    """How many leading axes form the rows: up to and including the first token axis ``t``."""
    if "t" not in dims:
        raise ValueError(f"dims must contain a token axis 't'; got {tuple(dims)}")
    return list(dims).index("t") + 1


def step_payload(
    tensor,
    head_of,
    dims: Sequence[str],
    *,
    heads: int,
    name: str,
    tokens: Sequence[str] | None = None,
) -> dict:
    """One reshape step for the matrix view (:mod:`viz.matrixview`), laid out as 2-D by :func:`_grid`,
    each cell coloured by its head (or by value when no cell has a single head).

    ``dims`` names the axes, e.g. ``("b·h", "t", "t")``; a second ``t`` is the key axis.
    ``tokens`` (length t) label the token axes.
    """
    x, lab = to_numpy(tensor), to_numpy(head_of).astype(int)
    grid = _grid(x, lab, dims, tokens, heads, name)
    decimals = 2 if grid["n_cols"] <= 10 else 1
    how = (
        dict(colour="value")
        if (lab < 0).all()
        else dict(colour="head", heads=lab.reshape(grid["shape"]), head_count=heads)
    )
    return matrix_payload(
        x.reshape(grid["shape"]),
        grid["rows"],
        grid["cols"],
        name=grid["title"],
        row_title=grid["row_axes"],
        col_title=grid["col_axes"],
        decimals=decimals,
        shape=x.shape,
        **how,
    )


def _grid(
    x: np.ndarray, lab: np.ndarray, dims: Sequence[str], tokens: Sequence[str] | None, heads: int, name: str
) -> dict:
    """How a step tensor is laid out as 2-D: row and column labels, axis names, the title."""
    if x.ndim != len(dims) or x.shape != lab.shape:
        raise ValueError(f"{name}: tensor {x.shape}, head_of {lab.shape} and dims {tuple(dims)} must agree")
    if tokens is not None and len(tokens) != x.shape[list(dims).index("t")]:
        raise ValueError(f"{name}: {len(tokens)} tokens given for a token axis of length {x.shape[dims.index('t')]}")
    cut = split_axes(dims)
    row_dims, col_dims = list(dims[:cut]), list(dims[cut:])
    rows = _axis_labels(row_dims, x.shape[:cut], tokens, heads)
    cols = _axis_labels(col_dims, x.shape[cut:], tokens, heads)
    is_scores = col_dims == ["t"]
    return {
        "rows": rows,
        "cols": cols,
        "shape": (len(rows), len(cols)),
        "n_cols": len(cols),
        # the matrix view's caption says "rows: …, columns: …" itself
        "row_axes": ("queries " if is_scores else "") + " · ".join(row_dims),
        "col_axes": ("keys " if is_scores else "") + " · ".join(col_dims),
        "title": f"{name}: ({', '.join(dims)})",
    }


def steps_frame(steps: Sequence) -> pd.DataFrame:
    """Every number of every step (and its keys and values), one row each: the step's number and
    name, the tensor, its axes, the element's index along them, the value and its head (-1: none)."""
    rows = []
    for i, step in enumerate(steps, start=1):
        tensors = {"queries": step.tensor, **step.others} if step.others else {"": step.tensor}
        head_of = to_numpy(step.head_of).astype(int)
        for role, tensor in tensors.items():
            values = to_numpy(tensor)
            for index in np.ndindex(values.shape):
                rows.append(
                    (
                        i,
                        step.name,
                        role or "output",
                        " ".join(step.dims),
                        str(index),
                        float(values[index]),
                        int(head_of[index]),
                    )
                )
    return pd.DataFrame(rows, columns=["step", "name", "tensor", "axes", "index", "value", "head"])
