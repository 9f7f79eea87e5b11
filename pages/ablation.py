"""Head ablation: switch any set of heads off and compare the model's answer and attention before
and after. The shared model is never changed: the heads go off through ``head_mask`` arguments."""

from __future__ import annotations

import numpy as np
import streamlit as st

from model.analysis.ablation import Ablation, Head, head_layout
from pages.shared.display import export_view_button, show_figure
from pages.shared.explorer import attention_explorer
from pages.shared.models import require_checkpoint
from pages.shared.outputs import label_metric, outputs_side_by_side
from pages.shared.runs import INPUT_NAMES, SHORT, TASK_NAMES, attempt, input_notes, pick_task, read_input, run_ablation
from pages.shared.state import index_list, init_state, radio_choice, sync_url
from pages.shared.text import markdown_escape, points
from pages.shared.views import axes, labelled, pick_head, window
from viz.attention import visible_chars
from viz.compare import change_grid, difference_heatmap, distribution_bars, visible_probs

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


def predictions(task: str, res: Ablation) -> list:
    """Before vs after: the label, the next-character distribution or the translation; returns its figures."""
    before, after = res.before, res.after
    if task == "translator":
        outputs_side_by_side((before, after), ("**Before** (every head on)", "**After** (heads off)"))
        st.caption("The translation is the same." if before.prediction == after.prediction else "The translation changed.")
        return []
    if task == "classifier":
        left, right = st.columns(2)
        for col, name, r in ((left, "Before", before), (right, "After", after)):
            label_metric(col, name, r)
        last = list(before.probs)[-1]  # "positive" for sentiment
        st.caption(f"P({last}) moved by {points(after.probs[last] - before.probs[last])} when the heads were switched off.")
        fig = distribution_bars(before.probs, after.probs, top=None, title="class probabilities", x_title="class")
    else:
        b, a = before.prediction, after.prediction
        st.caption(
            f"Likeliest next character: before **{markdown_escape(visible_chars([b])[0])}** ({before.probs[b]:.1%}), "
            f"after **{markdown_escape(visible_chars([a])[0])}** ({after.probs[a]:.1%})."
        )
        shown = [visible_probs(r.probs) for r in (before, after)]
        fig = distribution_bars(*shown, title="next character: top 10, before vs after", x_title="next character")
    show_figure(fig, "abl-prediction", html_name=f"ablation-{task}-prediction.html")
    return [fig]


@st.fragment
def downstream(task: str, res: Ablation, figs: list, notes: str) -> None:
    """Where attention changed: a per-head summary and one head's before − after heatmap."""
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
    title = f"{name}: largest change of any weight, per head"
    grid = change_grid(res.change_per_head(kind), off=res.off_in(kind), title=title)
    show_figure(grid, "abl-grid")
    st.markdown("**After, every layer and head** (the heads you switched off still compute their weights)")
    attention_explorer(labelled(res.after), key="abl-explorer", url_prefix="abl_x", title="Head ablation: after")
    layer, head = pick_head(L, H, "abl", default_layer=L - 1)
    rows, cols = axes(k, res.before)
    m, cut = window(delta[layer, head], task)
    if cut != slice(None):
        rows, cols = rows[cut], cols[cut]
        st.caption(f"The last {len(rows)} characters are drawn.")
    title = f"before − after: {name.lower()}, layer {layer} · head {head}"
    diff = difference_heatmap(m, rows, cols, title=title, value="before − after", **names)
    show_figure(diff, "abl-diff", html_name=f"ablation-{task}-layer{layer}-head{head}.html")
    st.caption(f"Largest change in this head: {np.abs(delta[layer, head]).max():.4f}.")
    export_view_button([*figs, grid, diff], f"Head ablation · {TASK_NAMES[task]}", "abl-export", notes=notes)
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
figs = predictions(task, res)
off_names = ", ".join(f"{k} layer {l} head {h}" for k, l, h in off) or "none"
notes = f"Model: {TASK_NAMES[task]}\nInput: {text}\nHeads off: {off_names}"
notes += f"\nBefore: {res.before.prediction}\nAfter: {res.after.prediction}"
downstream(task, res, figs, notes)
