"""Heatmaps, bar charts and tables of plain matrices: embeddings, weight matrices, scores, weights.

Every figure states its shape in the title ("scores  (6 × 6)"), prints the values in the cells
while they fit, and names both axes (query rows, key columns where that applies).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import (
    COLORSCALE,
    DIVERGING,
    FONT_SIZE,
    check_matrix,
    heatmap,
    heatmap_height,
    house_layout,
    hover_labels,
    make_figure,
    number_text,
    plot_labels,
    to_numpy,
)

QUERY_AXIS, KEY_AXIS = "query (row)", "key (column)"
MAX_TEXT_ROWS, MAX_TEXT_COLS = 45, 32  # beyond these, values only appear on hover


def index_labels(n: int, prefix: str = "") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def shape_title(name: str, shape: Sequence[int]) -> str:
    """``"scores  (6 × 6)"``."""
    return f"{name}  ({' × '.join(str(n) for n in shape)})"


def auto_decimals(n_rows: int, n_cols: int) -> int | None:
    """How many decimals fit in a cell: 4 for narrow matrices, fewer for wide, None (hover only) for
    big ones. Width decides, since the text runs across the cell."""
    if n_rows > MAX_TEXT_ROWS or n_cols > MAX_TEXT_COLS:
        return None
    if n_cols <= 10:
        return 4
    return 2 if n_cols <= 20 else 1


def matrix_heatmap(
    values,
    rows: Sequence[str] | None = None,
    cols: Sequence[str] | None = None,
    *,
    name: str = "matrix",
    row_title: str = "row",
    col_title: str = "column",
    decimals: int | None | str = "auto",
    signed: bool | None = None,
    colorscale: str | None = None,
    shape: Sequence[int] | None = None,
) -> go.Figure:
    """A heatmap of a 2-D matrix with its values printed in the cells and its shape (or ``shape``, e.g.
    of the tensor it was flattened from) in the title.

    ``rows``/``cols`` are axis labels (default: indices); they are escaped for plotly and must be
    unique (number tokens with :func:`viz.common.unique_labels`). ``signed`` picks a diverging colour scale centred
    on zero (default: when the matrix has negative values). Row 0 is at the top, as when printed.
    """
    m = check_matrix(values, rows, cols, name=name)
    n_rows, n_cols = m.shape
    full_rows = hover_labels(rows, numbered=False) if rows is not None else None
    full_cols = hover_labels(cols, numbered=False) if cols is not None else None
    rows = plot_labels(rows, numbered=False) if rows is not None else index_labels(n_rows)
    cols = plot_labels(cols, numbered=False) if cols is not None else index_labels(n_cols)
    for axis, labels in (("row", rows), ("column", cols)):
        if len(set(labels)) != len(labels):
            raise ValueError(f"{name}: {axis} labels must be unique; number repeated tokens, e.g. with unique_labels")
    if decimals == "auto":
        decimals = auto_decimals(n_rows, n_cols)
    signed = bool((m < 0).any()) if signed is None else signed
    return heatmap(
        m, rows, cols, title=shape_title(name, shape or m.shape), row_title=row_title, col_title=col_title,
        value="value", colorscale=colorscale or (DIVERGING if signed else COLORSCALE), colorbar_title=False,
        zmid=0 if signed else None, zmin=None if signed else min(0.0, float(m.min()) if m.size else 0.0),
        zmax=None if signed else (float(np.abs(m).max()) if m.size else 1.0), decimals=decimals,
        tickangle=0 if n_cols <= 12 else -45, height=heatmap_height(n_rows, base=130, row_px=26, min_px=260, max_px=1100),
        full_rows=full_rows, full_cols=full_cols,
    )  # fmt: skip


def vector_bar(
    values,
    labels: Sequence[str] | None = None,
    *,
    name: str = "vector",
    axis_title: str = "index",
    value_title: str = "value",
    decimals: int = 4,
    color: str | None = None,
    max_text: int = 16,
) -> go.Figure:
    """A bar chart of one vector (e.g. one query's scores over the keys) with values on the bars
    (up to ``max_text`` bars; longer vectors show values on hover)."""
    v = to_numpy(values)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {v.shape}. Pick one row first.")
    if labels is not None and len(labels) != v.shape[0]:
        raise ValueError(f"{name} has {v.shape[0]} values but {len(labels)} labels were given")
    labels = plot_labels(labels, numbered=False) if labels is not None else index_labels(v.shape[0])
    bar = dict(
        type="bar",
        x=labels,
        y=v,
        text=[number_text(x, decimals) for x in v] if len(v) <= max_text else None,
        textposition="outside",
        textfont=dict(size=max(12, FONT_SIZE - 2)),
        marker=dict(color=color or "#0072B2"),
        hovertemplate=f"{axis_title}: %{{x}}<br>{value_title}: %{{y:.4f}}<extra></extra>",
        cliponaxis=False,
    )
    layout = house_layout(title=shape_title(name, v.shape), height=340)
    layout.update(
        uniformtext=dict(minsize=12, mode="show"),  # never shrink bar labels below 12 px
        xaxis=dict(title=dict(text=axis_title), type="category"),
        yaxis=dict(title=dict(text=value_title), zeroline=True),
    )
    return make_figure([bar], layout)


def matrix_frame(
    values, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, *, decimals: int = 4
) -> pd.DataFrame:
    """The matrix as a rounded DataFrame with the same labels (raw, unescaped: tables are not HTML)."""
    m = check_matrix(values, rows, cols, name="matrix")
    return pd.DataFrame(
        np.round(m, decimals),
        index=list(rows) if rows is not None else index_labels(m.shape[0]),
        columns=list(cols) if cols is not None else index_labels(m.shape[1]),
    )
