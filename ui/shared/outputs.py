"""A model's prediction as the pages show it: a label with its confidence, translations side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from model.core.results import RunResult
from ui.shared.display import output_text


def label_metric(parent: Any, label: str, result: RunResult) -> None:
    """The classifier's label and its confidence as a metric under ``parent`` (the confidence is a note,
    not a change, so it has no colour or arrow)."""
    parent.metric(label, result.prediction, f"{result.confidence:.1%} confident", delta_color="off", delta_arrow="off")


def outputs_side_by_side(results: Sequence[RunResult], headers: Sequence[str]) -> None:
    """Each result's output (a translation) in a column of its own under its Markdown header."""
    for col, header, result in zip(st.columns(len(results)), headers, results):
        col.markdown(header)
        output_text(result.prediction or "(no words)", col)
