"""Classroom figures: the histogram of a round's answers (whole-number count ticks), and the candidate
heads a round shows with its question (a ``Question``'s ``figure`` numbers): all four in one grid for the
projector, or one head a figure, so a phone shows each map at its full width. The reveal's map is drawn
by the attention explorer (``model.lessons.classroom_kinds``).

Option labels and titles are escaped, because plotly reads markup; nicknames never reach a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz.attention import head_grid, visible_chars
from viz.common import HEAD_COLORS, escape, head_name, house_layout, make_figure, margins, text_px

ANSWER_COLOR = "#009E73"  # the right answer, once revealed (Okabe-Ito green)
OTHER_COLOR = "#999999"
OPEN_COLOR = HEAD_COLORS[4]  # before the reveal every bar is alike
NICE_STEPS = (1, 2, 5)  # count ticks step by 1, 2, 5, 10, 20, 50, ...
MAX_TICKS = 6
MAP_PX = 240  # one candidate map's plot height: about its width on a phone


def count_step(top: int) -> int:
    """A whole-number tick step for counts from 0 to ``top``: 1, 2, 5, 10, 20, 50, ... with at most
    ``MAX_TICKS`` steps (a room of 3 ticks 0, 1, 2, 3; a room of 250 ticks by 50)."""
    scale = 1
    while True:
        for step in NICE_STEPS:
            if top <= step * scale * MAX_TICKS:
                return step * scale
        scale *= 10


def answer_histogram(
    options: Sequence[str], counts: Sequence[int], *, answer: int | None = None, title: str = "answers"
) -> go.Figure:
    """How many chose each option, one horizontal bar per option (first at the top, long labels fit a
    phone). With ``answer`` (after the reveal) that bar is green and the others grey."""
    if len(options) != len(counts) or not options:
        raise ValueError(f"{len(options)} options and {len(counts)} counts: give one count per option")
    if any(c < 0 for c in counts):
        raise ValueError("counts cannot be negative")
    labels = [escape(o) for o in options]
    if answer is None:
        colors = [OPEN_COLOR] * len(options)
    else:
        colors = [ANSWER_COLOR if i == answer else OTHER_COLOR for i in range(len(options))]
    total = sum(counts)
    share = [c / total if total else 0.0 for c in counts]
    trace = dict(
        type="bar",
        orientation="h",
        y=labels,
        x=list(map(int, counts)),
        marker=dict(color=colors),
        text=[f"{c} ({s:.0%})" for c, s in zip(counts, share)],
        textposition="outside",
        cliponaxis=False,
        hovertemplate="%{y}: %{x} answers<extra></extra>",
    )
    layout = house_layout(
        title=f"{escape(title)} · {total} answer{'s' if total != 1 else ''}", height=120 + 44 * len(options)
    )
    layout.update(
        # whole-number ticks: a count of 0.5 answers means nothing to a room
        xaxis=dict(
            title=dict(text="answers"),
            rangemode="tozero",
            range=[0, max(max(counts), 1) * 1.3],
            tick0=0,
            dtick=count_step(max(max(counts), 1)),
            tickformat="d",
        ),
        yaxis=dict(type="category", autorange="reversed", automargin=False),
        margin=margins(l=text_px(labels, 14) + 20, t=70, b=50, r=20),
        showlegend=False,
    )
    return make_figure([trace], layout)


def _tokens(spec: dict) -> list[str]:
    return visible_chars(spec["tokens"])


def _maps(spec: dict) -> tuple[np.ndarray, list[str]]:
    w = np.asarray(spec["weights"], dtype=float)
    names = list(spec["names"])
    if w.ndim != 3 or len(names) != w.shape[0]:
        raise ValueError(f"expected (n, T, T) maps with one name each; got {w.shape} and {len(names)} names")
    return w, names


def candidate_head(spec: dict, i: int) -> go.Figure:
    """The ``i``-th of a question's candidate maps alone, titled with its name, on the colour scale all of
    them share (so four such figures compare as the grid does). A page lays them out in columns, which
    a phone stacks: each map then has the phone's whole width, where the grid's four had about 70 px."""
    w, names = _maps(spec)
    if not 0 <= i < len(names):
        raise ValueError(f"there are {len(names)} maps; {i} is not one of them")
    fig = head_grid(w[i][None, None], _tokens(spec), title=names[i])
    name = escape(names[i])
    fig.layout.annotations = ()  # head_grid's "head 0": the title names the head
    fig.data[0].hovertemplate = fig.data[0].hovertemplate.replace(head_name(0, 0), name)
    fig.layout.yaxis.title.text = fig.layout.yaxis.title.text.split(" · ", 1)[-1]  # "layer 0 · query" -> "query"
    fig.layout.coloraxis.cmax = float(w.max()) if w.size and w.max() > 0 else 1.0
    fig.layout.coloraxis.colorbar.thickness = 12  # a phone's width goes to the map
    # a short title (the axes say which is the query and which the key) and a height for a phone's width,
    # not the grid's full-page one: four maps stack on a phone
    fig.layout.title.text = name
    margin = fig.layout.margin
    fig.layout.margin.t = 50
    fig.layout.height = int(50 + margin.b + MAP_PX)
    return fig


def candidate_heads(spec: dict) -> go.Figure:
    """The ``(n, T, T)`` maps of a question's ``figure`` numbers, each titled with its name from
    ``names``: two by two when there are four (they fit a phone), else in one row."""
    w, names = _maps(spec)
    n = w.shape[0]
    rows = 2 if n == 4 else 1
    cols = n // rows
    fig = head_grid(w.reshape(rows, cols, *w.shape[1:]), _tokens(spec), title=spec.get("title", "heads"))
    # head_grid titles its columns "head h" and its rows "layer l"; these maps are named one by one
    column_title = fig.layout.annotations[0]
    titles = []
    for i, trace in enumerate(fig.data):
        x_axis, y_axis = (
            fig.layout[trace.xaxis.replace("x", "xaxis", 1)],
            fig.layout[trace.yaxis.replace("y", "yaxis", 1)],
        )
        titles.append(
            go.layout.Annotation(column_title, text=escape(names[i]), x=sum(x_axis.domain) / 2, y=y_axis.domain[1])
        )
        trace.hovertemplate = trace.hovertemplate.replace(head_name(i // cols, i % cols), escape(names[i]))
        if y_axis.title.text:
            y_axis.title.text = y_axis.title.text.split(" · ", 1)[-1]  # "layer 1 · query" -> "query"
    fig.layout.annotations = titles
    return fig
