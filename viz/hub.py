"""Figures for a Hugging Face model on the "Any model" page: its prediction, what one generated token
attended to in every layer, and how one weight came about (a
:class:`model.hub.explain.HubExplanation`) as two figures, sentences and a CSV table.

The explanation figures follow :mod:`viz.explain` (the same colours: the chosen key vermilion, other
keys blue, masked keys grey) but read the Hub explanation's fields; the key tokens come from the run,
as the explanation names only the chosen one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import (
    DIVERGING,
    FONT_SIZE,
    escape,
    heatmap,
    house_layout,
    make_figure,
    margins,
    plot_labels,
    printable,
    text_px,
)
from viz.explain import CHOSEN, MASKED, MAX_TEXT, OTHER

if TYPE_CHECKING:
    from model.hub.explain import HubExplanation


def probability_bars(probs: Mapping[str, float], *, title: str, x_title: str = "token") -> go.Figure:
    """The model's probabilities (the next tokens, the classes) as bars, in the given order."""
    if not probs:
        raise ValueError("no probabilities to draw; give at least one outcome")
    labels = plot_labels(list(probs), numbered=False)
    values = [float(p) for p in probs.values()]
    bar = dict(type="bar", x=labels, y=[round(v, 4) for v in values], text=[f"{v:.1%}" for v in values],
               textposition="outside", cliponaxis=False, marker=dict(color=OTHER),
               hovertemplate=f"{escape(x_title)}: %{{x}}<br>probability %{{y:.4f}}<extra></extra>")  # fmt: skip
    layout = house_layout(title=escape(title), height=340)
    layout.update(
        xaxis=dict(title=dict(text=escape(x_title)), type="category"),
        yaxis=dict(title=dict(text="probability"), range=[0, max(max(values), 0.05) * 1.25]),
    )
    return make_figure([bar], layout)


