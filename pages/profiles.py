"""Head profiles: a few numbers per head (entropy, previous token, diagonal, first token, special
tokens, monotonic alignment) over the layer × head grid, a sortable table, and the heads most
like a chosen one."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis.profiles import (
    METRIC_HELP,
    comparable_metrics,
    head_profiles,
    nearest_heads,
    standardise,
)
from model.analysis.results import AttentionKind, RunResult
from model.training.checkpoint import Checkpoint
from pages.shared.display import show_figure
from pages.shared.models import require_checkpoint
from pages.shared.runs import TASK_NAMES, attempt, input_notes, run_model
from pages.shared.state import bounded, init_state, keep_valid, sync_url
from pages.shared.text import clean_text, listing
from pages.shared.views import head_explorer
from viz.profiles import head_label, metric_grid, profile_lines

TASKS = TASK_NAMES
DEFAULT_TEXT = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "ROMEO:\nBut soft, what light through yonder window breaks?",
    "translator": "eine frau liest ein buch im park .",
}
INPUT_LABEL = {"classifier": "Sentence (English)", "generator": "Text (characters)", "translator": "German sentence"}
URL_KEYS = ("pro_task", "pro_text", "pro_kind", "pro_metric", "pro_sort", "pro_desc", "pro_head", "pro_k")
FRACTIONS = ("previous", "self", "first", "special", "forward")


def choose_task() -> None:
    st.session_state["pro_text"] = DEFAULT_TEXT[st.session_state["pro_task"]]


def controls() -> str:
    init_state("pro_task", "classifier", lambda raw: raw if raw in TASKS else "classifier")
    task = st.session_state["pro_task"]
    init_state("pro_text", DEFAULT_TEXT[task])
    left, right = st.columns([1, 3])
    left.selectbox("Model", list(TASKS), format_func=TASKS.get, key="pro_task", on_change=choose_task)
    right.text_area(INPUT_LABEL[task], key="pro_text", height=80)
    sync_url("pro_task", "pro_text")
    return task


def colour_range(metric: str, keys: int) -> tuple[float | None, float | None]:
    if metric in FRACTIONS:
        return 0.0, 1.0
    if metric == "entropy":
        return 0.0, max(math.log2(keys), 1e-9)
    if metric == "monotonic":
        return -1.0, 1.0
    return None, None


def metric_table(frame: pd.DataFrame, metrics: list[str]) -> None:
    init_state("pro_sort", metrics[0])
    keep_valid("pro_sort", metrics, metrics[0])
    init_state("pro_desc", True, lambda raw: raw == "True")
    left, right = st.columns([2, 1])
    left.selectbox("Sort the table by", metrics, key="pro_sort")
    right.toggle("Largest first", key="pro_desc")
    by = st.session_state["pro_sort"]
    ordered = frame.sort_values([by, "layer", "head"], ascending=[not st.session_state["pro_desc"], True, True])
    config = {m: st.column_config.NumberColumn(m, format="%.3f", help=METRIC_HELP[m]) for m in metrics}
    st.dataframe(ordered, key="pro-table", hide_index=True, column_config=config)
    st.download_button(
        "Download CSV", ordered.to_csv(index=False).encode("utf-8"), file_name="head-profiles.csv", mime="text/csv",
        key="pro-table-csv",
    )  # fmt: skip


def similar_heads(profiles, frame: pd.DataFrame, view: AttentionKind, ck: Checkpoint, result: RunResult) -> None:
    L, H = profiles.shape
    st.subheader("Heads like this one")
    heads = [f"{l}-{h}" for l in range(L) for h in range(H)]  # "1-2": layer 1, head 2 (not a number in the URL)
    init_state("pro_head", heads[0])
    keep_valid("pro_head", heads, heads[0])
    left, right = st.columns([2, 1])
    left.selectbox(
        "Head", heads, key="pro_head", format_func=lambda s: head_label(*map(int, s.split("-"))),
        help="Its nearest heads: Euclidean distance over the metrics, each standardised over all heads.",
    )  # fmt: skip
    layer, head = map(int, st.session_state["pro_head"].split("-"))
    if L * H < 2:
        st.info("This attention has only one head, so there is nothing to compare it with.")
        return None
    init_state("pro_k", min(3, L * H - 1), bounded(1, L * H - 1))
    keep_valid("pro_k", range(1, L * H), min(3, L * H - 1))
    if L * H > 2:
        right.slider("How many", 1, L * H - 1, key="pro_k")
    k = st.session_state["pro_k"]
    names = comparable_metrics(profiles)
    nearest = nearest_heads(profiles, layer, head, k=k)
    rows = frame.set_index(["layer", "head"])
    table = pd.DataFrame(
        [{"head": head_label(n["layer"], n["head"]), "distance": n["distance"], **rows.loc[(n["layer"], n["head"])]}
         for n in [{"layer": layer, "head": head, "distance": 0.0}, *nearest]]
    )  # fmt: skip
    st.caption(
        f"Distance over {', '.join(names)}, each metric rescaled to mean 0 and standard deviation 1 over the "
        f"{L * H} heads. The first row is the chosen head."
    )
    st.dataframe(
        table,
        key="pro-nearest",
        hide_index=True,
        column_config={"distance": st.column_config.NumberColumn(format="%.2f")},
    )
    z = standardise(profiles.matrix(names))
    lines = [(t["head"], z[n_l * H + n_h]) for t, (n_l, n_h) in zip(
        table.to_dict("records"), [(layer, head)] + [(n["layer"], n["head"]) for n in nearest])]  # fmt: skip
    show_figure(profile_lines(lines, names, title=f"{head_label(layer, head)} and its nearest heads"), "pro-lines")
    st.markdown(f"**{head_label(layer, head)}: its attention**")
    head_explorer(result, view.name, layer, head, "proex", ck=ck, title=f"{head_label(layer, head)}: its attention")
    return layer, head


def main() -> None:
    st.title("Head profiles")
    st.caption(
        "What kind of head is each head? For one input, every head gets a few numbers: how spread out its "
        "attention is (entropy), how much it looks at the previous token, at itself, at the first token, at "
        "special tokens, and, for cross-attention, whether its alignment moves forward through the source."
    )
    task = controls()
    text = clean_text(st.session_state["pro_text"], what="text" if task == "generator" else "sentence")
    if text is None:
        return
    ck = require_checkpoint(task)
    result: RunResult | None = attempt(run_model, ck, text, what="Nothing to profile")
    if result is None or not input_notes(result, "the text"):
        return
    if result.task != "generator":
        st.markdown(f"**Model output:** {listing([result.prediction], width=300)}")
    kinds = list(result.kinds)
    init_state("pro_kind", kinds[0])
    keep_valid("pro_kind", kinds, kinds[0])
    if len(kinds) > 1:
        st.radio("Attention", kinds, format_func=lambda k: result.kinds[k].title, key="pro_kind", horizontal=True)
    kind = st.session_state["pro_kind"]
    view = result.kinds[kind]
    profiles = head_profiles(view.weights, special=view.special, cross=view.cross)
    metrics = list(profiles.metrics)
    frame = pd.DataFrame(profiles.rows())
    L, H = profiles.shape

    st.subheader(f"Every head ({L} layers × {H} heads)")
    init_state("pro_metric", metrics[0])
    keep_valid("pro_metric", metrics, metrics[0])
    st.selectbox("Colour by", metrics, key="pro_metric", format_func=lambda m: f"{m}: {METRIC_HELP[m]}")
    metric = st.session_state["pro_metric"]
    grid_slot = st.container()  # drawn last: it frames the head chosen further down
    metric_table(frame, metrics)
    selected = similar_heads(profiles, frame, view, ck, result)
    zmin, zmax = colour_range(metric, len(view.keys))
    with grid_slot:
        show_figure(
            metric_grid(profiles.metrics[metric], metric, title=f"{metric} of every head ({view.title.lower()})",
                        selected=selected, zmin=zmin, zmax=zmax),
            "pro-grid",
            csv=pd.DataFrame(np.round(profiles.metrics[metric], 6), index=[f"layer {l}" for l in range(L)],
                             columns=[f"head {h}" for h in range(H)]),
            csv_name=f"{task}-{kind}-{metric}.csv",
        )  # fmt: skip
    sync_url(*URL_KEYS)


main()
