"""Head profiles: a few numbers per head (entropy, previous token, diagonal, first token, special
tokens, monotonic alignment) over the layer × head grid, a sortable table, and the heads most
like a chosen one."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from model.analysis.profiles import METRIC_HELP, head_profiles
from model.core.results import RunResult
from model.core.specs import SPECS
from model.zoo import model_entry
from pages import heading
from pages.explore.profile_parts import metric_table, similar_heads
from pages.shared.display import show_matrix
from pages.shared.models import require_checkpoint
from pages.shared.runs import attempt, input_notes, pick_model, run_model
from pages.shared.state import on_request, select_choice, url_widget
from pages.shared.text import clean_text, listing, plural
from pages.shared.views import pick_kind
from viz.profiles import colour_range, grid_table, metric_matrix


@dataclass(frozen=True)
class Options:
    model: str  # a key of SPECS
    text: str  # as typed


def choose_model() -> None:
    st.session_state["pro_text"] = model_entry(st.session_state["pro_task"]).examples.profile


def options() -> Options:
    left, right = st.columns([1, 3])
    model = pick_model("pro_task", parent=left, select=True, on_change=choose_model)
    spec = SPECS[model]
    label = spec.input_name[0].upper() + spec.input_name[1:]
    example = model_entry(model).examples.profile
    return Options(model, url_widget(right.text_area, label, "pro_text", example, height=80))


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

    st.subheader(f"Every head ({plural(L, 'layer')} × {plural(H, 'head')})")
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
    st.title(heading("profiles"))
    st.caption(
        "What kind of head is each head? For one input, every head gets a few numbers: how spread out its "
        "attention is (entropy), how much it looks at the previous token, at itself, at the first token, at "
        "special tokens, and, for cross-attention, whether its alignment moves forward through the source."
    )
    body(options())


main()
