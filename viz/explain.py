"""The "how was this weight computed" panel: figures, steps in words and a CSV table from one
:class:`model.core.explanation.Explanation`, whichever model family filled it (ours, a Hugging Face one).

Three figures follow the computation: the query and key vectors and their elementwise product
(:func:`vector_figure`), the row of scores and its softmax with the chosen key highlighted and masked
keys marked (:func:`row_figure`), and the value vectors weighted into this head's output
(:func:`output_figure`). :func:`explanation_steps` says the same in sentences and
:func:`explanation_frame` holds every number for a CSV download.
"""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.core.explanation import Explanation
from model.core.specs import kind_label
from viz.common import (
    DIVERGING,
    FONT_SIZE,
    TITLE_SIZE,
    escape,
    head_name,
    house_layout,
    margins,
    plot_labels,
    shown_token,
    text_px,
)

CHOSEN, OTHER, MASKED = "#D55E00", "#0072B2", "#BBBBBB"  # Okabe-Ito vermilion / blue, grey
MAX_TEXT = 16  # print values in the cells up to this many dimensions
# A chart's title does not wrap, and at a phone's 390 px Plotly cut these titles at the right edge. The
# titles break between phrases; a line still longer (a long token) is broken at spaces to at most TITLE_CHARS
# characters (about 320 px at TITLE_SIZE: a chart on a 390-px screen is 358 px wide), TITLE_LINE px a line,
# from the top of the figure down, the plot below it.
TITLE_CHARS, TITLE_LINE, TITLE_PAD = 44, 22, 8
# spaces a title line never breaks at: inside a head's name ("cross L1 H2"), after "=" before its number, in
# a token's name ("key 3:fährt") and after an arrow ("→ key 3:fährt" starts a line whole)
GLUED = tuple(map(re.compile, (r"(L\d+) (H\d+)", r"(=) (-?\d)", r"(query|key) (\d)", r"(→) (\S)")))


def short_lines(text: str, width: int = TITLE_CHARS) -> list[str]:
    """``text`` (plotly markup: escaped, lines joined by ``<br>``) as lines of at most ``width`` characters
    as shown (an entity such as ``&lt;`` counts one), broken at spaces (not the GLUED ones); a longer word
    keeps a line of its own."""
    out = []
    for line in text.split("<br>"):
        for glued in GLUED:
            line = glued.sub("\\1\0\\2", line)
        current = ""
        for word in line.split(" "):
            joined = f"{current} {word}" if current else word
            if current and len(html.unescape(joined)) > width:
                out.append(current)
                joined = word
            current = joined
        out.append(current)
    return [line.replace("\0", " ") for line in out]


def fitted_title(text: str) -> tuple[dict, int]:
    """The title ``text`` in lines that fit a phone (:func:`short_lines`), at the top left; and the top margin
    those lines need, the plot starting below them."""
    lines = short_lines(text)
    title = dict(
        text="<br>".join(lines),
        font=dict(size=TITLE_SIZE),
        x=0,
        xref="container",
        xanchor="left",
        y=1,
        yref="container",
        yanchor="top",
        pad=dict(t=TITLE_PAD, l=TITLE_PAD),
    )
    return title, TITLE_PAD + TITLE_LINE * len(lines) + 14


def query_name(e: Explanation, row_token: str | None = None) -> str:
    """The query as the map's row names it, ``"query 2:is"``; where the row shows another token than the
    one the query vector was computed from (a decoder's row shows the word it wrote, its query reads the
    word before), both: ``"query 2:is (input: woman)"``. Plain text: escape it for plotly or Markdown."""
    read = shown_token(e.query_token)
    if row_token is None or row_token == e.query_token:
        return f"query {e.query}:{read}"
    return f"query {e.query}:{shown_token(row_token)} (input: {read})"


def key_name(e: Explanation) -> str:
    """The key as the map's column names it, ``"key 3:spielt"`` (a space as ``␣``). Plain text."""
    return f"key {e.key}:{shown_token(e.key_token)}"


