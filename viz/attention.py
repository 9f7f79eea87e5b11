"""Attention-weight figures of trained models: one head, a layer × head grid, the causal mask step
by step, one query's weights.

Every figure names its query axis (rows) and key axis (columns), uses unique ``"i:token"``
labels, and shows query, key and weight on hover. Labels are escaped, because plotly reads
``<b>``, ``<a href>`` and friends in text as markup.
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
    axis_titles,
    check_matrix,
    check_stack,
    escape,
    full_label_hover,
    grid_domains,
    head_name,
    heatmap,
    house_layout,
    hover_labels,
    hover_template,
    make_figure,
    margins,
    number_text,
    plot_labels,
    text_px,
    title_px,
    to_numpy,
    unique_labels,
    z_values,
)

MAX_TEXT_CELLS = 144  # values are printed in the cells up to 12 × 12; beyond, on hover only
VISIBLE_CHARS = {"\n": "⏎", " ": "␣", "\t": "⇥", "\r": "↵"}


def visible_chars(chars: Sequence[str]) -> list[str]:
    """Characters with newlines, spaces and tabs drawn as visible symbols (``"⏎"``, ``"␣"``)."""
    return ["".join(VISIBLE_CHARS.get(ch, ch) for ch in c) for c in chars]


def _gap(m: np.ndarray) -> int:
    """A 1-pixel gap between the cells of small matrices; none on larger ones, where it doubles the
    browser's drawing time (plotly draws gapped cells one by one)."""
    return 1 if m.size <= MAX_TEXT_CELLS else 0


def _decimals(m: np.ndarray) -> int | None:
    """Two decimals in the cells of small matrices, hover only beyond."""
    return 2 if m.size <= MAX_TEXT_CELLS else None


def _weights(
    m: np.ndarray, rows: list[str], cols: list[str], *, title: str, query_name: str, key_name: str, **kw
) -> go.Figure:
    """A (queries, keys) heatmap in this module's style: query/key axis names, 2 decimals in small matrices."""
    q_title, k_title = axis_titles(query_name, key_name)
    kw.setdefault("hover", hover_template(query_name, key_name, kw.get("value", "weight")))
    return heatmap(
        m, rows, cols, title=title, row_title=q_title, col_title=k_title, decimals=_decimals(m), gap=_gap(m), **kw
    )


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "attention weights",
    query_name: str = "query",
    key_name: str = "key",
    highlight_row: int | None = None,
    value: str = "weight",
    colorscale: str | list = COLORSCALE,
    zmid: float | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    tickangle: int | None = None,
) -> go.Figure:
    """One ``(queries, keys)`` matrix over tokens, by default one head's weights; ``key_tokens``
    default to the query tokens.

    ``query_name``/``key_name`` name the axes (e.g. ``"query = English"``); ``highlight_row``
    draws a frame around one query's row; ``value`` names what the cells hold, and
    ``colorscale``/``zmid``/``zmin``/``zmax`` colour signed values (e.g. a difference).
    ``tickangle`` turns the column labels (default: level unless they would overlap on a wide page).
    """
    key_tokens = query_tokens if key_tokens is None else key_tokens
    m = check_matrix(weights, query_tokens, key_tokens, name="attention weights" if value == "weight" else value)
    rows, cols = plot_labels(query_tokens), plot_labels(key_tokens)
    shapes = None
    if highlight_row is not None and 0 <= highlight_row < len(rows):
        frame = dict(type="rect", xref="x", yref="y", x0=-0.5, x1=len(cols) - 0.5, line=dict(color="#D55E00", width=3))
        shapes = [frame | dict(y0=highlight_row - 0.5, y1=highlight_row + 0.5)]
    return _weights(
        m,
        rows,
        cols,
        title=escape(title),
        query_name=query_name,
        key_name=key_name,
        shapes=shapes,
        value=value,
        colorscale=colorscale,
        zmid=zmid,
        zmin=zmin,
        zmax=zmax,
        full_rows=hover_labels(query_tokens),
        full_cols=hover_labels(key_tokens),
        tickangle=tickangle,
    )


GRID_WIDTH = 1200  # the width a full-width grid gets on a wide page, to size its rows from


