"""Training-history figures: loss and validation curves per epoch, with the epoch being viewed marked."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import plotly.graph_objects as go

from viz.common import HEAD_COLORS, base_layout

LOSS_COLOR, METRIC_COLORS = "#0072B2", HEAD_COLORS


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
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        label = html.escape(name, quote=False)
        on_right = name in right
        fig.add_trace(
            go.Scatter(
                x=list(epochs),
                y=[None if not math.isfinite(v) else round(float(v), 5) for v in values],
                name=label + (" (right axis)" if on_right else ""),
                mode="lines+markers",
                yaxis="y2" if on_right else "y",
                line=dict(color=METRIC_COLORS[i % len(METRIC_COLORS)], width=3, dash="dot" if on_right else None),
                hovertemplate=f"epoch %{{x}}<br>{label}: %{{y:.4f}}<extra></extra>",
            )
        )
    base_layout(fig, title=html.escape(title, quote=False), height=460)
    left = [html.escape(n, quote=False) for n in series if n not in right]
    right_names = [html.escape(n, quote=False) for n in series if n in right]
    fig.update_layout(
        xaxis=dict(title=dict(text="epoch"), dtick=1 if len(epochs) <= 30 else None),
        yaxis=dict(title=dict(text=", ".join(left) or "value")),
        legend=dict(orientation="h", yanchor="top", y=-0.2, x=0),
        margin=dict(b=90),
    )
    if right_names:
        fig.update_layout(yaxis2=dict(title=dict(text=", ".join(right_names)), overlaying="y", side="right"))
    if epoch_range is not None:
        lo, hi = epoch_range
        fig.update_xaxes(range=[lo - 0.5, hi + 0.5])
    if current_epoch is not None:
        fig.add_vline(
            x=current_epoch,
            line=dict(color="#D55E00", width=3, dash="dash"),
            annotation_text=f"epoch {current_epoch:g}",
            annotation_position="top",
        )
    return fig
