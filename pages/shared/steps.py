"""Decoding step by step: what the query that wrote output n attended to (the translator, the
generator), and the generator's causal mask, scores to softmax, for one head."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from model.analysis.runs import chars_read
from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from pages.shared.display import show_figure
from pages.shared.runs import run_causal_steps, run_last_query
from pages.shared.state import init_state, one_of, range_slider, sync_url
from pages.shared.text import markdown_escape
from pages.shared.views import axes
from viz.attention import causal_step_figures, visible_chars, weights_frame
from viz.common import head_name, shown_token
from viz.explorer.state import clamp_state, state_from_url
from viz.steps import decoding_step_figures, step_figures

STEP_TITLES = {"scores": "1. scores", "mask": "2. mask", "masked": "3. masked scores", "softmax": "4. softmax"}
FOLLOWED = (  # which head the steps draw, said under them
    "the head of the weight last clicked in the explorer, or the one it opened on; click a weight of another "
    "head to follow it"
)


def followed_head(result: RunResult, prefix: str, cell: Mapping[str, Any] | None, kind: str) -> tuple[int, int]:
    """The layer and head the steps below the explorer draw, as the explorer shows them: the clicked weight's
    (a click in the mean view gives its layer), else the view the explorer opened on (its URL keys under
    ``prefix``, clamped to ``kind`` of this run, as the explorer clamps them), else layer 0, head 0. The
    browser keeps the view it moves to with the keys to itself until a click."""
    view = clamp_state([result.kinds[kind]], state_from_url(st.query_params, prefix))
    layer, head = view["layer"], view["head"]
    if cell is not None and cell.get("layer") is not None:  # a cell of any kind: its layer, where this kind has it
        shown = result.kinds[kind]
        layer = min(int(cell["layer"]), shown.layers - 1)
        if cell.get("head") is not None:
            head = min(int(cell["head"]), shown.heads - 1)
    return layer, head


def translation_steps(result: RunResult, layer: int) -> list:
    """What output token n attended to when the decoder wrote it; returns the figures."""
    cross, decoder = result.kinds["cross"], result.kinds["decoder"]
    hint = "Output token n: what its query attended to."
    step = range_slider("tr_step", 1, len(cross.queries), 1, label="Decoding step n", help=hint)
    layer = min(layer, cross.layers - 1)
    out, read = cross.queries[step - 1], decoder.keys[step - 1]  # the word written there, the decoder's input
    query = f"{step - 1}:{shown_token(out)} (input: {shown_token(read)})"  # as the explanation names it
    st.caption(
        f"Step {step} (output position {step - 1}; positions count from 0): the decoder wrote "
        f"**{markdown_escape(shown_token(out))}**, reading **{markdown_escape(shown_token(read))}** there: query "
        f"{markdown_escape(query)}. Its query looked at the German words (cross-attention) and at the English "
        f"written so far (decoder self-attention). Layer {layer}."
    )
    cross_row = cross.weights[layer, :, step - 1]  # (heads, German keys)
    self_row = decoder.weights[layer, :, step - 1, :step]  # (heads, English written so far)
    src, written = axes(cross, result)[1], list(decoder.keys)[:step]
    figs = decoding_step_figures(cross_row, self_row, src, written, query_label=query)
    for fig, key in zip(figs, ("tr-step-cross-heads", "tr-step-cross-bar", "tr-step-self-heads")):
        show_figure(fig, key)
    return figs


def causal_steps(ck: Checkpoint, text: str, layer: int, head: int) -> list:
    """The causal mask of one head on ``text``, step by step (scores, mask, masked scores, softmax), one tab
    each; returns the figures of the tabs drawn."""
    st.subheader("The causal mask, step by step")
    st.caption(
        f"{head_name(layer, head)}: {FOLLOWED}. It reads only the last {len(text)} characters, so each row of the softmax "
        "sums to 1. A character may look at itself and at earlier characters, never at later ones: those "
        "would give away what comes next."
    )
    names = list(STEP_TITLES.values())
    init_state("gen_causal_tab", names[0], one_of(names))
    tabs = dict(zip(STEP_TITLES, st.tabs(names, key="gen_causal_tab", on_change="rerun")))
    sync_url("gen_causal_tab")
    steps = run_causal_steps(ck, text, layer, head)
    labels = visible_chars(chars_read(ck, text))
    shown = [name for name, tab in tabs.items() if tab.open]
    figs = causal_step_figures(steps["scores"], steps["mask"], steps["masked"], steps["softmax"], labels, only=shown)
    for name, fig in figs.items():
        with tabs[name]:
            csv = weights_frame(steps["softmax"], labels) if name == "softmax" else None
            show_figure(fig, f"gen-causal-{name}", csv=csv, csv_name=f"generator-layer{layer}-head{head}-softmax.csv")
    return list(figs.values())


def generation_step(ck: Checkpoint, result: RunResult, layer: int, window: int) -> list:
    """The chosen generated character: its per-head and mean attention; returns the two figures."""
    st.subheader("What the model looked at to write each new character")
    prompt, new_text = result.notes["prompt"], result.notes["new_text"]
    n = range_slider("gen_step", 1, len(new_text), 1, label="Generated character n")
    full = prompt + new_text
    p = len(prompt) + n - 1  # position of character n in the full text
    context = full[:p][-ck.model.config.block_size :]
    row = run_last_query(ck, context)[layer]  # (heads, keys)
    k = min(window, row.shape[1])
    keys = visible_chars(chars_read(ck, context[-k:]))
    query = f"{k - 1}:{keys[-1]}"  # the last key drawn: the bars' own label of it
    hidden = 1.0 - row[:, -k:].mean(axis=0).sum()
    st.caption(
        f"Character {n} is **{markdown_escape(visible_chars([full[p]])[0])}**. To write it, the model's query was "
        f"the character just before it ({markdown_escape(query)}), which attends over the context. Layer {layer}; "
        f"the last {k} of {len(context)} context characters are drawn"
        + (f" ({hidden:.0%} of the mean weight falls on earlier ones)." if hidden > 0.005 else ".")
    )
    bar_title = f"mean over heads: what {query} attended to"
    heads, bar = step_figures(row[:, -k:], keys, query_label=query, bar_title=bar_title)
    show_figure(heads, "gen-step-heads")
    show_figure(bar, "gen-step-bar")
    return [heads, bar]