def cell_name(e: Explanation, row_token: str | None = None) -> str:
    """``"query 2:is (input: woman) → key 3:spielt"``: the one name of the cell in the panel's heading, its
    charts, its steps and its caption. Plain text."""
    return f"{query_name(e, row_token)} → {key_name(e)}"


def kind_word(e: Explanation) -> str:
    """The kind's display word (``"decoder"`` for the generator's causal self-attention, stored as "encoder")."""
    return kind_label(e.model, e.kind)


def _cell_name(e: Explanation, row_token: str | None = None) -> str:
    return escape(f"{head_name(e.layer, e.head, kind_word(e))} · {cell_name(e, row_token)}")


def vector_figure(e: Explanation, row_token: str | None = None) -> go.Figure:
    """q_i, k_j and q_i × k_j as a three-row strip over the head's ``s`` dimensions; the title gives
    their sum, the raw score. Colour is relative within each row; hover and cells show the numbers."""
    rows = {"q_i (query)": e.q, "k_j (key)": e.k, "q_i × k_j": e.product}
    values = np.stack(list(rows.values()))
    scale = np.abs(values).max(axis=1, keepdims=True)
    z = np.divide(values, scale, out=np.zeros_like(values), where=scale > 0)
    dims = [str(d) for d in range(e.head_dim)]
    fig = go.Figure(
        go.Heatmap(
            z=z.round(4).tolist(),
            x=dims,
            y=list(rows),
            customdata=values.round(6).tolist(),
            colorscale=DIVERGING,
            zmin=-1,
            zmax=1,
            showscale=False,
            xgap=1 if e.head_dim <= 64 else 0,
            ygap=2,
            text=values.round(2).tolist() if e.head_dim <= MAX_TEXT else None,
            texttemplate="%{text}" if e.head_dim <= MAX_TEXT else None,
            hovertemplate="%{y}<br>dimension %{x}<br>value %{customdata:.4f}<extra></extra>",
        )
    )
    title, top = fitted_title(
        f"{_cell_name(e, row_token)}<br>q_i · k_j = sum of the {e.head_dim} products = {e.raw_score:.4f}"
    )
    fig.update_layout(
        house_layout(height=170 + top),
        title=title,
        xaxis=dict(
            title=dict(text=f"dimension of {head_name(e.layer, e.head)} (s = {e.head_dim})"),
            type="category",
            showticklabels=e.head_dim <= 64,
        ),
        yaxis=dict(autorange="reversed", automargin=False),
        margin=margins(l=text_px(list(rows), FONT_SIZE) + 10, t=top, b=50),
    )
    return fig


