"""The click-to-explain panel: how the model computed the weight a learner clicked in the explorer.

One panel and one memory of the clicked cell for every model family. A family differs only in how
it obtains the :class:`~model.core.explanation.Explanation` (a cached function of kind, layer, head,
query and key): :func:`checkpoint_explainer` for our models, ``pages.shared.hub.hub_explainer`` for a
Hugging Face one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import streamlit as st

from model.analysis.explain import explain
from model.core.checkpoint import Checkpoint
from model.core.explanation import Explanation, NotExplained
from model.core.results import AttentionKind, RunResult
from pages.shared.display import show_figure
from pages.shared.explorer import checked_cell
from pages.shared.glossary import BASICS, glossary
from pages.shared.runs import CACHE
from pages.shared.text import listing
from viz.common import head_name, shown_token
from viz.explain import (
    cell_name,
    explanation_frame,
    explanation_steps,
    kind_word,
    output_figure,
    row_figure,
    split_figure,
    vector_figure,
)

Explainer = Callable[[str, int, int, int, int], Explanation]  # (kind, layer, head, query, key) -> steps


@st.cache_data(max_entries=128, show_spinner="Explaining…", **CACHE)
def explain_cell(
    ck: Checkpoint, inputs: dict[str, list[int]], kind: str, layer: int, head: int, query: int, key: int
) -> Explanation:
    return explain(ck, inputs, kind, layer, head, query, key)


def checkpoint_explainer(ck: Checkpoint, result: RunResult) -> Explainer:
    """How one of our models explains a cell of ``result``: its own forward pass, probed (cached)."""
    return lambda kind, layer, head, query, key: explain_cell(ck, result.inputs, kind, layer, head, query, key)


def result_id(result: RunResult) -> str:
    """What a click on one of our models' maps belongs to: the ids the run read."""
    return repr(sorted(result.inputs.items()))


def remembered_cell(
    run: Hashable,
    store: str,
    clicked: dict[str, Any] | None,
    kinds: Sequence[AttentionKind] | None = None,
    rollout: np.ndarray | None = None,
) -> dict[str, Any] | None:
    """The last cell clicked for the run ``run`` names, kept under ``store`` in the session: a click is a
    trigger (the next rerun no longer reports it), and the panel stays until the input changes or another
    cell is clicked. With ``kinds``, the cell is checked against them (:func:`checked_cell`)."""
    if clicked is not None:
        st.session_state[store] = {"run": run, "cell": clicked}
    stored = st.session_state.get(store)
    if not isinstance(stored, dict) or stored.get("run") != run:
        return None
    return stored.get("cell") if kinds is None else checked_cell(kinds, stored.get("cell"), rollout)


def explain_panel(
    explainer: Explainer,
    result: RunResult,
    cell: dict[str, Any] | None,
    prefix: str,
    *,
    kept: dict[str, tuple[list[int], list[int]]] | None = None,
) -> Explanation | None:
    """The step-by-step computation of the clicked ``cell`` from the model's own tensors. With special
    tokens hidden, ``kept`` maps the shown rows and columns of each kind back to the model's positions."""
    if cell is None:  # the page's introduction says how to get one: no element on every new input
        return None
    kind = result.kinds[cell["kind"]]
    q, k = cell["query"], cell["key"]
    if kept:
        rows, cols = kept[cell["kind"]]
        q, k = rows[q], cols[k]
    row = kind.queries[q]  # the token the map's row shows: a decoder's row, the word it wrote there
    pair = listing([f"query {q}:{shown_token(row)} → key {k}:{shown_token(kind.keys[k])}"], width=80)
    if cell["head"] is None:
        heads = kind.weights.shape[1]
        what = (
            "the rollout over all layers"
            if cell["layer"] is None
            else f"the mean of all {heads} heads, layer {cell['layer']}"
        )
        st.info(
            f"{pair}: {cell['weight']:.4f} is {what}. Pick one head (heatmap or lines view) and click a cell to "
            "see how a single weight is computed."
        )
        return None
    try:
        e = explainer(cell["kind"], cell["layer"], cell["head"], q, k)
    except NotExplained as why:
        st.info(f"{pair}: the model's weight is {cell['weight']:.4f}. {listing([str(why)], width=400)}.")
        return None
    named = listing([cell_name(e, row)], width=160)  # the heading, the charts and the steps name it alike
    st.subheader(f"How {head_name(e.layer, e.head)} ({kind.title.lower()}) computed {named}: {e.weight:.4f}")
    shown, recomputed = st.columns(2)
    shown.metric("Weight in the map", f"{cell['weight']:.4f}")
    recomputed.metric("Recomputed step by step", f"{e.weight:.4f}")
    if kept:
        st.caption(
            f"Special tokens are hidden, so the map's rows are renormalised over the other keys. The steps "
            f"below are the model's own row (query {q}, key {k}), special tokens included: {e.map_weight:.4f}."
        )
    for line in explanation_steps(e, row):
        st.text(line)  # the steps hold the user's tokens: plain text, never markup
    figures = ((vector_figure(e, row), "vectors"), (row_figure(e, row), "row"), (output_figure(e, row), "output"))
    for fig, name in figures:
        show_figure(fig, f"{prefix}-explain-{name}")
    if e.position_split is not None:  # why this weight: layer 0 of a model with absolute positions
        show_figure(split_figure(e, row), f"{prefix}-explain-split")
    st.download_button(
        "Download these numbers (CSV)",
        data=lambda: explanation_frame(e, row).to_csv(index=False).encode("utf-8"),
        file_name=f"explain-{kind_word(e)}-layer{e.layer}-head{e.head}-{e.query}-{e.key}.csv",
        mime="text/csv",
        key=f"{prefix}-explain-csv",
        on_click="ignore",
    )
    glossary(BASICS, key=f"{prefix}-explain-glossary")  # the words the steps use, for a learner who meets them here
    return e
