"""Head ablation: switch any set of heads off and compare the model's answer and attention before
and after. The shared model is never changed: the heads go off through ``head_mask`` arguments."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from model.analysis.ablation import Ablation, Head, head_layout
from model.core.checkpoint import Checkpoint
from model.core.specs import ModelSpec
from model.zoo import model_entry
from pages import heading
from pages.explore.switches import head_switches
from pages.shared.display import export_view_button, show_matrix
from pages.shared.explorer import attention_explorer
from pages.shared.models import require_checkpoint
from pages.shared.outputs import ablation_predictions, has_bars, prediction_bars
from pages.shared.runs import attempt, input_notes, pick_model, read_input, run_ablation
from pages.shared.state import url_widget
from pages.shared.views import labelled, pick_head, pick_kind, windowed
from viz.common import head_name, unique_labels
from viz.compare import change_grid, change_table, difference_heatmap, difference_table
from viz.matrix import matrix_frame

BEFORE_AFTER, VERSUS = ("before", "after"), ", before vs after"  # the bars' names and the end of their title


@dataclass(frozen=True)
class Options:
    text: str  # the input as typed
    off: tuple[Head, ...]  # (kind, layer, head) of every head switched off


def options(ck: Checkpoint) -> Options:
    """The input, then one multiselect per layer (and per kind when there are several) of heads to switch off."""
    spec, layout = ck.spec, head_layout(ck.model)
    label = spec.input_name[0].upper() + spec.input_name[1:]
    text = url_widget(st.text_input, label, f"abl_{spec.short}_text", model_entry(spec.name).examples.ablation)
    st.subheader("Switch heads off")
    st.caption("Pick the heads to switch off in each layer. A switched-off head's output is multiplied by 0.")
    off = head_switches(spec, layout)
    return Options(text, tuple(sorted(off)))


@st.fragment
def downstream(spec: ModelSpec, res: Ablation, notes: str) -> None:
    """Where attention changed: a per-head summary and one head's before − after difference."""
    st.subheader("What changed downstream")
    st.caption(
        "A switched-off head still computes its weights, so its own layer's attention stays the same. Every "
        "layer above it reads a different input, so attention there moves: red = less weight after, blue = more."
    )
    kind = pick_kind(res.before, "abl_kind", last=True)
    delta = res.delta()[kind]
    L, H = delta.shape[:2]
    k = res.before.kinds[kind]
    name, names = k.title, dict(query_name=k.query_axis, key_name=k.key_axis)
    grid_title = f"{name}: largest change of any weight, per head"
    change, off = res.change_per_head(kind), res.off_in(kind)
    show_matrix(change_table(change, off=off, title=grid_title), "abl-grid")
    st.markdown("**After, every layer and head** (the heads you switched off still compute their weights)")
    attention_explorer(labelled(res.after), key="abl-explorer", url_prefix="abl_x", title="Head ablation: after")
    layer, head = pick_head(L, H, "abl", default_layer=L - 1)
    m, (rows, cols) = windowed(delta[layer, head], k, res.before, spec)
    if len(rows) < len(k.queries):
        st.caption(f"The last {len(rows)} {spec.unit} are drawn.")
    title = f"before − after: {name.lower()}, {head_name(layer, head)}"
    largest = f"{title} (largest change {np.abs(delta[layer, head]).max():.4f})"  # one element less than a caption
    csv = lambda: matrix_frame(m, unique_labels(rows), unique_labels(cols))
    table = difference_table(m, rows, cols, title=largest, **names)
    show_matrix(table, "abl-diff", csv=csv, csv_name=f"ablation-{spec.name}-diff.csv")

    def figures() -> list:  # the export's charts, built only when it is clicked
        figs = [prediction_bars(spec, (res.before, res.after), BEFORE_AFTER, VERSUS)] if has_bars(spec) else []
        figs.append(change_grid(change, off=off, title=grid_title))
        figs.append(difference_heatmap(m, rows, cols, title=title, value="before − after", **names))
        return figs

    export_view_button(figures, f"Head ablation · {spec.title}", "abl-export", notes=notes)


def body(ck: Checkpoint, opts: Options) -> None:
    """Both runs, their predictions and what changed downstream."""
    spec = ck.spec
    text = read_input(spec, opts.text, spec.input_name)
    res = text and attempt(run_ablation, ck, text, opts.off, what="Nothing to run")
    if res is None or not input_notes(res.before, "the input"):
        return
    st.subheader("Before vs after")
    ablation_predictions(spec, res.before, res.after, BEFORE_AFTER, VERSUS)
    off_names = ", ".join(head_name(l, h, k) for k, l, h in opts.off) or "none"
    notes = f"Model: {spec.title}\nInput: {text}\nHeads off: {off_names}"
    notes += f"\nBefore: {res.before.prediction}\nAfter: {res.after.prediction}"
    downstream(spec, res, notes)


def main() -> None:
    st.title(heading("ablation"))
    st.caption(
        "Switch attention heads off and see what the model does without them: the prediction before and after, "
        "and how the attention of the layers above changes."
    )
    ck = require_checkpoint(pick_model("abl_model"))
    body(ck, options(ck))


main()