def row_figure(e: Explanation, row_token: str | None = None) -> go.Figure:
    """The whole row of this query: scaled scores (top) and softmax weights (bottom), one bar per key,
    the chosen key in vermilion, masked keys grey and labelled with the reason."""
    labels = plot_labels(e.key_tokens)
    colors = [CHOSEN if j == e.key else (OTHER if e.mask[j] else MASKED) for j in range(len(labels))]
    scores = [float(s) if math.isfinite(s) else 0.0 for s in e.scores]
    score_text = [f"{s:.3f}" if e.mask[j] else "masked" for j, s in enumerate(e.scores)]
    hover = [f"{s:.4f}" if e.mask[j] else f"masked ({e.mask_reasons[j]})" for j, s in enumerate(e.scores)]
    weight_text = [f"{w:.3f}" for w in e.weights]
    fig = go.Figure(
        [
            go.Bar(
                x=labels,
                y=scores,
                marker_color=colors,
                text=score_text,
                textposition="outside",
                xaxis="x",
                yaxis="y",
                name="score",
                customdata=hover,
                cliponaxis=False,
                hovertemplate="key %{x}<br>scaled score %{customdata}<extra></extra>",
            ),
            go.Bar(
                x=labels,
                y=e.weights.tolist(),
                marker_color=colors,
                text=weight_text,
                textposition="outside",
                xaxis="x2",
                yaxis="y2",
                name="weight",
                cliponaxis=False,
                hovertemplate="key %{x}<br>softmax weight %{y:.4f}<extra></extra>",
            ),
        ]
    )
    title = (
        f"{_cell_name(e, row_token)}<br>softmax over the row: weight {e.weight:.4f}<br>(the map: {e.map_weight:.4f})"
        + (" · this key is masked" if e.masked else "")
    )
    title, top = fitted_title(title)
    top += 20  # the scores printed over the top panel's bars
    tick = dict(size=12)
    angle = -60 if len(labels) > 6 else 0
    bottom = text_px(labels, tick["size"]) * 0.87 + 40 if len(labels) > 6 else 60
    fig.update_layout(
        house_layout(height=420 + top),
        title=title,
        showlegend=False,
        xaxis=dict(domain=[0, 1], anchor="y", type="category", showticklabels=False),
        yaxis=dict(domain=[0.58, 1], anchor="x", title=dict(text="scaled score"), zeroline=True),
        xaxis2=dict(
            domain=[0, 1],
            anchor="y2",
            type="category",
            tickangle=angle,
            tickfont=tick,
            title=dict(text=f"key (column) · {escape(query_name(e, row_token))} (row)"),
        ),
        yaxis2=dict(domain=[0, 0.42], anchor="x2", title=dict(text="softmax weight"), range=[0, 1.15]),
        margin=margins(l=70, t=top, b=bottom),
        uniformtext=dict(minsize=10, mode="show"),  # keep "masked" readable over an empty bar
    )
    # the chosen key's column, through both panels: visible even where its bars are empty (masked)
    fig.add_shape(
        type="rect",
        xref="x2",
        x0=e.key - 0.5,
        x1=e.key + 0.5,
        yref="paper",
        y0=0,
        y1=1,
        fillcolor=CHOSEN,
        opacity=0.12,
        line=dict(width=0),
        layer="below",
    )
    return fig


def split_figure(e: Explanation, row_token: str | None = None) -> go.Figure:
    """Why this weight, at layer 0: the score's token·token, token·position, position·token,
    position·position and bias terms as bars, their sum (the score) in the title."""
    if e.position_split is None:
        raise ValueError(f"no token/position split for this cell: {e.position_note or 'not computed'}")
    names, values = list(e.position_split), list(e.position_split.values())
    bar = go.Bar(
        x=names,
        y=values,
        marker_color=[OTHER if v >= 0 else CHOSEN for v in values],
        text=[f"{v:+.4f}" for v in values],
    )
    title = (
        f"{_cell_name(e, row_token)}:<br>the score {sum(values):.4f} = token and position parts<br>of the layer-0 input"
    )
    title, top = fitted_title(title)
    layout = house_layout(height=240 + top)
    layout.update(title=title, margin=margins(l=60, t=top, b=50))
    fig = go.Figure([bar])
    fig.update_layout(**layout)
    fig.update_yaxes(title_text="part of the scaled score")
    return fig


def output_figure(e: Explanation, row_token: str | None = None) -> go.Figure:
    """Each key's weighted value vector (weight_j × v_j, one row per key) and their sum, this head's
    output for the query (bottom row). The chosen key's row is outlined."""
    shares = e.head_factor * e.weights[:, None] * e.values  # (keys, s)
    z = np.vstack([shares, e.output[None]])
    keys = plot_labels(e.key_tokens)
    rows = [f"{lab} × {w:.3f}" + ("" if e.mask[j] else " (masked)") for j, (lab, w) in enumerate(zip(keys, e.weights))]
    rows.append("output = Σ")
    dims = [str(d) for d in range(e.head_dim)]
    span = float(np.abs(z).max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=z.round(5).tolist(),
            x=dims,
            y=rows,
            colorscale=DIVERGING,
            zmin=-span,
            zmax=span,
            xgap=1 if e.head_dim <= 64 else 0,
            ygap=1,
            colorbar=dict(title=dict(text="value")),
            hovertemplate="%{y}<br>dimension %{x}<br>%{z:.4f}<extra></extra>",
        )
    )
    fig.add_shape(
        type="rect",
        xref="paper",
        x0=0,
        x1=1,
        yref="y",
        y0=e.key - 0.5,
        y1=e.key + 0.5,
        line=dict(color=CHOSEN, width=3),
    )
    (t, hs), (_, dim) = e.concat_shape, e.unify_shape
    off = "" if e.head_factor == 1.0 else f" × head mask {e.head_factor:g}"
    title = (
        f"{head_name(e.layer, e.head)}'s output for {escape(query_name(e, row_token))}:<br>Σ_j weight_j · v_j{off} "
        f"({e.head_dim} numbers)<br>next: joined with the other heads'<br>({t} × {hs}), then a last linear layer<br>"
        f"combines the heads ({hs} → {dim})"
    )
    title, top = fitted_title(title)
    height = int(min(max(300, 150 + 26 * len(rows)), 900)) + top - 100
    fig.update_layout(
        house_layout(height=height),
        title=title,
        xaxis=dict(title=dict(text=f"dimension (s = {e.head_dim})"), type="category", showticklabels=e.head_dim <= 64),
        yaxis=dict(autorange="reversed", type="category", automargin=False, tickfont=dict(size=12)),
        margin=margins(l=text_px(rows, 12) + 10, t=top, b=50),
    )
    return fig


