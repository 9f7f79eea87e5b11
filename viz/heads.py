"""Head-finder figures and tables: every head of a model on two corpus scores (a scatter), the top heads by
one score, and one head's example lines by decile. Rows come from ``python -m model heads`` (a list of
``{"kind", "layer", "head", <metric>: value or None}``); no streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from model.analysis.measures import MEASURES
from viz.common import HEAD_COLORS, house_layout, make_figure
from viz.common import head_name as one_name


def head_name(row: dict) -> str:
    """A head finder row's head, named as every page names a head (``"encoder L0 H3"``)."""
    return one_name(row["layer"], row["head"], row["kind"])


def head_id(row: dict) -> str:
    """A head as one URL-safe string: ``"encoder-1-2"``."""
    return f"{row['kind']}-{row['layer']}-{row['head']}"


# scores that are shares of a row's weight (0..1) or a correlation (-1..1): their axes always show the whole
# range, so eight heads all at 0.05 read as the flat crowd they are, not as a spread (issue 43)
RANGES = {m.name: m.range for m in MEASURES if m.range[1] is not None}  # from the measures' records
TOP_LABELS = 3  # heads named on the chart, per axis: the top few on each score (hover names every point)
# how near two labels may sit, as a share of each axis's span: "L0 H2" measures 33 × 19 px in Chromium, and on
# a 390-px phone the plotting area is about 250 × 290 px
LABEL_GAP = (0.15, 0.07)


def axis_range(metric: str, values: Sequence[float] = ()) -> list[float] | None:
    """The axis of ``metric`` (with or without ``_nosink``), a little wider than the scores it holds: a share or
    a correlation keeps its whole range (:data:`RANGES`), a score that is never negative (entropy, distance)
    starts at 0. Either way heads whose scores differ by a hair (0.046 to 0.053) sit together as the crowd
    they are; fitted to their own spread, their noise would fill the chart like structure. None
    (Plotly's own range) for a score that goes below 0 and has no fixed range."""
    span = RANGES.get(metric.removesuffix("_nosink"))
    if span is None:
        if not values or min(values) < 0:
            return None
        span = (0, max(values) or 1)
    pad = 0.04 * (span[1] - span[0])
    return [span[0] - pad, span[1] + pad]


def plotted(rows: Sequence[dict], x: str, y: str) -> list[dict]:
    """The heads that have both scores: the points of the scatter."""
    return [r for r in rows if r.get(x) is not None and r.get(y) is not None]


def _width(metric: str, values: Sequence[float]) -> float:
    """How much of ``metric`` the axis spans (the scores' own spread when :func:`axis_range` leaves it free)."""
    lo, hi = axis_range(metric, values) or (min(values, default=0), max(values, default=1))
    return (hi - lo) or 1.0


def point_labels(rows: Sequence[dict], x: str, y: str) -> set[str]:
    """The :func:`head_id` of every head whose point carries its name: the top :data:`TOP_LABELS` on each axis,
    best first, each only where its label keeps :data:`LABEL_GAP` from every label already placed, so no
    two names run together ("L1L0H0H1"). Every point still names itself on hover."""
    points = plotted(rows, x, y)
    gaps = [gap * _width(m, [r[m] for r in points]) for m, gap in zip((x, y), LABEL_GAP)]
    best = [sorted(points, key=lambda r: -r[m])[:TOP_LABELS] for m in (y, x)]
    placed: list[dict] = []
    for row in {head_id(r): r for pair in zip(*best) for r in pair}.values():
        if all(any(abs(row[m] - p[m]) >= g for m, g in zip((x, y), gaps)) for p in placed):
            placed.append(row)
    return {head_id(r) for r in placed}


def head_scatter(rows: Sequence[dict], x: str, y: str, *, selected: str | None = None, title: str = "") -> go.Figure:
    """Every head as a point at (``x``, ``y``), one trace per kind of attention; a head whose ``x`` or ``y``
    does not apply is left out. ``customdata`` holds each point's :func:`head_id` (a click selects it); points
    are named ``L1 H2`` where the names stay apart (:func:`point_labels`), and the axes do not stretch a tiny
    spread over the whole chart (:func:`axis_range`)."""
    named, points = point_labels(rows, x, y), plotted(rows, x, y)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    traces = []
    for i, kind in enumerate(kinds):
        shown = [r for r in points if r["kind"] == kind]
        if not shown:
            continue
        colour = HEAD_COLORS[i % len(HEAD_COLORS)]
        traces.append(
            dict(
                type="scatter",
                mode="markers+text",
                name=kind,
                textposition="top center",
                texttemplate=[f"L{r['layer']} H{r['head']}" if head_id(r) in named else "" for r in shown],
                x=[r[x] for r in shown],
                y=[r[y] for r in shown],
                customdata=[head_id(r) for r in shown],
                text=[one_name(r["layer"], r["head"]) for r in shown],
                hovertemplate=f"{kind} %{{text}}<br>{x} %{{x:.3f}}<br>{y} %{{y:.3f}}<extra></extra>",
                marker=dict(
                    color=colour,
                    size=[16 if head_id(r) == selected else 10 for r in shown],
                    line=dict(width=[3 if head_id(r) == selected else 0 for r in shown], color="#000000"),
                ),
            )
        )
    layout = house_layout(title=title or f"Every head: {y} against {x}", height=460)
    layout.update(
        xaxis=dict(title=dict(text=f"{x} (mean over the corpus)"), range=axis_range(x, [r[x] for r in points])),
        yaxis=dict(title=dict(text=f"{y} (mean over the corpus)"), range=axis_range(y, [r[y] for r in points])),
        legend=dict(title=dict(text="attention")),
        clickmode="event+select",
    )
    return make_figure(traces, layout)


def top_heads(rows: Sequence[dict], metric: str, n: int, *, largest: bool = True) -> pd.DataFrame:
    """The ``n`` heads with the largest (or smallest) ``metric``; heads where it does not apply are left out."""
    scored = [r for r in rows if r.get(metric) is not None]
    scored.sort(key=lambda r: (-r[metric] if largest else r[metric], r["kind"], r["layer"], r["head"]))
    return pd.DataFrame(
        [
            {"rank": i + 1, "kind": r["kind"], "layer": r["layer"], "head": r["head"], metric: r[metric]}
            for i, r in enumerate(scored[:n])
        ]
    )


def decile_table(row: dict, metric: str, lines: Sequence[str], links: Sequence[str]) -> pd.DataFrame:
    """One head's example lines for ``metric`` (the top line, then one per decile, highest first), each with
    its score on that line and a link to open it in the explorer (``links[i]`` for line ``i``)."""
    examples = row.get("examples", {}).get(metric, [])
    names = ["top"] + [f"decile {d}" for d in range(1, len(examples))]
    return pd.DataFrame(
        [
            {"which": name, "score": score, "line": lines[i], "open": links[i]}
            for name, (i, score) in zip(names, examples)
            if i < min(len(lines), len(links))  # a corpus edited since the scores were stored has lost it
        ]
    )


def pattern_table(scores: np.ndarray, kind: str, n: int) -> pd.DataFrame:
    """The ``n`` heads of ``kind`` whose ``(layers, heads)`` pattern scores are highest (NaN last)."""
    L, H = scores.shape
    flat = [(float(scores[l, h]), l, h) for l in range(L) for h in range(H) if np.isfinite(scores[l, h])]
    flat.sort(key=lambda t: (-t[0], t[1], t[2]))
    return pd.DataFrame(
        [{"rank": i + 1, "kind": kind, "layer": l, "head": h, "score": s} for i, (s, l, h) in enumerate(flat[:n])]
    )
