"""Figures for the multi-head reshape steps, each element coloured by the head it belongs to.

A 3-D or 4-D step tensor is drawn as one 2-D grid: the axes up to and including the first token
axis ``t`` become rows, the rest become columns. So ``(b, t, h, s)`` shows heads side by side in
the columns, ``(b, h, t, s)`` and ``(b·h, t, s)`` stack them in the rows, and a reader can follow
one colour (one head) from step to step. One heatmap trace per figure, whatever the size.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import (
    FONT_SIZE,
    HEAD_COLORS,
    house_layout,
    make_figure,
    number_text,
    plot_labels,
    to_numpy,
    top_axis_layout,
    unique_labels,
)
from viz.matrix import KEY_AXIS, QUERY_AXIS, matrix_heatmap, shape_title
from viz.matrixview import matrix_payload

NO_HEAD_COLOR = "#D9D9D9"


def head_color(i: int) -> str:
    return HEAD_COLORS[i % len(HEAD_COLORS)]


def text_decimals(n_rows: int, n_cols: int) -> int | None:
    """Head figures need colour around the text: 2 decimals while narrow, 1, then hover only."""
    if n_rows > 64 or n_cols > 16:
        return None
    return 2 if n_cols <= 10 else 1


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


def head_heatmap(
    values,
    head_of,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    heads: int,
    name: str = "step",
    shape: Sequence[int] | None = None,
    row_title: str = "row",
    col_title: str = "column",
) -> go.Figure:
    """A 2-D grid whose cell colour is the head (``head_of``; -1 = none) and whose text is the value.

    ``rows``/``cols`` must be unique (they are escaped for plotly here); ``shape`` (default: the grid's) goes in
    the title, so a 4-D tensor drawn as 2-D still says ``(b × t × h × s)``.
    """
    v, lab = to_numpy(values), to_numpy(head_of).astype(int)
    if v.ndim != 2 or v.shape != lab.shape:
        raise ValueError(f"{name}: values {v.shape} and head_of {lab.shape} must be 2-D and the same shape")
    if (len(rows), len(cols)) != v.shape:
        raise ValueError(f"{name}: {v.shape} grid needs {v.shape[0]} row and {v.shape[1]} column labels")
    if len(set(rows)) != len(rows) or len(set(cols)) != len(cols):
        raise ValueError(f"{name}: row and column labels must be unique")
    if heads < 1 or lab.max(initial=-1) >= heads:
        raise ValueError(f"{name}: head_of uses head {lab.max()} but heads is {heads}")
    # one band of the colour scale per category: "no head" (if present) then head 0..h-1
    has_none = bool((lab < 0).any())
    colors = ([NO_HEAD_COLOR] if has_none else []) + [head_color(i) for i in range(heads)]
    z = lab + (1 if has_none else 0)
    n = len(colors)
    scale = [[pos, c] for i, c in enumerate(colors) for pos in (i / n, (i + 1) / n)]
    names = (["no single head"] if has_none else []) + [f"head {i}" for i in range(heads)]
    decimals = text_decimals(*v.shape)
    text = np.vectorize(lambda x: number_text(x, decimals))(v) if decimals is not None else None
    custom = np.dstack([v, np.asarray(names, dtype=object)[z]])
    heatmap = dict(
        type="heatmap",
        z=z,
        x=plot_labels(cols, numbered=False),
        y=plot_labels(rows, numbered=False),
        zmin=-0.5,
        zmax=n - 0.5,
        colorscale=scale,
        colorbar=dict(tickvals=list(range(n)), ticktext=names, thickness=14, title=dict(text="head")),
        text=text,
        texttemplate="%{text}" if text is not None else None,
        textfont=dict(size=max(12, FONT_SIZE - 2)),
        customdata=custom,
        hovertemplate=(
            f"{row_title}: %{{y}}<br>{col_title}: %{{x}}<br>%{{customdata[1]}}"
            "<br>value: %{customdata[0]:.4f}<extra></extra>"
        ),
        xgap=1,
        ygap=1,
    )
    rows_n = v.shape[0]
    layout = house_layout(title=shape_title(name, shape or v.shape), height=int(min(max(260, 130 + 24 * rows_n), 1400)))
    layout.update(
        xaxis=dict(title=dict(text=col_title), type="category", side="top", tickangle=0 if v.shape[1] <= 10 else -45),
        yaxis=dict(title=dict(text=row_title), type="category", autorange="reversed"),
    )
    return make_figure([heatmap], top_axis_layout(layout, heatmap["y"], heatmap["x"]))


def step_figure(
    tensor,
    head_of,
    dims: Sequence[str],
    *,
    heads: int,
    name: str,
    tokens: Sequence[str] | None = None,
) -> go.Figure:
    """One reshape step as a head-coloured grid (or a plain value heatmap when no element belongs to
    a single head, as for the input and the unified output).

    ``dims`` names the axes, e.g. ``("b·h", "t", "t")``; a second ``t`` is the key axis.
    ``tokens`` (length t) label the token axes.
    """
    x, lab = to_numpy(tensor), to_numpy(head_of).astype(int)
    g = _grid(x, lab, dims, tokens, heads, name)
    rows, cols, row_title, col_title, title = g["rows"], g["cols"], g["row_title"], g["col_title"], g["title"]
    grid, grid_lab = x.reshape(g["shape"]), lab.reshape(g["shape"])
    if (grid_lab < 0).all():
        return matrix_heatmap(
            grid, rows, cols, name=title, row_title=row_title, col_title=col_title,
            decimals=text_decimals(*grid.shape), shape=x.shape,
        )  # fmt: skip
    return head_heatmap(
        grid, grid_lab, rows, cols, heads=heads, name=title, shape=x.shape, row_title=row_title, col_title=col_title
    )


def step_payload(
    tensor,
    head_of,
    dims: Sequence[str],
    *,
    heads: int,
    name: str,
    tokens: Sequence[str] | None = None,
) -> dict:
    """One reshape step for the matrix view (:mod:`viz.matrixview`): the same grid, labels and titles as
    :func:`step_figure`, each cell coloured by its head (or by value when no cell has a single head)."""
    x, lab = to_numpy(tensor), to_numpy(head_of).astype(int)
    grid = _grid(x, lab, dims, tokens, heads, name)
    decimals = 2 if grid["n_cols"] <= 10 else 1
    how = (
        dict(colour="value")
        if (lab < 0).all()
        else dict(colour="head", heads=lab.reshape(grid["shape"]), head_count=heads)
    )
    return matrix_payload(
        x.reshape(grid["shape"]), grid["rows"], grid["cols"], name=grid["title"], row_title=grid["row_axes"],
        col_title=grid["col_axes"], decimals=decimals, shape=x.shape, **how,
    )  # fmt: skip


def _grid(
    x: np.ndarray, lab: np.ndarray, dims: Sequence[str], tokens: Sequence[str] | None, heads: int, name: str
) -> dict:
    """How a step tensor is laid out as 2-D: row and column labels, axis titles, the figure's title."""
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
        "row_title": (QUERY_AXIS if is_scores else "rows") + ": " + " · ".join(row_dims),
        "col_title": (KEY_AXIS if is_scores else "columns") + ": " + " · ".join(col_dims),
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
                rows.append((i, step.name, role or "output", " ".join(step.dims), str(index), float(values[index]),
                             int(head_of[index])))  # fmt: skip
    return pd.DataFrame(rows, columns=["step", "name", "tensor", "axes", "index", "value", "head"])