def head_grid(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "attention per layer and head",
    query_name: str = "query",
    key_name: str = "key",
) -> go.Figure:
    """A grid of heatmaps, layers as rows and heads as columns, sharing one colour scale.

    ``weights`` is ``(layers, heads, queries, keys)``. Each column is titled once ("head h") and
    each row on its left axis ("layer l · query (row)"), so titles never crowd small plots; tick
    labels appear on the outer plots only, and the rows are as tall as the cells are wide on a
    full-width page. The spec is written out in one piece rather than through make_subplots and
    per-axis updates, which took ten times longer for a 3 × 8 grid and sat on every page rerun.
    """
    w = check_stack(weights, ndim=4, name="attention (layers, heads, queries, keys)")
    L, H, Tq, Tk = w.shape
    if not L or not H:
        raise ValueError(f"attention has {L} layers and {H} heads; the grid needs at least one of each")
    key_tokens = query_tokens if key_tokens is None else key_tokens
    check_matrix(w[0, 0], query_tokens, key_tokens, name="attention")
    rows, cols = plot_labels(query_tokens), plot_labels(key_tokens)
    full_rows, full_cols = hover_labels(query_tokens), hover_labels(key_tokens)
    q_title, k_title = axis_titles(query_name, key_name)
    x_spans = grid_domains(H, min(0.04, 0.3 / H))
    y_spans = grid_domains(L, min(0.08, 0.4 / L))[::-1]  # layer 0 at the top
    tick = dict(size=12)
    traces, layout, annotations = [], {}, []
    for l in range(L):
        for h in range(H):
            i = l * H + h + 1
            suffix = "" if i == 1 else str(i)
            hover = hover_template(query_name, key_name, extra=f"{head_name(l, h)}<br>")
            customdata, hover = full_label_hover(rows, cols, full_rows, full_cols, hover)
            traces.append(
                dict(
                    type="heatmap",
                    z=z_values(w[l, h]),
                    x=cols,
                    y=rows,
                    xaxis=f"x{suffix}",
                    yaxis=f"y{suffix}",
                    coloraxis="coloraxis",
                    xgap=_gap(w[l, h]),
                    ygap=_gap(w[l, h]),
                    hovertemplate=hover,
                    customdata=customdata,
                )
            )
            bottom, left = l == L - 1, h == 0
            layout[f"xaxis{suffix}"] = dict(
                domain=x_spans[h],
                anchor=f"y{suffix}",
                type="category",
                tickfont=tick,
                showticklabels=bottom,
                automargin=False,
                tickangle=-60 if Tk > 6 else 0,
                title=dict(text=k_title if bottom and left else None),
            )
            layout[f"yaxis{suffix}"] = dict(
                domain=y_spans[l],
                anchor=f"x{suffix}",
                type="category",
                tickfont=tick,
                showticklabels=left,
                automargin=False,
                autorange="reversed",
                title=dict(text=f"layer {l} · {q_title}" if left else None),
            )
    for h in range(H):  # one title per column, above the first row
        annotations.append(
            dict(
                text=f"head {h}",
                x=sum(x_spans[h]) / 2,
                y=y_spans[0][1],
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=FONT_SIZE),
            )
        )
    zmax = float(w.max()) if w.size and w.max() > 0 else 1.0
    left_px = text_px(rows, tick["size"]) + 2.5 * FONT_SIZE + 10
    plot_px = (GRID_WIDTH - left_px - 100) / H * (1 - min(0.04, 0.3 / H))  # one plot's width
    row_px = int(min(max(150, plot_px * Tq / max(Tk, 1) + 30), 420))  # square cells, within reason
    full_title = f"{escape(title)} · rows: {q_title}, columns: {k_title}"
    x_labels = text_px(cols, tick["size"]) * 0.87 if Tk > 6 else 1.6 * tick["size"]
    layout.update(
        house_layout(
            title=full_title,
            height=int(title_px(full_title) + 1.6 * FONT_SIZE + x_labels + 2.5 * FONT_SIZE + L * row_px),
        ),
        annotations=annotations,
        coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=zmax, colorbar=dict(title=dict(text="weight"))),
        margin=margins(l=left_px, t=title_px(full_title) + 1.6 * FONT_SIZE, b=x_labels + 2.5 * FONT_SIZE),
    )
    return make_figure(traces, layout)


CAUSAL_STEPS = ("scores", "mask", "masked", "softmax")


def causal_step_figures(
    scores, mask, masked, weights, tokens: Sequence[str], *, only: Sequence[str] | None = None
) -> dict[str, go.Figure]:
    """The causal mask in four figures: ``"scores"``, ``"mask"``, ``"masked"``, ``"softmax"``.

    ``scores`` are q·k/√s before masking, ``mask`` is True where a query may see a key,
    ``masked`` are the scores with -inf above the diagonal (drawn blank), ``weights`` their softmax.
    ``only`` builds just the named figures (a page that shows one step at a time draws one).
    """
    wanted = CAUSAL_STEPS if only is None else tuple(only)
    if unknown := [name for name in wanted if name not in CAUSAL_STEPS]:
        raise ValueError(f"unknown causal step(s) {unknown}; choose from {CAUSAL_STEPS}")
    s = check_matrix(scores, tokens, tokens, name="scores")
    allowed = check_matrix(mask, tokens, tokens, name="mask") > 0
    mk = check_matrix(masked, tokens, tokens, name="masked scores")
    w = check_matrix(weights, tokens, tokens, name="softmax weights")
    labels = plot_labels(tokens)
    bound = float(np.abs(s).max()) if s.size else 1.0
    kw = dict(query_name="query", key_name="key")
    small = s.size <= MAX_TEXT_CELLS

    def masked_figure() -> go.Figure:
        blank = np.where(np.isfinite(mk), mk, np.nan)
        text = np.where(np.isfinite(mk), np.vectorize(lambda v: number_text(v, 2))(blank), "") if small else None
        return _weights(
            mk,
            labels,
            labels,
            title="3. masked scores: the future (−∞) is blank",
            value="score",
            colorscale=DIVERGING,
            zmid=0.0,
            zmin=-bound,
            zmax=bound,
            text=text,
            **kw,
        )

    build = {
        "scores": lambda: _weights(
            s,
            labels,
            labels,
            title="1. scores q·k / √s (nothing hidden yet)",
            value="score",
            colorscale=DIVERGING,
            zmid=0.0,
            zmin=-bound,
            zmax=bound,
            **kw,
        ),
        "mask": lambda: _weights(
            allowed.astype(float),
            labels,
            labels,
            title="2. causal mask: add 0 where the key is this character or earlier, −∞ for the future",
            value="may attend",
            colorscale=[[0, "#FFFFFF"], [1, "#999999"]],
            zmin=0.0,
            zmax=1.0,
            text=np.where(allowed, "0", "−∞") if small else None,
            hover=hover_template("query", "key", "may attend (1 = yes)"),
            **kw,
        ),
        "masked": masked_figure,
        "softmax": lambda: _weights(
            w,
            labels,
            labels,
            title="4. softmax of each row: weights ≥ 0, summing to 1, zero for the future",
            **kw,
        ),
    }
    return {name: build[name]() for name in CAUSAL_STEPS if name in wanted}


