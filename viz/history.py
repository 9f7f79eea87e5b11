"""Training-history figures: loss and validation curves per epoch, with the epoch being viewed marked."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go

from viz.attention import visible_chars
from viz.common import FONT_SIZE, HEAD_COLORS, house_layout, make_figure, margins, text_px

METRIC_COLORS = HEAD_COLORS
MAX_TICKS = 12  # more epoch numbers than this collide on a narrow axis
LEGEND_ROOM = 120  # px under the plot: epoch numbers, the axis title and two rows of legend
SPLITS = {"train": "training", "val": "validation", "dev": "dev", "test": "test"}
RIGHT_AXIS = ("accuracy", "bleu")  # validation scores (higher is better) share the right axis
MEASURES = {
    "loss": "loss",
    "bpc": "bits per character",
    "accuracy": "accuracy",
    "bleu": "BLEU",
    "sacrebleu": "sacreBLEU",
}


def metric_name(raw: str) -> str:
    """A metric's name for people: ``"val_bpc"`` -> ``"validation bits per character"``."""
    split, _, measure = raw.partition("_")
    if split in SPLITS and measure:
        return f"{SPLITS[split]} {MEASURES.get(measure, measure.replace('_', ' '))}"
    return MEASURES.get(raw, raw.replace("_", " "))


def probe_text(tokens: Sequence[str], *, characters: bool) -> str:
    """A probe input on one line: characters joined (line breaks as ⏎), words without <sos>/<eos>."""
    if characters:
        return "".join(tokens).replace("\n", " ⏎ ")
    return " ".join(t for t in tokens if t not in ("<sos>", "<eos>"))


def probe_axes(tokens: Sequence[str], kind: str, n_queries: int, *, characters: bool) -> tuple[list[str], list[str]]:
    """Query and key labels of a probe's ``kind`` of attention. The probe's own tokens are saved; the
    translator's output words are not (they change every epoch), so decoder positions read ``out``."""
    tokens = visible_chars(tokens) if characters else list(tokens)
    outputs = ["<sos>", *["out"] * (n_queries - 1)]
    if kind == "encoder":
        return tokens, tokens
    return (outputs, outputs) if kind == "decoder" else (outputs, tokens)


def history_curves(
    curves: dict[str, list[float]],
    *,
    current_epoch: float | None = None,
    saved_epochs: Sequence[float] = (),
    title: str = "loss and validation per epoch",
) -> go.Figure:
    """:func:`training_curves` of ``model.training.history.training_curves``'s series: metrics named for
    people, validation scores on the right axis, and the epoch axis wide enough for ``saved_epochs`` too
    (attention is saved every epoch, the metrics only with a better model)."""
    series = {metric_name(k): v for k, v in curves.items() if k != "epoch"}
    right = [metric_name(k) for k in curves if any(word in k for word in RIGHT_AXIS)]
    seen = [*curves["epoch"], *saved_epochs]
    span = (min(seen), max(seen))
    return training_curves(
        curves["epoch"], series, right=right, current_epoch=current_epoch, epoch_range=span, title=title
    )


def epoch_dtick(n_epochs: int) -> int:
    """A tick step that keeps at most :data:`MAX_TICKS` epoch numbers on the axis."""
    return max(1, math.ceil(n_epochs / MAX_TICKS))


def axis_px(series: dict[str, Sequence[float]], names: Sequence[str]) -> float:
    """Room beside the plot for a y axis that shows ``names``' values: its tick labels (plotly writes at most
    about three significant digits, a sign and a point) and its title; 10 px when no series uses it."""
    values = [float(v) for n in names for v in series[n] if math.isfinite(v)]
    if not values:
        return 10
    ticks = [f"{v:.3g}" for v in (min(values), max(values), (min(values) + max(values)) / 2)]
    return text_px([*ticks, "0.00"], FONT_SIZE) + 2.5 * FONT_SIZE + 10


def training_curves(
    epochs: Sequence[float],
    series: dict[str, Sequence[float]],
    *,
    right: Sequence[str] = (),
    current_epoch: float | None = None,
    epoch_range: tuple[float, float] | None = None,
    title: str = "training curves",
) -> go.Figure:
    """One line per series over ``epochs``; names in ``right`` (accuracy, BLEU) use a second y axis.

    ``current_epoch`` draws a vertical line; ``epoch_range`` widens the x axis (e.g. to every epoch
    with saved attention, when the metrics stop at the best checkpoint). NaN points are gaps.
    """
    if not series:
        raise ValueError("give at least one series of per-epoch values")
    for name, values in series.items():
        if len(values) != len(epochs):
            raise ValueError(f"{name!r} has {len(values)} values for {len(epochs)} epochs")
    traces = []
    for i, (name, values) in enumerate(series.items()):
        label = html.escape(name, quote=False)
        on_right = name in right
        traces.append(
            dict(
                type="scatter",
                x=list(epochs),
                y=[None if not math.isfinite(v) else round(float(v), 5) for v in values],
                name=label + (" (right axis)" if on_right else ""),
                mode="lines+markers",
                yaxis="y2" if on_right else "y",
                line=dict(color=METRIC_COLORS[i % len(METRIC_COLORS)], width=3, dash="dot" if on_right else None),
                hovertemplate=f"epoch %{{x}}<br>{label}: %{{y:.4f}}<extra></extra>",
            )
        )
    left = [html.escape(n, quote=False) for n in series if n not in right]
    right_names = [html.escape(n, quote=False) for n in series if n in right]
    layout = house_layout(title=html.escape(title, quote=False), height=460)
    # Margins set from the numbers, with the axes' automargin off (as viz.common.margins says for the
    # heatmaps): plotly measuring every tick label and drawing again took more than half of this chart's
    # drawing time, and the history page draws it on every reload.
    layout["margin"] = margins(
        l=axis_px(series, [n for n in series if n not in right]),
        t=layout["margin"]["t"],
        b=LEGEND_ROOM,
        r=axis_px(series, [n for n in series if n in right]),
    )
    layout.update(
        xaxis=dict(title=dict(text="epoch"), dtick=epoch_dtick(len(epochs)), automargin=False),
        yaxis=dict(title=dict(text=", ".join(left) or "value"), automargin=False),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
    )
    if right_names:
        title2 = dict(text=", ".join(right_names))
        layout["yaxis2"] = dict(title=title2, overlaying="y", side="right", automargin=False)
    if epoch_range is not None:
        lo, hi = epoch_range
        layout["xaxis"]["range"] = [lo - 0.5, hi + 0.5]
        layout["xaxis"]["dtick"] = epoch_dtick(max(len(epochs), int(hi - lo) + 1))
    if current_epoch is not None:  # what fig.add_vline(..., annotation_position="top") writes, without its cost
        line = dict(xref="x", yref="y domain", x0=current_epoch, x1=current_epoch, y0=0, y1=1)
        layout["shapes"] = [dict(type="line", line=dict(color="#D55E00", width=3, dash="dash"), **line)]
        layout["annotations"] = [
            dict(
                text=f"epoch {current_epoch:g}",
                x=current_epoch,
                xref="x",
                y=1,
                yref="y domain",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
            )
        ]
    return make_figure(traces, layout)
