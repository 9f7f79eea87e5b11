"""Figures for a Hugging Face model on the "Any model" page: its prediction and what one generated
token attended to in every layer. How one weight came about is :mod:`viz.explain`'s, as for our models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from viz.common import (
    escape,
    heatmap,
    house_layout,
    make_figure,
    plot_labels,
    printable,
)
from viz.explain import OTHER


def probability_bars(probs: Mapping[str, float], *, title: str, x_title: str = "token") -> go.Figure:
    """The model's probabilities (the next tokens, the classes) as bars, in the given order."""
    if not probs:
        raise ValueError("no probabilities to draw; give at least one outcome")
    labels = plot_labels(list(probs), numbered=False)
    values = [float(p) for p in probs.values()]
    bar = dict(
        type="bar",
        x=labels,
        y=[round(v, 4) for v in values],
        text=[f"{v:.1%}" for v in values],
        textposition="outside",
        cliponaxis=False,
        marker=dict(color=OTHER),
        hovertemplate=f"{escape(x_title)}: %{{x}}<br>probability %{{y:.4f}}<extra></extra>",
    )
    layout = house_layout(title=escape(title), height=340)
    layout.update(
        xaxis=dict(title=dict(text=escape(x_title)), type="category"),
        yaxis=dict(title=dict(text="probability"), range=[0, max(max(values), 0.05) * 1.25]),
    )
    return make_figure([bar], layout)


def step_figure(
    weights, key_tokens: Sequence[str], *, query_label: str, key_name: str = "key", title: str | None = None
) -> go.Figure:
    """One query's weights in every layer, averaged over the heads: ``(layers, keys)``, one row a layer."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[1] != len(key_tokens):
        raise ValueError(f"weights must be (layers, {len(key_tokens)} keys); got shape {w.shape}")
    query = escape(printable(query_label))
    return heatmap(
        w,
        [f"layer {i}" for i in range(w.shape[0])],
        plot_labels(key_tokens),
        title=escape(title) if title else f"what {query} attended to: each layer's mean over heads",
        row_title=f"layer (query {query})",
        col_title=escape(key_name),
        decimals=2 if w.size <= 144 else None,
        gap=1 if w.size <= 144 else 0,
    )
