"""Comparison figures: two inputs' attention side by side, a signed difference heatmap, two
probability distributions as grouped bars, and how much each head's attention changed. The
``*_table`` builders give the same heatmaps as matrix views (:mod:`viz.matrixview`: a table the
browser draws in milliseconds, no Plotly), which the pages show; the figures go into HTML exports.

Like every figure in ``viz``, rows are queries and columns keys (named on the axes), labels are
unique ``"i:token"`` strings and every caller text is escaped, because plotly reads markup.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from viz.attention import attention_heatmap, visible_chars
from viz.common import (
    COLORSCALE,
    DIVERGING,
    FONT_SIZE,
    axis_titles,
    check_matrix,
    check_stack,
    escape,
    grid_domains,
    house_layout,
    hover_template,
    make_figure,
    number_text,
    plot_labels,
    unique_labels,
    z_values,
)
from viz.matrixview import matrix_payload

PAIR_COLORS = ("#0072B2", "#E69F00")  # A / before, B / after (Okabe-Ito, colour-blind safe)
TOP_NOTE = "rows with one weight left out of the colour scale's top"  # what scale_top leaves out, as titles say it


def trivial_rows(m: np.ndarray) -> np.ndarray:
    """Rows of a ``(queries, keys)`` weight map with one non-zero weight: a causal map's first row, which can
    only attend to itself and so always holds 1."""
    finite = np.where(np.isfinite(m), m, 0.0)
    return (finite > 0).sum(axis=-1) == 1


def scale_top(*maps: np.ndarray) -> tuple[float, bool]:
    """One colour scale's top for weight ``maps`` set side by side: their largest weight outside rows with
    one non-zero weight (:func:`trivial_rows`: as the top, that 1 would wash every other cell out), and
    whether any row was left out. The largest weight when no other row has one; 1 when all are 0."""
    kept, left_out = [], False
    for m in maps:
        m = np.asarray(m, dtype=float)
        rows = trivial_rows(m)
        left_out |= bool(rows.any() and not rows.all())
        kept.append(m[~rows] if not rows.all() else m)
    values = np.concatenate([k[np.isfinite(k)].ravel() for k in kept]) if kept else np.zeros(0)
    top = float(values.max()) if values.size and values.max() > 0 else 1.0
    return top, left_out


def difference_heatmap(
    diff,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "difference of attention weights",
    query_name: str = "query",
    key_name: str = "key",
    value: str = "difference",
) -> go.Figure:
    """A signed ``(queries, keys)`` difference on a diverging scale centred at 0 (white = no change).

    The scale is symmetric (±the largest absolute value), so equal changes up and down get equally
    strong colours; an all-zero difference gets the range ±1 and stays white.
    """
    key_tokens = query_tokens if key_tokens is None else key_tokens
    m = check_matrix(diff, query_tokens, key_tokens, name="difference")
    finite = np.abs(m[np.isfinite(m)])
    bound = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    return attention_heatmap(
        m,
        query_tokens,
        key_tokens,
        title=title,
        query_name=query_name,
        key_name=key_name,
        value=value,
        colorscale=DIVERGING,
        zmid=0.0,
        zmin=-bound,
        zmax=bound,
    )


def pair_heatmaps(
    a,
    a_tokens: tuple[Sequence[str], Sequence[str]],
    b,
    b_tokens: tuple[Sequence[str], Sequence[str]],
    *,
    names: tuple[str, str] = ("A", "B"),
    title: str = "attention of A and B",
    query_name: str = "query",
    key_name: str = "key",
) -> go.Figure:
    """Two ``(queries, keys)`` heatmaps side by side on one colour scale; each keeps its own tokens.

    ``a_tokens`` and ``b_tokens`` are ``(query tokens, key tokens)`` pairs; the inputs may differ in
    length (that is why they are two plots and not one difference).
    """
    ma = check_matrix(a, *a_tokens, name=f"{names[0]} weights")
    mb = check_matrix(b, *b_tokens, name=f"{names[1]} weights")
    q_title, k_title = axis_titles(query_name, key_name)
    wide = max(ma.shape[1], mb.shape[1]) > 8
    spans = grid_domains(2, 0.12)  # what make_subplots(1, 2, horizontal_spacing=0.12) lays out
    traces, layout, annotations = [], {}, []
    for i, (m, (rows, cols), name) in enumerate(zip((ma, mb), (a_tokens, b_tokens), names)):
        suffix = "" if i == 0 else "2"
        traces.append(
            dict(
                type="heatmap",
                z=z_values(m),
                x=plot_labels(cols),
                y=plot_labels(rows),
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                coloraxis="coloraxis",
                hovertemplate=hover_template(query_name, key_name, extra=f"{escape(name)}<br>"),
                xgap=1,
                ygap=1,
            )
        )
        layout[f"xaxis{suffix}"] = dict(
            domain=spans[i],
            anchor=f"y{suffix}",
            type="category",
            title=dict(text=k_title),
            tickangle=-60 if wide else 0,
        )
        layout[f"yaxis{suffix}"] = dict(  # one query title: a second would overlap the first plot
            domain=(0.0, 1.0),
            anchor=f"x{suffix}",
            type="category",
            autorange="reversed",
            title=dict(text=q_title if i == 0 else None),
        )
        annotations.append(
            dict(
                text=escape(name),
                x=sum(spans[i]) / 2,
                y=1.0,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=FONT_SIZE),
            )
        )
    zmax, left_out = scale_top(ma, mb)
    n = max(ma.shape[0], mb.shape[0])
    bar_title = f"weight<br>({TOP_NOTE})" if left_out else "weight"
    layout.update(
        house_layout(title=escape(title), height=int(min(max(400, 180 + 28 * n), 1000))),
        annotations=annotations,
        coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=zmax, colorbar=dict(title=dict(text=bar_title))),
    )
    return make_figure(traces, layout)


def visible_probs(probs: Mapping[str, float]) -> dict[str, float]:
    """A next-character distribution keyed by its characters as the axes draw them (spaces, line breaks visible)."""
    return dict(zip(visible_chars(list(probs)), probs.values()))


def pair_labels(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]]) -> tuple[list[str], ...] | None:
    """Axis labels for B − A when the two inputs line up axis by axis: a token, or ``"a→b"`` where they
    differ; None when any axis has a different length (there is no position-by-position difference)."""
    if any(len(x) != len(y) for x, y in zip(a, b)):
        return None
    return tuple([x if x == y else f"{x}→{y}" for x, y in zip(xs, ys)] for xs, ys in zip(a, b))


def distribution_bars(
    a: Mapping[str, float],
    b: Mapping[str, float],
    *,
    names: tuple[str, str] = ("before", "after"),
    top: int | None = 10,
    title: str = "probabilities",
    x_title: str = "outcome",
) -> go.Figure:
    """Two probability distributions over the same outcomes as grouped bars.

    With ``top`` only the outcomes most likely in either distribution are drawn (by the larger of
    the two probabilities), likeliest first; the hover shows both and their difference.
    """
    keys = list(dict.fromkeys([*a, *b]))
    if not keys:
        raise ValueError("both distributions are empty; give at least one outcome")
    if top:  # the likeliest first; without ``top`` the outcomes keep their given order (e.g. classes)
        keys = sorted(keys, key=lambda k: -max(a.get(k, 0.0), b.get(k, 0.0)))[:top]
    labels = [escape(str(k)) for k in keys]
    pa, pb = [float(a.get(k, 0.0)) for k in keys], [float(b.get(k, 0.0)) for k in keys]
    delta = [y - x for x, y in zip(pa, pb)]
    n0, n1 = (escape(n) for n in names)
    traces = [
        dict(
            type="bar",
            name=name,
            x=labels,
            y=[round(p, 4) for p in probs],
            marker=dict(color=color),
            text=[f"{p:.0%}" for p in probs],
            textposition="outside",
            textfont=dict(size=12),
            customdata=delta,
            hovertemplate=f"{x_title}: %{{x}}<br>{name}: %{{y:.4f}}<br>{n1} − {n0}: %{{customdata:+.4f}}<extra></extra>",
            cliponaxis=False,
        )
        for name, probs, color in ((n0, pa, PAIR_COLORS[0]), (n1, pb, PAIR_COLORS[1]))
    ]
    layout = house_layout(title=escape(title), height=420)
    layout.update(
        barmode="group",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1.0, xanchor="right"),
        xaxis=dict(title=dict(text=escape(x_title)), type="category"),
        yaxis=dict(title=dict(text="probability"), rangemode="tozero", range=[0, max(max(pa), max(pb), 0.05) * 1.2]),
    )
    return make_figure(traces, layout)


def change_grid(
    change,
    *,
    off: Collection[tuple[int, int]] = (),
    title: str = "how much each head's attention changed",
    value: str = "largest |Δ weight|",
) -> go.Figure:
    """A ``(layers, heads)`` summary of attention change; heads in ``off`` (layer, head) are marked "off"."""
    m = check_stack(change, ndim=2, name="change per head (layers, heads)")
    L, H = m.shape
    text = [["off" if (l, h) in off else number_text(m[l, h], 2) for h in range(H)] for l in range(L)]
    trace = dict(
        type="heatmap",
        z=z_values(m),
        x=[f"head {h}" for h in range(H)],
        y=[f"layer {l}" for l in range(L)],
        colorscale="Oranges",
        zmin=0.0,
        zmax=max(float(m.max()) if m.size else 0.0, 1e-6),
        text=text,
        texttemplate="%{text}",
        textfont=dict(size=max(12, FONT_SIZE - 2)),
        hovertemplate=f"%{{y}} · %{{x}}<br>{value}: %{{z:.4f}}<extra></extra>",
        colorbar=dict(thickness=14, title=dict(text=escape(value))),
        xgap=2,
        ygap=2,
    )
    layout = house_layout(title=escape(title), height=int(min(max(260, 120 + 48 * L), 700)))
    layout.update(
        xaxis=dict(title=dict(text="head (column)"), type="category", side="top"),
        yaxis=dict(title=dict(text="layer (row)"), type="category", autorange="reversed"),
    )
    return make_figure([trace], layout)


def difference_table(
    diff,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "difference of attention weights",
    query_name: str = "query",
    key_name: str = "key",
) -> dict:
    """:func:`difference_heatmap` as a matrix view: signed, on a diverging scale symmetric about 0."""
    key_tokens = query_tokens if key_tokens is None else key_tokens
    m = check_matrix(diff, query_tokens, key_tokens, name="difference")
    return matrix_payload(
        m,
        unique_labels(query_tokens),
        unique_labels(key_tokens),
        name=title,
        row_title=query_name,
        col_title=key_name,
        signed=True,
    )


def pair_tables(
    a,
    a_tokens: tuple[Sequence[str], Sequence[str]],
    b,
    b_tokens: tuple[Sequence[str], Sequence[str]],
    *,
    names: tuple[str, str] = ("A", "B"),
    title: str = "attention",
    query_name: str = "query",
    key_name: str = "key",
) -> tuple[dict, dict]:
    """:func:`pair_heatmaps` as two matrix views on one colour range: 0 to the larger maximum outside rows
    with one weight (:func:`scale_top`; the titles say when such a row was left out)."""
    ma = check_matrix(a, *a_tokens, name=f"{names[0]} weights")
    mb = check_matrix(b, *b_tokens, name=f"{names[1]} weights")
    top, left_out = scale_top(ma, mb)
    note = f" · {TOP_NOTE}" if left_out else ""
    return tuple(
        matrix_payload(
            m,
            unique_labels(rows),
            unique_labels(cols),
            name=f"{name}: {title}{note}",
            row_title=query_name,
            col_title=key_name,
            signed=False,
            limits=(0.0, max(top, 1e-6)),
        )
        for m, (rows, cols), name in zip((ma, mb), (a_tokens, b_tokens), names)
    )


def change_table(
    change, *, off: Collection[tuple[int, int]] = (), title: str = "how much each head's attention changed"
) -> dict:
    """:func:`change_grid` as a matrix view: a row per layer, a column per head, the heads in ``off``
    outlined and named "switched off"."""
    m = check_stack(change, ndim=2, name="change per head (layers, heads)")
    L, H = m.shape
    return matrix_payload(
        m,
        [f"layer {l}" for l in range(L)],
        [f"head {h}" for h in range(H)],
        name=title,
        row_title="layer",
        col_title="head",
        signed=False,
        marks=sorted(off),
        mark_label="switched off",
    )
