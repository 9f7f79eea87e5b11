"""A model's prediction as the pages show it: a label with its confidence, translations side by side,
two runs' distributions as bars."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from model.core.results import RunResult
from model.core.specs import ModelSpec
from ui.shared.display import output_text
from viz.compare import distribution_bars, visible_probs


def label_metric(parent: Any, label: str, result: RunResult) -> None:
    """The classifier's label and its confidence as a metric under ``parent`` (the confidence is a note,
    not a change, so it has no colour or arrow)."""
    parent.metric(label, result.prediction, f"{result.confidence:.1%} confident", delta_color="off", delta_arrow="off")


def outputs_side_by_side(results: Sequence[RunResult], headers: Sequence[str]) -> None:
    """Each result's output (a translation) in a column of its own under its Markdown header."""
    for col, header, result in zip(st.columns(len(results)), headers, results):
        col.markdown(header)
        output_text(result.prediction or "(no words)", col)


def has_bars(spec: ModelSpec) -> bool:
    """Whether the model's prediction is a distribution to draw as bars (classes, the next character), not text."""
    return spec.output in ("classes", "next")


def prediction_bars(spec: ModelSpec, runs: Sequence[RunResult], names: tuple[str, str], versus: str) -> go.Figure:
    """Two runs' predictions as grouped bars: every class, or the ten likeliest next characters (the title
    goes on with ``versus``, e.g. ", before vs after")."""
    a, b = runs
    if spec.output == "classes":
        return distribution_bars(a.probs, b.probs, names=names, top=None, title="class probabilities", x_title="class")
    unit = spec.unit.removesuffix("s")
    pa, pb = visible_probs(a.probs), visible_probs(b.probs)
    return distribution_bars(pa, pb, names=names, title=f"next {unit}: top 10{versus}", x_title=f"next {unit}")
