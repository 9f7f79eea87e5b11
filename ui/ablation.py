"""Head ablation: switch any set of heads off and compare the model's answer and attention before
and after. The shared model is never changed: the heads go off through ``head_mask`` arguments."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis.ablation import Ablation, Head, head_layout
from ui.shared.display import export_view_button, show_figure, show_matrix
from ui.shared.explorer import attention_explorer
from ui.shared.models import require_checkpoint
from ui.shared.outputs import label_metric, outputs_side_by_side
from ui.shared.runs import INPUT_NAMES, SHORT, TASK_NAMES, attempt, input_notes, pick_task, read_input, run_ablation
from ui.shared.state import index_list, init_state, on_request, radio_choice, sync_url
from ui.shared.text import markdown_escape, points
from ui.shared.views import axes, labelled, pick_head, window
from viz.attention import visible_chars
from viz.common import unique_labels
from viz.compare import (
    change_grid,
    change_table,
    difference_heatmap,
    difference_table,
    distribution_bars,
    visible_probs,
)
from viz.matrix import matrix_frame

DEFAULT_TEXT = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "O Romeo, Romeo! wherefore art thou",
    "translator": "ein mann fährt fahrrad .",
}
KIND_TITLES = {"encoder": "Encoder self-attention", "decoder": "Decoder self-attention", "cross": "Cross-attention"}
DEFAULT_OFF = {"encoder": {0: [0]}}  # one head off in the first layer, so the default view shows an effect
KIND_SHORT = {"encoder": "enc", "decoder": "dec", "cross": "cross"}


def head_switches(task: str, layout: dict[str, tuple[int, int]]) -> tuple[tuple[Head, ...], list[str]]:
    """One multiselect per layer (and per kind for the translator); returns the heads off and the widget keys."""
    st.subheader("Switch heads off")
    st.caption("Pick the heads to switch off in each layer. A switched-off head's output is multiplied by 0.")
    keys: list[str] = []  # one multiselect per kind and layer, e.g. "abl_tr_dec1"
    columns = st.columns(len(layout)) if len(layout) > 1 else [st]
    off: list[Head] = []
    for col, (kind, (layers, heads)) in zip(columns, layout.items()):
        if len(layout) > 1:
            col.markdown(f"**{KIND_TITLES[kind]}**")
        cells = col.columns(min(layers, 4)) if len(layout) == 1 else [col] * layers
        for l in range(layers):
            key = f"abl_{SHORT[task]}_{KIND_SHORT[kind]}{l}"
            keys.append(key)
            init_state(key, DEFAULT_OFF.get(kind, {}).get(l, []), index_list(heads))
            st.session_state[key] = [h for h in st.session_state[key] if h in range(heads)]
            label = f"{kind} layer {l}" if len(layout) > 1 else f"layer {l}"
            cells[l % len(cells)].multiselect(
                label, list(range(heads)), key=key, format_func=lambda h: f"head {h}", placeholder="all heads on"
            )
            off.extend((kind, l, h) for h in st.session_state[key])
    total = sum(layers * heads for layers, heads in layout.values())
    left, right = st.columns([3, 1])
    if off:
        names = ", ".join(f"{k if len(layout) > 1 else ''} L{l}·H{h}".strip() for k, l, h in off)
        left.caption(f"{len(off)} of {total} heads are off: {names}.")
    else:
        left.caption(f"All {total} heads are on, so before and after are the same. Switch some heads off above.")
    all_on = lambda: st.session_state.update({key: [] for key in keys})  # every multiselect back to empty
    right.button("Switch every head on", key="abl_reset", on_click=all_on, disabled=not off)
    return tuple(sorted(off)), keys


def prediction_figure(task: str, res: Ablation):
    """Before vs after as grouped bars: the class probabilities, or the top ten next characters."""
    before, after = res.before, res.after
    if task == "classifier":
        return distribution_bars(before.probs, after.probs, top=None, title="class probabilities", x_title="class")
    shown = [visible_probs(r.probs) for r in (before, after)]
    return distribution_bars(*shown, title="next character: top 10, before vs after", x_title="next character")


def predictions(task: str, res: Ablation) -> None:
    """Before vs after: the label, the next character or the translation; the bars open on request."""
    before, after = res.before, res.after
    if task == "translator":
        outputs_side_by_side((before, after), ("**Before** (every head on)", "**After** (heads off)"))
        st.caption("The translation is the same." if before.prediction == after.prediction else "The translation changed.")
        return
    if task == "classifier":
        left, right = st.columns(2)
        for col, name, r in ((left, "Before", before), (right, "After", after)):
            label_metric(col, name, r)
        last = list(before.probs)[-1]  # "positive" for sentiment
        st.caption(f"P({last}) moved by {points(after.probs[last] - before.probs[last])} when the heads were switched off.")
    else:
        b, a = before.prediction, after.prediction
        st.caption(
            f"Likeliest next character: before **{markdown_escape(visible_chars([b])[0])}** ({before.probs[b]:.1%}), "
            f"after **{markdown_escape(visible_chars([a])[0])}** ({after.probs[a]:.1%})."
        )
    bars = on_request("The probabilities before and after, as bars", "abl_bars")
    if bars.open:
        with bars:
            show_figure(prediction_figure(task, res), "abl-prediction", html_name=f"ablation-{task}-prediction.html")


@st.fragment
def downstream(task: str, res: Ablation, notes: str) -> None:
    """Where attention changed: a per-head summary and one head's before − after difference."""
    st.subheader("What changed downstream")
    st.caption(
        "A switched-off head still computes its weights, so its own layer's attention stays the same. Every "
        "layer above it reads a different input, so attention there moves: red = less weight after, blue = more."
    )
    kinds = list(res.before.kinds)
    titled = lambda k: res.before.kinds[k].title
    kind = radio_choice("abl_kind", kinds, kinds[-1], label="Attention", format_func=titled)
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
    rows, cols = axes(k, res.before)
    m, cut = window(delta[layer, head], task)
    if cut != slice(None):
        rows, cols = rows[cut], cols[cut]
        st.caption(f"The last {len(rows)} characters are drawn.")
    title = f"before − after: {name.lower()}, layer {layer} · head {head}"
    largest = f"{title} (largest change {np.abs(delta[layer, head]).max():.4f})"  # one element less than a caption
    show_matrix(difference_table(m, rows, cols, title=largest, **names), "abl-diff",
                csv=lambda: matrix_frame(m, unique_labels(rows), unique_labels(cols)), csv_name=f"ablation-{task}-diff.csv")  # fmt: skip

    def figures() -> list:  # the export's charts, built only when it is clicked
        figs = [] if task == "translator" else [prediction_figure(task, res)]
        figs.append(change_grid(change, off=off, title=grid_title))
        figs.append(difference_heatmap(m, rows, cols, title=title, value="before − after", **names))
        return figs

    export_view_button(figures, f"Head ablation · {TASK_NAMES[task]}", "abl-export", notes=notes)
    sync_url("abl_kind")


st.title("Head ablation")
st.caption(
    "Switch attention heads off and see what the model does without them: the prediction before and after, "
    "and how the attention of the layers above changes."
)
task = pick_task("abl_model")
ck = require_checkpoint(task)
text_key = f"abl_{SHORT[task]}_text"
init_state(text_key, DEFAULT_TEXT[task])
st.text_input(INPUT_NAMES[task][0].upper() + INPUT_NAMES[task][1:], key=text_key)
sync_url(text_key)
off, switch_keys = head_switches(task, head_layout(ck.model))
sync_url(*switch_keys)
text = read_input(task, st.session_state[text_key], INPUT_NAMES[task])
res = text and attempt(run_ablation, ck, text, off, what="Nothing to run")
if res is None or not input_notes(res.before, "the input"):
    st.stop()
st.subheader("Before vs after")
predictions(task, res)
off_names = ", ".join(f"{k} layer {l} head {h}" for k, l, h in off) or "none"
notes = f"Model: {TASK_NAMES[task]}\nInput: {text}\nHeads off: {off_names}"
notes += f"\nBefore: {res.before.prediction}\nAfter: {res.after.prediction}"
downstream(task, res, notes)
