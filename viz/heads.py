"""Head-finder figures and tables: every head of a model on two corpus scores (a scatter), the top heads by
one score, and one head's example lines by decile. Rows come from ``python -m model heads`` (a list of
``{"kind", "layer", "head", <metric>: value or None}``); no streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz.common import HEAD_COLORS, house_layout, make_figure


def head_name(row: dict) -> str:
    return f"{row['kind']} · layer {row['layer']} · head {row['head']}"


def head_id(row: dict) -> str:
    """A head as one URL-safe string: ``"encoder-1-2"``."""
    return f"{row['kind']}-{row['layer']}-{row['head']}"


# scores that are shares of a row's weight (0..1) or a correlation (-1..1): their axes always show the whole
# range, so eight heads all at 0.05 read as the flat crowd they are, not as a spread (issue 43)
RANGES = {
    "previous": (0, 1),
    "first": (0, 1),
    "self": (0, 1),
    "induction": (0, 1),
    "duplicate": (0, 1),
    "forward": (0, 1),
    "monotonic": (-1, 1),
}
LABELLED = 48  # up to this many heads every point is labelled; past it only the top few on each axis
TOP_LABELS = 5


def axis_range(metric: str) -> list[float] | None:
    """The fixed axis range of ``metric`` (with or without ``_nosink``), a little wider than the scores' own."""
    span = RANGES.get(metric.removesuffix("_nosink"))
    if span is None:
        return None
    pad = 0.04 * (span[1] - span[0])
    return [span[0] - pad, span[1] + pad]


def point_labels(rows: Sequence[dict], x: str, y: str) -> set[str]:
    """The :func:`head_id` of every head whose point carries its name: all of them in a small model, else the
    top :data:`TOP_LABELS` on each axis."""
    usable = [r for r in rows if r.get(x) is not None and r.get(y) is not None]
    if len(usable) <= LABELLED:
        return {head_id(r) for r in usable}
    top = sorted(usable, key=lambda r: -r[y])[:TOP_LABELS] + sorted(usable, key=lambda r: -r[x])[:TOP_LABELS]
    return {head_id(r) for r in top}


def head_scatter(rows: Sequence[dict], x: str, y: str, *, selected: str | None = None, title: str = "") -> go.Figure:
    """Every head as a point at (``x``, ``y``), one trace per kind of attention; a head whose ``x`` or ``y``
    does not apply is left out. ``customdata`` holds each point's :func:`head_id` (a click selects it); points
    are named ``L1 H2`` (:func:`point_labels`), and share scores keep their whole range (:func:`axis_range`)."""
    named = point_labels(rows, x, y)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    traces = []
    for i, kind in enumerate(kinds):
        shown = [r for r in rows if r["kind"] == kind and r.get(x) is not None and r.get(y) is not None]
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
                text=[f"layer {r['layer']} · head {r['head']}" for r in shown],
                hovertemplate=f"{kind} · %{{text}}<br>{x} %{{x:.3f}}<br>{y} %{{y:.3f}}<extra></extra>",
                marker=dict(
                    color=colour,
                    size=[16 if head_id(r) == selected else 10 for r in shown],
                    line=dict(width=[3 if head_id(r) == selected else 0 for r in shown], color="#000000"),
                ),
            )
        )
    layout = house_layout(title=title or f"Every head: {y} against {x}", height=460)
    layout.update(
        xaxis=dict(title=dict(text=f"{x} (mean over the corpus)"), range=axis_range(x)),
        yaxis=dict(title=dict(text=f"{y} (mean over the corpus)"), range=axis_range(y)),
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