def explanation_steps(e: Explanation, row_token: str | None = None) -> list[str]:
    """The computation in five plain-text steps (tokens as the labels show them, a space ``␣``, a newline
    ``⏎``: escape before HTML); a model's q/k norm, rotary position, grouped-query heads, soft-capping and
    sliding window add a sentence each. ``row_token``: the token the map's row shows, where it is not the
    query's input (:func:`query_name`)."""
    s, hs = e.head_dim, e.heads * e.head_dim
    lines = [
        f"1. q_i = W_q × query input, from {e.query_from} ({e.dim} numbers); this head keeps its {s} of "
        f"the {hs}. k_j = W_k × key input, from {e.key_from}.",
        f"2. Multiply them number by number and add: q_i · k_j = {e.raw_score:.4f}. Scaling: {e.scale_text}, "
        f"so the score is {e.score:.4f}.",
    ]
    hidden = [f"{j}:{shown_token(e.key_tokens[j])} ({r})" for j, r in enumerate(e.mask_reasons) if r]
    mask = f"masked (weight 0): {', '.join(hidden)}" if hidden else "no key is masked"
    chosen = "is masked, so its weight is 0" if e.masked else f"gets {e.weight:.4f}"
    lines.append(
        f"3. Mask for this row: {mask}. Softmax over the row's {len(e.key_tokens)} scores: {key_name(e)} "
        f"{chosen} (the map shows {e.map_weight:.4f})."
    )
    lines.append(
        f"4. Output for this query: the weighted sum of this head's {len(e.key_tokens)} value vectors, "
        f"{s} numbers; this key contributes {e.weight:.4f} × v_j."
    )
    t = len(e.query_tokens)
    lines.append(
        f"5. Next: the {e.heads} heads' outputs are joined side by side ({t} × {hs}) and a last linear layer "
        f"combines the heads: it maps {hs} numbers to {e.dim} for each query."
    )
    if row_token is not None and row_token != e.query_token:  # a decoder's row: the word it wrote there
        lines[0] += (
            f" The map's row {e.query} shows {shown_token(row_token)}, the word written at that step; the query "
            f"vector is computed from the input at that position, {shown_token(e.query_token)}."
        )
    # why this weight: the dimensions that decide the score, and at layer 0 its token and position parts
    top = ", ".join(f"d{d} ({v:+.4f}, {share:.0%})" for d, v, share in e.deciding_dimensions(3))
    lines[1] += f" The dimensions that decide it (q_d × k_d, share of Σ|q_d × k_d|): {top}."
    if e.position_split is not None:
        parts = " + ".join(f"{name} {v:+.4f}" for name, v in e.position_split.items())
        lines[1] += f" Why this weight: the layer-0 score splits into {parts} = {sum(e.position_split.values()):.4f}."
    elif e.position_note and e.q_unrotated is not None:
        lines[1] += f" Why this weight: {e.position_note}."
    # what rotary, grouped-query models add, each where the model has it
    if e.norm:
        lines[0] += f" Normalisation: {e.norm}."
    if e.q_unrotated is not None:
        half = len(e.query_angles)
        part = f"the first {2 * half} of the {s} dimensions" if 2 * half < s else f"all {s} dimensions"
        size = f", scaled by {e.rotary_scale:.4g}" if not math.isclose(e.rotary_scale, 1.0) else ""
        lines[0] += (
            f" Rotary position: q_i and k_j are turned pair by pair (d, d + {half}) over {part}{size}, by their "
            f"positions' angles (pair 0: {e.query_angles[0]:.4f} and {e.key_angles[0]:.4f} rad, mod 2π), so "
            f"q_i · k_j sees the positions only through {e.query} − {e.key} = {e.query - e.key}."
        )
    if e.kv_head is not None and e.kv_heads is not None and e.kv_heads < e.heads:
        lines[0] += (
            f" Grouped-query attention: the {e.heads} query heads share {e.kv_heads} key/value heads, "
            f"{e.heads // e.kv_heads} each; this head reads key/value head {e.kv_head}."
        )
    if e.softcap is not None:
        capped = e.softcap * math.tanh(e.score / e.softcap)
        lines[1] += (
            f" Soft-capping: {e.softcap:g} × tanh(score / {e.softcap:g}) = {capped:.4f}, so no score passes "
            f"±{e.softcap:g}."
        )
    if e.sliding_window is not None:
        lines[2] += (
            f" Sliding window: a query sees only the {e.sliding_window} latest positions, itself included "
            f"(keys {max(0, e.query - e.sliding_window + 1)} to {e.query} here)."
        )
    return lines


