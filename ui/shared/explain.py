"""The click-to-explain panel: how the model computed the weight a learner clicked in the explorer."""

from __future__ import annotations

from typing import Any

import streamlit as st

from model.analysis.explain import Explanation, explain
from model.core.results import RunResult
from model.core.checkpoint import Checkpoint
from ui.shared.display import show_figure
from ui.shared.runs import CACHE
from ui.shared.text import listing
from viz.explain import explanation_frame, explanation_steps, output_figure, row_figure, vector_figure


@st.cache_data(max_entries=128, show_spinner="Explaining…", **CACHE)
def explain_cell(ck: Checkpoint, inputs: dict[str, list[int]], kind: str, layer: int, head: int, query: int, key: int) -> Explanation:
    return explain(ck, inputs, kind, layer, head, query, key)


def remembered_cell(result: RunResult, prefix: str, clicked: dict[str, Any] | None) -> dict[str, Any] | None:
    """The last cell clicked for this run (a click is reported once; the panel stays until the input
    changes or another cell is clicked)."""
    key, run = f"{prefix}_cell", repr(sorted(result.inputs.items()))
    if clicked is not None:
        st.session_state[key] = (run, clicked)
    stored = st.session_state.get(key)
    return stored[1] if stored and stored[0] == run else None


def explain_panel(ck: Checkpoint, result: RunResult, cell: dict[str, Any] | None, prefix: str) -> None:
    """The step-by-step computation of ``cell`` from the model's own tensors, or how to get one."""
    if cell is None:  # the page's introduction says how to get one: no element on every new input
        return
    kind = result.kinds[cell["kind"]]
    pair = listing([f"{kind.queries[cell['query']]} → {kind.keys[cell['key']]}"], width=80)
    if cell["head"] is None:
        what = "the mean over heads" if cell["layer"] is not None else "attention rollout"
        st.info(f"{pair}: {cell['weight']:.4f} in {what}. Open one head to see how a single weight was computed.")
        return
    e = explain_cell(ck, result.inputs, cell["kind"], cell["layer"], cell["head"], cell["query"], cell["key"])
    st.subheader(f"How {kind.title.lower()}, layer {e.layer}, head {e.head} computed {pair}: {e.weight:.4f}")
    for line in explanation_steps(e):
        st.text(line)  # the steps hold the user's tokens: plain text, never markup
    for fig, name in ((vector_figure(e), "vectors"), (row_figure(e), "row"), (output_figure(e), "output")):
        show_figure(fig, f"{prefix}-explain-{name}")
    st.download_button(
        "Download these numbers (CSV)",
        data=lambda: explanation_frame(e).to_csv(index=False).encode("utf-8"),
        file_name=f"explain-{e.kind}-layer{e.layer}-head{e.head}-{e.query}-{e.key}.csv",
        mime="text/csv",
        key=f"{prefix}-explain-csv",
        on_click="ignore",
    )
