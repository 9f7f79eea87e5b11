"""Head profiles: a few numbers per head (entropy, previous token, diagonal, first token, special
tokens, monotonic alignment) over the layer × head grid, a sortable table, and the heads most
like a chosen one."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from model.analysis.profiles import METRIC_HELP, comparable_metrics, head_profiles, neighbourhood
from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, RunResult
from model.core.specs import SPECS
from ui.shared.display import show_figure, show_matrix
from ui.shared.models import require_checkpoint
from ui.shared.runs import attempt, input_notes, pick_model, run_model
from ui.shared.state import on_request, range_slider, select_choice, url_widget
from ui.shared.text import clean_text, listing
from ui.shared.views import head_explorer, pick_kind
from viz.profiles import colour_range, grid_table, head_label, metric_matrix, neighbours_table, profile_lines

DEFAULT_TEXT = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "ROMEO:\nBut soft, what light through yonder window breaks?",
    "translator": "eine frau liest ein buch im park .",
}


@dataclass(frozen=True)
class Options:
    model: str  # a key of SPECS
    text: str  # as typed


def choose_model() -> None:
    st.session_state["pro_text"] = DEFAULT_TEXT[st.session_state["pro_task"]]


def options() -> Options:
    left, right = st.columns([1, 3])
    model = pick_model("pro_task", parent=left, select=True, on_change=choose_model)
    spec = SPECS[model]
    label = spec.input_name[0].upper() + spec.input_name[1:]
    return Options(model, url_widget(right.text_area, label, "pro_text", DEFAULT_TEXT[model], height=80))


def metric_table(frame: pd.DataFrame, metrics: list[str]) -> None:
    left, right = st.columns([2, 1])
    by = select_choice("pro_sort", metrics, metrics[0], label="Sort the table by", parent=left)
    largest_first = url_widget(right.toggle, "Largest first", "pro_desc", True)
    ordered = frame.sort_values([by, "layer", "head"], ascending=[not largest_first, True, True])
    config = {m: st.column_config.NumberColumn(m, format="%.3f", help=METRIC_HELP[m]) for m in metrics}
    st.dataframe(ordered, key="pro-table", hide_index=True, column_config=config)
    csv = ordered.to_csv(index=False).encode("utf-8")
    st.download_button("Download CSV", csv, file_name="head-profiles.csv", mime="text/csv", key="pro-table-csv")


def similar_heads(profiles, view: AttentionKind, ck: Checkpoint, result: RunResult) -> tuple[int, int] | None:
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
    st.table(nearest.style.format(decimals).hide(axis="index"))
    shapes = on_request("Their profiles as lines (each metric in standard deviations)", "pro_lines")
    if shapes.open:
        with shapes:
            lines = [(head_label(n["layer"], n["head"]), n["z"]) for n in near]
            title = f"{head_label(layer, head)} and its nearest heads"
            show_figure(profile_lines(lines, names, title=title), "pro-lines")
    # no heading of its own: the explorer's caption names the kind, layer and head it shows
    head_explorer(result, view.name, layer, head, "proex", ck=ck, title=f"{head_label(layer, head)}: its attention")
    return layer, head


def body(opts: Options) -> None:
    """The profiles of every head of one kind: a grid, a table on request, and the heads like a chosen one."""
    spec = SPECS[opts.model]
    text = clean_text(opts.text, what="text" if spec.characters else "sentence")
    if text is None:
        return
    ck = require_checkpoint(opts.model)
    result: RunResult | None = attempt(run_model, ck, text, what="Nothing to profile")
    if result is None or not input_notes(result, "the text"):
        return
    if spec.output != "next":  # a label or a translation; a next character alone says little
        st.markdown(f"**Model output:** {listing([result.prediction], width=300)}")
    kind = pick_kind(result, "pro_kind")
    view = result.kinds[kind]
    profiles = head_profiles(view.weights, special=view.special, cross=view.cross)
    metrics = list(profiles.metrics)
    frame = pd.DataFrame(profiles.rows())
    L, H = profiles.shape

    st.subheader(f"Every head ({L} layers × {H} heads)")
    described = lambda m: f"{m}: {METRIC_HELP[m]}"
    metric = select_choice("pro_metric", metrics, metrics[0], label="Colour by", format_func=described)
    grid_slot = st.container()  # drawn last: it frames the head chosen further down
    numbers = on_request("Every head's numbers as a table (sort, download)", "pro_table")
    if numbers.open:  # the grid above shows them; the data grid is only loaded when asked for
        with numbers:
            metric_table(frame, metrics)
    selected = similar_heads(profiles, view, ck, result)
    zmin, zmax = colour_range(metric, len(view.keys))
    title = f"{metric} of every head ({view.title.lower()})"
    grid = metric_matrix(profiles.metrics[metric], metric, title=title, selected=selected, zmin=zmin, zmax=zmax)
    with grid_slot:
        csv_name = f"{spec.name}-{kind}-{metric}.csv"
        show_matrix(grid, "pro-grid", csv=grid_table(profiles.metrics[metric]), csv_name=csv_name)


def main() -> None:
    st.title("Head profiles")
    st.caption(
        "What kind of head is each head? For one input, every head gets a few numbers: how spread out its "
        "attention is (entropy), how much it looks at the previous token, at itself, at the first token, at "
        "special tokens, and, for cross-attention, whether its alignment moves forward through the source."
    )
    body(options())


main()
