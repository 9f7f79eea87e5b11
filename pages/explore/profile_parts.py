"""Head profiles on a page: every head's numbers as a sortable table, and the heads most like a chosen one
(their numbers, their profiles as lines, the chosen head's attention in the explorer)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from model.analysis.profiles import METRIC_HELP, HeadProfiles, comparable_metrics, neighbourhood
from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, RunResult
from pages.shared.display import show_figure
from pages.shared.state import on_request, range_slider, select_choice, url_widget
from pages.shared.views import head_explorer
from viz.profiles import head_label, neighbours_table, profile_lines


def metric_table(frame: pd.DataFrame, metrics: list[str]) -> None:
    left, right = st.columns([2, 1])
    by = select_choice("pro_sort", metrics, metrics[0], label="Sort the table by", parent=left)
    largest_first = url_widget(right.toggle, "Largest first", "pro_desc", True)
    ordered = frame.sort_values([by, "layer", "head"], ascending=[not largest_first, True, True])
    config = {m: st.column_config.NumberColumn(m, format="%.3f", help=METRIC_HELP[m]) for m in metrics}
    st.dataframe(ordered, key="pro-table", hide_index=True, column_config=config)
    csv = ordered.to_csv(index=False).encode("utf-8")
    st.download_button("Download CSV", csv, file_name="head-profiles.csv", mime="text/csv", key="pro-table-csv")


def similar_heads(
    profiles: HeadProfiles, view: AttentionKind, ck: Checkpoint, result: RunResult
) -> tuple[int, int] | None:
    L, H = profiles.shape
    st.subheader("Heads like this one")
    heads = [f"{l}-{h}" for l in range(L) for h in range(H)]  # "1-2": layer 1, head 2 (not a number in the URL)
    left, right = st.columns([2, 1])
    named = lambda s: head_label(*map(int, s.split("-")))
    hint = "Its nearest heads: Euclidean distance over the metrics, each standardised over all heads."
    select_choice("pro_head", heads, heads[0], label="Head", parent=left, format_func=named, help=hint)
    layer, head = map(int, st.session_state["pro_head"].split("-"))
    if L * H < 2:
        st.info("This attention has only one head, so there is nothing to compare it with.")
        return None
    k = range_slider("pro_k", 1, L * H - 1, min(3, L * H - 1), label="How many", parent=right)
    names = comparable_metrics(profiles)
    near = neighbourhood(profiles, layer, head, k=k)
    st.caption(
        f"Distance over {', '.join(names)}, each metric rescaled to mean 0 and standard deviation 1 over the "
        f"{L * H} heads. The first row is the chosen head."
    )
    nearest = neighbours_table(near, list(profiles.metrics))  # a plain table: no data grid to load for k rows
    decimals = {"distance": "{:.2f}", **dict.fromkeys(profiles.metrics, "{:.3f}")}
    # a head's name on one line: on a phone the squeezed column broke "layer 0 · head 0" into four lines a row
    # (the table scrolls sideways instead); Streamlit wraps each cell's text in a <p> of its own
    one_line = [{"selector": f"td.col{list(nearest.columns).index('head')} p", "props": "white-space: nowrap"}]
    st.table(nearest.style.format(decimals).hide(axis="index").set_table_styles(one_line, overwrite=False))
    shapes = on_request("Their profiles as lines (each metric in standard deviations)", "pro_lines")
    if shapes.open:
        with shapes:
            lines = [(head_label(n["layer"], n["head"]), n["z"]) for n in near]
            title = f"{head_label(layer, head)} and its nearest heads"
            show_figure(profile_lines(lines, names, title=title), "pro-lines")
    # no heading of its own: the explorer's caption names the kind, layer and head it shows
    head_explorer(result, view.name, layer, head, "proex", ck=ck, title=f"{head_label(layer, head)}: its attention")
    return layer, head