def step_figure(weights, key_tokens: Sequence[str], *, query_label: str, key_name: str = "key",
                title: str | None = None) -> go.Figure:
    """One query's weights in every layer, averaged over the heads: ``(layers, keys)``, one row a layer."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[1] != len(key_tokens):
        raise ValueError(f"weights must be (layers, {len(key_tokens)} keys); got shape {w.shape}")
    query = escape(printable(query_label))
    return heatmap(
        w, [f"layer {i}" for i in range(w.shape[0])], plot_labels(key_tokens),
        title=escape(title) if title else f"what {query} attended to: each layer's mean over heads",
        row_title=f"layer (query {query})", col_title=escape(key_name), decimals=2 if w.size <= 144 else None,
        gap=1 if w.size <= 144 else 0,
    )  # fmt: skip


def _cell_name(e: HubExplanation) -> str:
    return (f"{e.kind} layer {e.layer} · head {e.head} · query {e.query}:{escape(printable(e.query_token))} → "
            f"key {e.key}:{escape(printable(e.key_token))}")  # fmt: skip


def _need_explained(e: HubExplanation) -> None:
    if not e.explained:
        raise ValueError(f"this weight was not recomputed ({e.reason}); only its value can be shown")


def vector_figure(e: HubExplanation) -> go.Figure:
    """q_i, k_j and their elementwise product over the head's dimensions; the title gives their sum.
    Colour is relative within each row; the cells (small heads) and the hover give the numbers."""
    _need_explained(e)
    rows = {"q_i (query)": e.q, "k_j (key)": e.k, "q_i × k_j": e.product}
    values = np.stack(list(rows.values())).astype(float)
    scale = np.abs(values).max(axis=1, keepdims=True)
    z = np.divide(values, scale, out=np.zeros_like(values), where=scale > 0)
    d = values.shape[1]
    small = d <= MAX_TEXT
    trace = dict(type="heatmap", z=z.round(4).tolist(), x=[str(i) for i in range(d)], y=list(rows),
                 customdata=values.round(6).tolist(), colorscale=DIVERGING, zmin=-1, zmax=1, showscale=False,
                 xgap=1 if d <= 64 else 0, ygap=2, text=values.round(2).tolist() if small else None,
                 texttemplate="%{text}" if small else None,
                 hovertemplate="%{y}<br>dimension %{x}<br>value %{customdata:.4f}<extra></extra>")  # fmt: skip
    layout = house_layout(title=f"{_cell_name(e)}<br>q_i · k_j = sum of the {d} products = {e.raw:.4f}", height=260)
    layout.update(
        xaxis=dict(title=dict(text=f"dimension of head {e.head} ({d} numbers)"), type="category",
                   showticklabels=d <= 64),
        yaxis=dict(autorange="reversed", automargin=False),
        margin=margins(l=text_px(list(rows), FONT_SIZE) + 10, t=90, b=50),
    )  # fmt: skip
    return make_figure([trace], layout)


def row_figure(e: HubExplanation, key_tokens: Sequence[str]) -> go.Figure:
    """The query's whole row: scaled scores (top) and their softmax (bottom), one bar a key, the chosen
    key in vermilion and its column shaded, masked keys grey and labelled "masked"."""
    _need_explained(e)
    if len(key_tokens) != len(e.softmax):
        raise ValueError(f"the row has {len(e.softmax)} keys but {len(key_tokens)} key tokens were given")
    labels = plot_labels(key_tokens)
    colors = [CHOSEN if j == e.key else (OTHER if e.mask[j] else MASKED) for j in range(len(labels))]
    scores = [float(s) if math.isfinite(s) else 0.0 for s in e.scores]
    score_text = [f"{s:.3f}" if e.mask[j] else "masked" for j, s in enumerate(e.scores)]
    traces = [
        dict(type="bar", x=labels, y=scores, marker=dict(color=colors), text=score_text, textposition="outside",
             xaxis="x", yaxis="y", name="score", cliponaxis=False,
             hovertemplate="key %{x}<br>scaled score %{y:.4f}<extra></extra>"),
        dict(type="bar", x=labels, y=[round(float(w), 6) for w in e.softmax], marker=dict(color=colors),
             text=[f"{w:.3f}" for w in e.softmax], textposition="outside", xaxis="x2", yaxis="y2", name="weight",
             cliponaxis=False, hovertemplate="key %{x}<br>softmax weight %{y:.4f}<extra></extra>"),
    ]  # fmt: skip
    angle = -60 if len(labels) > 6 else 0
    layout = house_layout(
        title=f"{_cell_name(e)}<br>softmax over the row: weight {e.recomputed:.4f} (the model's: {e.weight:.4f})",
        height=520,
    )
    layout.update(
        showlegend=False,
        xaxis=dict(domain=[0, 1], anchor="y", type="category", showticklabels=False),
        yaxis=dict(domain=[0.58, 1], anchor="x", title=dict(text=f"score × {escape(e.scale_text)}"), zeroline=True),
        xaxis2=dict(domain=[0, 1], anchor="y2", type="category", tickangle=angle, tickfont=dict(size=12),
                    title=dict(text=f"key (column) · query {e.query}:{escape(printable(e.query_token))} (row)")),
        yaxis2=dict(domain=[0, 0.42], anchor="x2", title=dict(text="softmax weight"), range=[0, 1.15]),
        margin=margins(l=70, t=100, b=text_px(labels, 12) * 0.87 + 40 if len(labels) > 6 else 60),
        uniformtext=dict(minsize=10, mode="show"),
        shapes=[dict(type="rect", xref="x2", x0=e.key - 0.5, x1=e.key + 0.5, yref="paper", y0=0, y1=1,
                     fillcolor=CHOSEN, opacity=0.12, line=dict(width=0), layer="below")],
    )  # fmt: skip
    return make_figure(traces, layout)


def explanation_steps(e: HubExplanation, key_tokens: Sequence[str]) -> list[str]:
    """The computation in plain sentences (tokens as the model read them: escape before markup)."""
    if not e.explained:
        return [f"The model gives this cell weight {e.weight:.4f}. {e.reason[:1].upper()}{e.reason[1:]}."]
    masked = [f"{j}:{printable(key_tokens[j])}" for j in range(len(key_tokens)) if not e.mask[j]]
    mask = f"masked (weight 0): {', '.join(masked)}" if masked else "no key is masked"
    chosen = "is masked, so its weight is 0" if not e.mask[e.key] else f"gets {e.recomputed:.4f}"
    return [
        f"1. q_i = the query projection of token {e.query}:{printable(e.query_token)}; k_j = the key projection of "
        f"token {e.key}:{printable(e.key_token)} (head {e.head} keeps {len(e.q)} numbers of each).",
        f"2. Multiply them number by number and add: q_i · k_j = {e.raw:.4f}.",
        f"3. Scale by {e.scale_text}: score = {e.raw:.4f} × {e.scale:.4f} = {e.scaled:.4f}.",
        f"4. Mask for this row: {mask}.",
        f"5. Softmax over the row's {len(key_tokens)} scores: key {e.key}:{printable(e.key_token)} {chosen}; "
        f"the model's own weight is {e.weight:.4f}.",
    ]


def explanation_frame(e: HubExplanation, key_tokens: Sequence[str]) -> pd.DataFrame:
    """Every number of the explanation, one a row, for a CSV download. Columns: the cell (kind, layer,
    head, query, key and their tokens), ``quantity``, ``position`` (a key, for per-key quantities),
    ``token``, ``dimension`` (within the head) and ``value``."""
    rows: list[tuple] = []

    def add(quantity: str, value: float, position: int | None = None, dimension: int | None = None) -> None:
        rows.append((quantity, position, None if position is None else key_tokens[position], dimension, value))

    add("weight", e.weight)
    if e.explained:
        for name, vec in (("q_i", e.q), ("k_j", e.k), ("q_i*k_j", e.product)):
            for d, v in enumerate(vec):
                add(name, float(v), dimension=d)
        for name, v in (("raw_score", e.raw), ("scale", e.scale), ("score", e.scaled), ("recomputed", e.recomputed)):
            add(name, float(v))
        for j in range(len(key_tokens)):
            add("row_mask_visible", float(e.mask[j]), j)
            add("row_score", float(e.scores[j]), j)
            add("row_weight", float(e.softmax[j]), j)
    frame = pd.DataFrame(rows, columns=["quantity", "position", "token", "dimension", "value"])
    cell = {"kind": e.kind, "layer": e.layer, "head": e.head, "query": e.query, "query_token": e.query_token,
            "key": e.key, "key_token": e.key_token}  # fmt: skip
    for i, (name, v) in enumerate(cell.items()):
        frame.insert(i, name, v)
    return frame.astype({"position": "Int64", "dimension": "Int64"})
