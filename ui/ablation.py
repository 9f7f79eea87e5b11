"""Head ablation: switch any set of heads off and compare the model's answer and attention before
and after. The shared model is never changed: the heads go off through ``head_mask`` arguments."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from model.analysis.ablation import Ablation, Head, head_layout
from model.core.checkpoint import Checkpoint
from model.core.specs import ModelSpec
from ui.shared.display import export_view_button, show_figure, show_matrix
from ui.shared.explorer import attention_explorer
from ui.shared.models import require_checkpoint
from ui.shared.outputs import has_bars, label_metric, outputs_side_by_side, prediction_bars
from ui.shared.runs import attempt, input_notes, pick_model, read_input, run_ablation
from ui.shared.state import index_list, on_request, url_widget
from ui.shared.text import markdown_escape, points
from ui.shared.views import labelled, pick_head, pick_kind, windowed
from viz.attention import visible_chars
from viz.common import unique_labels
from viz.compare import change_grid, change_table, difference_heatmap, difference_table
from viz.matrix import matrix_frame

DEFAULT_TEXT = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "O Romeo, Romeo! wherefore art thou",
    "translator": "ein mann fährt fahrrad .",
}
DEFAULT_OFF = {"encoder": {0: [0]}}  # one head off in the first layer, so the default view shows an effect
KIND_SHORT = {"encoder": "enc", "decoder": "dec", "cross": "cross"}
BEFORE_AFTER, VERSUS = ("before", "after"), ", before vs after"  # the bars' names and the end of their title
HEAD_CHOICE = dict(format_func=lambda h: f"head {h}", placeholder="all heads on")


@dataclass(frozen=True)
class Options:
    text: str  # the input as typed
    off: tuple[Head, ...]  # (kind, layer, head) of every head switched off


def options(ck: Checkpoint) -> Options:
    """The input, then one multiselect per layer (and per kind when there are several) of heads to switch off."""
    spec, layout = ck.spec, head_layout(ck.model)
    label = spec.input_name[0].upper() + spec.input_name[1:]
    text = url_widget(st.text_input, label, f"abl_{spec.short}_text", DEFAULT_TEXT[spec.name])
    st.subheader("Switch heads off")
    st.caption("Pick the heads to switch off in each layer. A switched-off head's output is multiplied by 0.")
    keys: list[str] = []  # one multiselect per kind and layer, e.g. "abl_tr_dec1"
    columns = st.columns(len(layout)) if len(layout) > 1 else [st]
    off: list[Head] = []
    for col, (kind, (layers, heads)) in zip(columns, layout.items()):
        if len(layout) > 1:
            col.markdown(f"**{spec.kind(kind).title}**")
        cells = col.columns(min(layers, 4)) if len(layout) == 1 else [col] * layers
        for l in range(layers):
            key = f"abl_{spec.short}_{KIND_SHORT[kind]}{l}"
            keys.append(key)
            if key in st.session_state:  # a value set in this session may name heads this model lacks
                st.session_state[key] = [h for h in st.session_state[key] if h in range(heads)]
            label = f"{kind} layer {l}" if len(layout) > 1 else f"layer {l}"
            default = DEFAULT_OFF.get(kind, {}).get(l, [])
            draw = cells[l % len(cells)].multiselect
            chosen = url_widget(draw, label, key, default, index_list(heads), options=range(heads), **HEAD_CHOICE)
            off.extend((kind, l, h) for h in chosen)
    total = sum(layers * heads for layers, heads in layout.values())
    left, right = st.columns([3, 1])
    if off:
        names = ", ".join(f"{k if len(layout) > 1 else ''} L{l}·H{h}".strip() for k, l, h in off)
        left.caption(f"{len(off)} of {total} heads are off: {names}.")
    else:
        left.caption(f"All {total} heads are on, so before and after are the same. Switch some heads off above.")
    all_on = lambda: st.session_state.update({key: [] for key in keys})  # every multiselect back to empty
    right.button("Switch every head on", key="abl_reset", on_click=all_on, disabled=not off)
    return Options(text, tuple(sorted(off)))


def predictions(spec: ModelSpec, res: Ablation) -> None:
    """Before vs after: the label, the next character or the translation; the bars open on request."""
    before, after = res.before, res.after
    if spec.output == "text":
        outputs_side_by_side((before, after), ("**Before** (every head on)", "**After** (heads off)"))
        same = before.prediction == after.prediction
        st.caption("The translation is the same." if same else "The translation changed.")
        return
    if spec.output == "classes":
        left, right = st.columns(2)
        for col, name, r in ((left, "Before", before), (right, "After", after)):
            label_metric(col, name, r)
        last = list(before.probs)[-1]  # "positive" for sentiment
        moved = points(after.probs[last] - before.probs[last])
        st.caption(f"P({last}) moved by {moved} when the heads were switched off.")
    else:
        b, a = before.prediction, after.prediction
        st.caption(
            f"Likeliest next character: before **{markdown_escape(visible_chars([b])[0])}** ({before.probs[b]:.1%}), "
            f"after **{markdown_escape(visible_chars([a])[0])}** ({after.probs[a]:.1%})."
        )
    bars = on_request("The probabilities before and after, as bars", "abl_bars")
    if bars.open:
        with bars:
            fig = prediction_bars(spec, (before, after), BEFORE_AFTER, VERSUS)
            show_figure(fig, "abl-prediction", html_name=f"ablation-{spec.name}-prediction.html")


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
    title = f"before − after: {name.lower()}, layer {layer} · head {head}"
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
    predictions(spec, res)
    off_names = ", ".join(f"{k} layer {l} head {h}" for k, l, h in opts.off) or "none"
    notes = f"Model: {spec.title}\nInput: {text}\nHeads off: {off_names}"
    notes += f"\nBefore: {res.before.prediction}\nAfter: {res.after.prediction}"
    downstream(spec, res, notes)


def main() -> None:
    st.title("Head ablation")
    st.caption(
        "Switch attention heads off and see what the model does without them: the prediction before and after, "
        "and how the attention of the layers above changes."
    )
    ck = require_checkpoint(pick_model("abl_model"))
    body(ck, options(ck))


main()
