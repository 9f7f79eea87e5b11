"""Head-profile figures: one metric over the layer × head grid, and the standardised profiles of a
chosen head beside its nearest heads.

Rows are layers and columns are heads (not queries and keys: each cell summarises one head's
whole attention matrix); every figure says so on its axes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.analysis.measures import BY_NAME, MEASURES
from viz.common import HEAD_COLORS, check_stack, head_name, house_layout, make_figure
from viz.matrixview import matrix_payload

# the profile metrics that are shares of the weight (0..1), from the measures' records
FRACTIONS = tuple(m.name for m in MEASURES if m.profile is not None and m.range == (0.0, 1.0))


def head_label(layer: int, head: int) -> str:
    return head_name(layer, head)


def colour_range(metric: str, keys: int) -> tuple[float | None, float | None]:
    """The fixed colour range of ``metric`` over ``keys`` keys (fractions 0..1, entropy up to log2 of the
    keys, correlation -1..1), so grids of different inputs read alike; (None, None) lets the data decide."""
    if metric in FRACTIONS:
        return 0.0, 1.0
    if metric == "entropy":
        return 0.0, max(math.log2(keys), 1e-9)
    if metric in BY_NAME and None not in BY_NAME[metric].range:
        return BY_NAME[metric].range
    return None, None


def grid_table(values) -> pd.DataFrame:
    """A ``(layers, heads)`` metric as the table behind its grid: a row per layer, a column per head."""
    v = check_stack(values, ndim=2, name="metric per head (layers, heads)")
    L, H = v.shape
    return pd.DataFrame(np.round(v, 6), index=[f"layer {l}" for l in range(L)], columns=[f"head {h}" for h in range(H)])


def neighbours_table(neighbours: Sequence[dict], metrics: Sequence[str]) -> pd.DataFrame:
    """Heads and their distance to the first one (``model.analysis.profiles.neighbourhood``): a head label,
    the distance and ``metrics``."""
    rows = [
        {"head": head_label(n["layer"], n["head"]), "distance": n["distance"], **{m: n[m] for m in metrics}}
        for n in neighbours
    ]
    return pd.DataFrame(rows)


def head_grid(values, metric: str) -> np.ndarray:
    """``values`` checked as a ``(layers, heads)`` grid of ``metric`` with at least one of each."""
    v = check_stack(values, ndim=2, name=f"{metric} per head (layers, heads)")
    L, H = v.shape
    if not L or not H:
        raise ValueError(f"{metric} has {L} layers and {H} heads; the grid needs at least one of each")
    return v


def metric_matrix(
    values,
    metric: str,
    *,
    title: str | None = None,
    selected: tuple[int, int] | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
) -> dict:
    """A ``(layers, heads)`` grid of one metric as a matrix view (:mod:`viz.matrixview`, no Plotly), values
    printed in the cells: NaN cells blank, the ``selected`` head outlined, ``zmin``/``zmax`` the colour
    range (e.g. 0..1 for fractions)."""
    v = head_grid(values, metric)
    L, H = v.shape
    return matrix_payload(
        v,
        [f"layer {l}" for l in range(L)],
        [f"head {h}" for h in range(H)],
        name=title or f"{metric} of every head",
        row_title="layer",
        col_title="head",
        decimals=2,
        signed=zmin is not None and zmin < 0,
        marks=[selected] if selected else (),
        mark_label="chosen head",
        limits=(zmin, zmax),
    )


def profile_lines(profiles: Sequence[tuple[str, Sequence[float]]], metrics: Sequence[str], *, title: str) -> go.Figure:
    """Standardised metric vectors as lines, one per head (the first drawn thick): heads with
    similar shapes behave alike. ``profiles`` is ``[(label, values per metric), ...]``."""
    if not profiles:
        raise ValueError("give at least one head's profile")
    for label, values in profiles:
        if len(values) != len(metrics):
            raise ValueError(f"{label}: {len(values)} values for {len(metrics)} metrics")
    names = [html.escape(m, quote=False) for m in metrics]
    traces = [
        dict(
            type="scatter",
            x=names,
            y=[round(float(v), 4) for v in values],
            name=html.escape(label, quote=False),
            mode="lines+markers",
            line=dict(width=5 if i == 0 else 2, color=HEAD_COLORS[i % len(HEAD_COLORS)]),
            marker=dict(size=12 if i == 0 else 8),
            hovertemplate="%{fullData.name}<br>%{x}: %{y:.2f} standard deviations<extra></extra>",
        )
        for i, (label, values) in enumerate(profiles)
    ]
    layout = house_layout(title=html.escape(title, quote=False), height=420)
    layout.update(
        xaxis=dict(title=dict(text="metric (x axis)"), type="category"),
        yaxis=dict(title=dict(text="standardised value (0 = average head)"), zeroline=True),
        legend=dict(title=dict(text="head")),
    )
    return make_figure(traces, layout)
