"""Multi-head reshape: every step of batched multi-head self-attention, coloured by head."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.lessons.reshape import input_tensor, reshape_steps
from pages import heading
from pages.lessons.reshape_steps import MAX_T, checks, sentence_length, sentence_tokens, show_step
from pages.shared.display import csv_button
from pages.shared.state import bounded, init_state, one_of, sync_url
from pages.shared.text import plural
from viz.reshape import steps_frame

MAX_B, MAX_K, MAX_H = 2, 32, 8  # MAX_T: pages.lessons.reshape_steps
KINDS = {"narrow": "narrow: split k into h slices", "wide": "wide: every head is k wide"}
SCALINGS = {"sqrt": "q·k / √s", "split": "(q / s^¼)·(k / s^¼)"}
URL_KEYS = (
    "reshape_b",
    "reshape_t",
    "reshape_k",
    "reshape_h",
    "reshape_kind",
    "reshape_scale",
    "reshape_seed",
    "reshape_text",
)


@dataclass(frozen=True)
class Options:
    b: int  # batch
    t: int  # tokens per sequence, when there is no sentence
    k: int  # width
    h: int  # heads
    wide: bool  # every head is k wide (else k is split into h slices)
    split_scale: bool  # scale q and k by s^¼ each (else q·k by √s)
    seed: int
    text: str  # the optional sentence


def options() -> Options:
    init_state("reshape_b", 2, bounded(1, MAX_B))
    init_state("reshape_t", 4, bounded(2, MAX_T))
    init_state("reshape_k", 8, bounded(1, MAX_K))
    init_state("reshape_h", 2, bounded(1, MAX_H))
    init_state("reshape_kind", "narrow", one_of(list(KINDS)))
    init_state("reshape_scale", "sqrt", one_of(list(SCALINGS)))
    init_state("reshape_seed", 0, bounded(0, 2**31 - 1))
    init_state("reshape_text", "")
    cols = st.columns(5)
    cols[0].number_input("batch b", 1, MAX_B, step=1, key="reshape_b")
    from_sentence = sentence_length(st.session_state["reshape_text"])
    if from_sentence:  # t follows the sentence: show its t, not the random input's
        cols[1].number_input(
            "tokens t",
            value=from_sentence,
            disabled=True,
            key=f"reshape_t_sentence_{from_sentence}",
            help="t is the sentence's number of words; clear the sentence to choose t.",
        )
    else:
        cols[1].number_input("tokens t", 2, MAX_T, step=1, key="reshape_t")
    cols[2].number_input("width k", 1, MAX_K, step=1, key="reshape_k")
    cols[3].number_input("heads h", 1, MAX_H, step=1, key="reshape_h")
    cols[4].number_input("seed", 0, 2**31 - 1, step=1, key="reshape_seed", help="Seeds the input and the weights.")
    left, right = st.columns(2)
    left.radio("Heads", list(KINDS), format_func=KINDS.get, key="reshape_kind", horizontal=True)
    right.radio("Scaling", list(SCALINGS), format_func=SCALINGS.get, key="reshape_scale", horizontal=True)
    st.text_input(
        "Optional sentence",
        key="reshape_text",
        placeholder="e.g. Life is short, eat dessert first.",
        help=f"Its first {MAX_T} words (seeded random embeddings) replace the random input; t follows the sentence.",
    )
    sync_url(*URL_KEYS)
    s = st.session_state
    wide, split = s.reshape_kind == "wide", s.reshape_scale == "split"
    return Options(s.reshape_b, s.reshape_t, s.reshape_k, s.reshape_h, wide, split, s.reshape_seed, s.reshape_text)


def body(opts: Options) -> None:
    """Every step of the batched computation for the chosen sizes, then the checks against a per-head loop."""
    b, k, h, wide = opts.b, opts.k, opts.h, opts.wide
    if not wide and k % h:
        fits = sorted({max(h, k - k % h), k - k % h + h})
        st.warning(
            f"Narrow heads split the width k = {k} into h = {h} equal slices, so k must be divisible by h. "
            f"Try k = {' or '.join(map(str, fits))}, or choose wide heads."
        )
        return
    tokens = sentence_tokens(opts.text)
    t = len(tokens) if tokens else opts.t
    if tokens:
        st.caption(f"t = {t} from the sentence.")
    x = input_tensor(b, t, k, seed=opts.seed, tokens=tokens)
    result = reshape_steps(x, h, wide=wide, split_scale=opts.split_scale, seed=opts.seed)
    numbers = plural(result.head_dim, "number")
    st.caption(f"s = {numbers} per head ({'wide: s = k' if wide else 'narrow: s = k / h'}).")
    for i, step in enumerate(result.steps, start=1):
        show_step(i, step, h, tokens)
    csv_button(
        lambda: steps_frame(result.steps), "reshape-steps", "reshape_steps.csv", label="Download every step (CSV)"
    )
    checks(result, k, h)


def main() -> None:
    st.title(heading("reshape"))
    st.markdown(
        "How one batched computation runs all heads at once: project, view, transpose, fold the heads into the "
        "batch, two batched matrix products, then undo the reshapes. Colour shows which head each number belongs "
        "to; follow one colour down the page."
    )
    body(options())


main()