def explanation_frame(e: Explanation, row_token: str | None = None) -> pd.DataFrame:
    """Every number of the panel as one long table (one value a row), ready for ``to_csv``.

    Columns: the cell (kind as the app names it, :func:`kind_word`; layer, head, query, key and their
    tokens; ``query_row_token``, the token the map's row shows, :func:`query_name`), ``quantity``, ``position``
    (a key position, where the quantity has one per key), ``dimension`` (within the head; for the rotary angles,
    the pair (d, d + r/2)) and ``value``.
    """
    rows: list[tuple] = []

    def add(quantity: str, value: float, position: int | None = None, dimension: int | None = None) -> None:
        rows.append((quantity, position, None if position is None else e.key_tokens[position], dimension, value))

    for name, vec in (
        ("q_i", e.q),
        ("k_j", e.k),
        ("q_i*k_j", e.product),
        ("output", e.output),
        ("model_output", e.model_output),
        ("q_i_unrotated", e.q_unrotated),
        ("k_j_unrotated", e.k_unrotated),
        ("query_angle", e.query_angles),
        ("key_angle", e.key_angles),
    ):
        for d, v in enumerate([] if vec is None else vec):
            add(name, float(v), dimension=d)
    for name, v in (
        ("raw_score", e.raw_score),
        ("scale", e.scale),
        ("score", e.score),
        ("weight", e.weight),
        ("map_weight", e.map_weight),
        ("head_factor", e.head_factor),
    ):
        add(name, float(v))
    for j in range(len(e.key_tokens)):
        add("row_raw_score", float(e.raw_scores[j]), j)
        add("row_mask_visible", float(e.mask[j]), j)
        add("row_score", float(e.scores[j]) if e.mask[j] else float("-inf"), j)
        add("row_weight", float(e.weights[j]), j)
        for d, v in enumerate(e.values[j]):
            add("value", float(v), j, d)
    frame = pd.DataFrame(rows, columns=["quantity", "position", "token", "dimension", "value"])
    cell = {
        "kind": kind_word(e),
        "layer": e.layer,
        "head": e.head,
        "query": e.query,
        "query_token": e.query_token,
        "query_row_token": e.query_token if row_token is None else row_token,
        "key": e.key,
        "key_token": e.key_token,
    }
    for i, (name, v) in enumerate(cell.items()):
        frame.insert(i, name, v)
    return frame.astype({"position": "Int64", "dimension": "Int64"})