def query_bar(
    weights,
    key_tokens: Sequence[str],
    *,
    query_label: str,
    title: str | None = None,
    key_name: str = "key",
    color: str = "#0072B2",
) -> go.Figure:
    """A bar chart of one query's weights over the keys; ``query_label`` names the query."""
    v = to_numpy(weights)
    if v.ndim != 1:
        raise ValueError(f"one query's weights must be 1-D (keys,); got shape {v.shape}. Pick one row first.")
    if len(key_tokens) != v.shape[0]:
        raise ValueError(f"the query has {v.shape[0]} weights but {len(key_tokens)} key tokens were given")
    labels = plot_labels(key_tokens)
    query = escape(query_label)
    bar = dict(
        type="bar",
        x=labels,
        y=[round(float(x), 4) for x in v],
        text=[number_text(x, 2) for x in v] if len(v) <= 40 else None,
        textposition="outside",
        textfont=dict(size=12),
        marker=dict(color=color),
        hovertemplate=f"query: {query}<br>{key_name}: %{{x}}<br>weight: %{{y:.4f}}<extra></extra>",
        cliponaxis=False,
    )
    layout = house_layout(title=escape(title) if title else f"what query {query} attended to", height=400)
    layout.update(
        xaxis=dict(title=dict(text=f"{key_name} (x axis)"), type="category", tickangle=0 if len(v) <= 10 else -60),
        yaxis=dict(title=dict(text=f"weight from query {query}"), rangemode="tozero"),
    )
    return make_figure([bar], layout)


def heads_heatmap(
    weights, key_tokens: Sequence[str], *, query_label: str, key_name: str = "key", title: str | None = None
) -> go.Figure:
    """One query's weights for every head of a layer, ``(heads, keys)``, plus a mean row."""
    w = check_stack(weights, ndim=2, name="one query's weights per head (heads, keys)")
    if len(key_tokens) != w.shape[1]:
        raise ValueError(f"the weights have {w.shape[1]} keys but {len(key_tokens)} key tokens were given")
    m = np.vstack([w, w.mean(axis=0, keepdims=True)])
    rows = [f"head {h}" for h in range(w.shape[0])] + ["mean"]
    query = escape(query_label)
    fig = _weights(
        m,
        rows,
        plot_labels(key_tokens),
        title=escape(title) if title else f"query {query}: one row per head",
        query_name=f"head (query {query})",
        key_name=key_name,
    )
    return fig


def weights_frame(weights, query_tokens: Sequence[str], key_tokens: Sequence[str] | None = None) -> pd.DataFrame:
    """The weights as a table with unique (unescaped) labels, for CSV downloads."""
    key_tokens = query_tokens if key_tokens is None else key_tokens
    m = check_matrix(weights, query_tokens, key_tokens, name="attention weights")
    frame = pd.DataFrame(np.round(m, 6), index=unique_labels(query_tokens), columns=unique_labels(key_tokens))
    frame.index.name = "query \\ key"
    return frame


def grid_frame(weights, query_tokens: Sequence[str], key_tokens: Sequence[str] | None = None) -> pd.DataFrame:
    """Every layer and head of ``(layers, heads, queries, keys)`` weights as one long table (a row per
    layer, head, query and key), for the CSV download of a head grid."""
    key_tokens = query_tokens if key_tokens is None else key_tokens
    w = check_stack(weights, ndim=4, name="attention (layers, heads, queries, keys)")
    L, H, Tq, Tk = w.shape
    if len(query_tokens) != Tq or len(key_tokens) != Tk:
        raise ValueError(
            f"attention is {Tq} × {Tk} but {len(query_tokens)} query and {len(key_tokens)} key tokens were given"
        )
    index = pd.MultiIndex.from_product(
        [range(L), range(H), unique_labels(query_tokens), unique_labels(key_tokens)],
        names=["layer", "head", "query", "key"],
    )
    return pd.DataFrame({"weight": np.round(w.reshape(-1), 6)}, index=index)
