"""A model's prediction as the pages show it: a label with its confidence, translations side by side,
two runs' distributions as bars, and two runs' predictions compared (a minimal pair; before and after
an ablation)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from model.analysis.compare import largest_change, word_changes
from model.core.results import RunResult
from model.core.specs import ModelSpec
from pages.shared.display import output_text, show_figure
from pages.shared.state import on_request
from pages.shared.text import listing, markdown_escape, points
from viz.attention import visible_chars
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


def class_bars(spec: ModelSpec, a: RunResult, b: RunResult, names: tuple[str, str], versus: str) -> go.Figure:
    """Two runs' class probabilities as grouped bars, every class."""
    return distribution_bars(a.probs, b.probs, names=names, top=None, title="class probabilities", x_title="class")


def next_bars(spec: ModelSpec, a: RunResult, b: RunResult, names: tuple[str, str], versus: str) -> go.Figure:
    """Two runs' ten likeliest next characters (or tokens) as grouped bars; the title goes on with ``versus``."""
    unit = spec.unit.removesuffix("s")
    pa, pb = visible_probs(a.probs), visible_probs(b.probs)
    return distribution_bars(pa, pb, names=names, title=f"next {unit}: top 10{versus}", x_title=f"next {unit}")


def pair_translations(a: RunResult, b: RunResult, names: tuple[str, str]) -> None:
    outputs_side_by_side((a, b), [f"**{name}** translates to" for name in names])
    if a.prediction.split() == b.prediction.split():
        st.caption("The two translations are the same.")
    else:
        only_a, only_b = word_changes(a.prediction, b.prediction)
        only_a, only_b = listing(only_a) or "(none)", listing(only_b) or "(none)"
        st.caption(f"Words only in A: {only_a} · words only in B: {only_b}")


def pair_labels(a: RunResult, b: RunResult, names: tuple[str, str]) -> None:
    last = list(a.probs)[-1]  # "positive" for sentiment
    cols = st.columns(3)
    for col, name, r in zip(cols, names, (a, b)):
        label_metric(col, name, r)
    flips = "same label" if a.prediction == b.prediction else "the label flips"
    change = points(b.probs[last] - a.probs[last], unit="points")
    about = f"B's probability of {last} minus A's, in percentage points (0.50 against 0.40 is 10 points higher)."
    cols[2].metric(f"P({last}): B against A", change, flips, help=about, delta_color="off", delta_arrow="off")


def pair_next(a: RunResult, b: RunResult, names: tuple[str, str]) -> None:
    pa, pb = visible_probs(a.probs), visible_probs(b.probs)
    la, lb = (visible_chars([r.prediction])[0] for r in (a, b))
    biggest = largest_change(pa, pb)
    st.caption(
        f"Likeliest next character: A {listing([la])} ({pa[la]:.1%}), B {listing([lb])} ({pb[lb]:.1%}). "
        f"Largest change among the bars: {listing([biggest])} by {pb[biggest] - pa[biggest]:+.1%} (B − A)."
    )


def ablation_translations(before: RunResult, after: RunResult) -> None:
    outputs_side_by_side((before, after), ("**Before** (every head on)", "**After** (heads off)"))
    same = before.prediction == after.prediction
    st.caption("The translation is the same." if same else "The translation changed.")


def ablation_labels(before: RunResult, after: RunResult) -> None:
    left, right = st.columns(2)
    for col, name, r in ((left, "Before", before), (right, "After", after)):
        label_metric(col, name, r)
    last = list(before.probs)[-1]  # "positive" for sentiment
    moved = points(after.probs[last] - before.probs[last])
    st.caption(f"With the heads switched off, P({last}) is {moved}.")


def ablation_next(before: RunResult, after: RunResult) -> None:
    b, a = before.prediction, after.prediction
    st.caption(
        f"Likeliest next character: before **{markdown_escape(visible_chars([b])[0])}** ({before.probs[b]:.1%}), "
        f"after **{markdown_escape(visible_chars([a])[0])}** ({after.probs[a]:.1%})."
    )


@dataclass(frozen=True)
class Shown:
    """How the pages show one kind of prediction (:attr:`ModelSpec.output`): a minimal pair's two, the same
    input before and after an ablation, and, where the prediction is a distribution, two runs' as bars."""

    pair: Callable[[RunResult, RunResult, tuple[str, str]], None]
    ablation: Callable[[RunResult, RunResult], None]
    bars: Callable[[ModelSpec, RunResult, RunResult, tuple[str, str], str], go.Figure] | None = None


SHOWN = {
    "classes": Shown(pair_labels, ablation_labels, class_bars),
    "next": Shown(pair_next, ablation_next, next_bars),
    "text": Shown(pair_translations, ablation_translations),  # a translation: no bars
}


def has_bars(spec: ModelSpec) -> bool:
    """Whether the model's prediction is a distribution to draw as bars (classes, the next character), not text."""
    return SHOWN[spec.output].bars is not None


def prediction_bars(spec: ModelSpec, runs: Sequence[RunResult], names: tuple[str, str], versus: str) -> go.Figure:
    """Two runs' predictions as grouped bars: every class, or the ten likeliest next characters (the title
    goes on with ``versus``, e.g. ", before vs after")."""
    return SHOWN[spec.output].bars(spec, *runs, names, versus)


def pair_predictions(spec: ModelSpec, a: RunResult, b: RunResult, names: tuple[str, str], versus: str) -> None:
    """A minimal pair's two predictions (``names``, e.g. "A" and "B") and their difference; the bars open on
    request."""
    SHOWN[spec.output].pair(a, b, names)
    if not has_bars(spec):
        return
    bars = on_request("The probabilities of A and B, as bars", "pair_bars")
    if bars.open:
        with bars:
            fig = prediction_bars(spec, (a, b), names, versus)
            show_figure(fig, "pair-prediction", html_name=f"pairs-{spec.name}-prediction.html")


def ablation_predictions(
    spec: ModelSpec, before: RunResult, after: RunResult, names: tuple[str, str], versus: str
) -> None:
    """Before vs after switching heads off: the label, the next character or the translation; the bars open
    on request."""
    SHOWN[spec.output].ablation(before, after)
    if not has_bars(spec):
        return
    bars = on_request("The probabilities before and after, as bars", "abl_bars")
    if bars.open:
        with bars:
            fig = prediction_bars(spec, (before, after), names, versus)
            show_figure(fig, "abl-prediction", html_name=f"ablation-{spec.name}-prediction.html")
