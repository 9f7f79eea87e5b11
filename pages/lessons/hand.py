"""Self-attention by hand: the worked example of Sebastian Raschka's "Understanding and coding the
self-attention mechanism" on any sentence, one step at a time."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from model.lessons.hand import multi_head_walkthrough
from pages import heading
from pages.lessons.hand_steps import sections
from pages.lessons.stepper import stepper
from pages.shared.state import bounded, init_state, one_of, sync_url
from pages.shared.text import clean_text
from viz.common import unique_labels

DEFAULT_SENTENCE = "Life is short, eat dessert first."
MAX_TOKENS = 40  # a 40 × 40 heatmap is still readable on a projector
TOKENIZERS = {"notebook": "notebook: drop commas, split on spaces", "spacy": "spaCy: lower-case, punctuation split off"}
SIZES = {"hand_d": ("d (embedding)", 16), "hand_dq": ("d_q = d_k", 24), "hand_dv": ("d_v", 28)}
MAX_WIDTH, MAX_HEADS = 64, 8
URL_KEYS = ("hand_sentence", "hand_tokenizer", "hand_seed", *SIZES, "hand_heads", "hand_plain_scale", "hand_view")
VIEWS = {"all": "all steps", "step": "one step at a time (← → keys)"}
STEP_URL = "step"  # ?step=N shows step N of the one-step view


@dataclass(frozen=True)
class Options:
    sentence: str
    tokenizer: str  # a key of TOKENIZERS
    seed: int
    d: int  # embedding width
    d_q: int  # query and key width
    d_v: int  # value width
    heads: int  # for the multi-head section
    view: str  # a key of VIEWS


def options() -> Options:
    init_state("hand_sentence", DEFAULT_SENTENCE)
    init_state("hand_tokenizer", "notebook", one_of(list(TOKENIZERS)))
    init_state("hand_seed", 123, bounded(0, 2**31 - 1))
    for key, (_, default) in SIZES.items():
        init_state(key, default, bounded(1, MAX_WIDTH))
    init_state("hand_heads", 2, bounded(1, MAX_HEADS))
    init_state("hand_plain_scale", False, lambda raw: raw == "True")
    left, right = st.columns([3, 2])
    left.text_input("Sentence", key="hand_sentence", help=f"Up to {MAX_TOKENS} tokens are used.")
    right.radio("Tokenizer", list(TOKENIZERS), format_func=TOKENIZERS.get, key="hand_tokenizer", horizontal=True)
    cols = st.columns(5)
    cols[0].number_input("Seed", 0, 2**31 - 1, step=1, key="hand_seed", help="123 reproduces the notebook.")
    for col, (key, (label, _)) in zip(cols[1:4], SIZES.items()):
        col.number_input(label, 1, MAX_WIDTH, step=1, key=key)
    cols[4].number_input("Heads", 1, MAX_HEADS, step=1, key="hand_heads", help="For the multi-head section.")
    init_state("hand_view", "step" if STEP_URL in st.query_params else "all", one_of(list(VIEWS)))
    st.radio(
        "View",
        list(VIEWS),
        format_func=VIEWS.get,
        key="hand_view",
        horizontal=True,
        help="One step at a time: Previous/Next buttons or the ← → keys; the step is kept in the URL.",
    )
    sync_url(*URL_KEYS)
    s = st.session_state
    sizes = s.hand_d, s.hand_dq, s.hand_dv
    return Options(s.hand_sentence, s.hand_tokenizer, s.hand_seed, *sizes, s.hand_heads, s.hand_view)


def body(opts: Options) -> None:
    """The sentence through one head, step by step: every step at once, or one at a time."""
    text = clean_text(opts.sentence, what="sentence")
    if text is None:
        return
    try:
        sizes = dict(d=opts.d, d_q=opts.d_q, d_k=opts.d_q, d_v=opts.d_v, max_tokens=MAX_TOKENS)
        mh = multi_head_walkthrough(text, heads=opts.heads, seed=opts.seed, tokenizer=opts.tokenizer, **sizes)
    except ValueError as e:
        st.warning(str(e))
        return
    w = mh.heads[0]
    if w.dropped:
        st.info(f"The sentence has {len(w.tokens) + w.dropped} tokens; only the first {MAX_TOKENS} are shown.")
    labels = unique_labels(w.tokens)
    parts = sections(mh, labels)
    if opts.view == "all":
        st.query_params.pop(STEP_URL, None)
        for i, (title, expanded, draw) in enumerate(parts, start=1):
            # lazy: a closed step costs nothing; opening it reruns the page and draws it
            part = st.expander(title, expanded=expanded, key=f"hand_part_{i}", on_change="rerun")
            if part.open:
                with part:
                    draw()
        return
    step = stepper("hand_step", [title for title, _, _ in parts], url_key=STEP_URL)
    title, _, draw = parts[step - 1]
    st.subheader(title)
    draw()


def main() -> None:
    st.title(heading("hand"))
    st.markdown(
        "Follow one attention head through a sentence with small random matrices. With the default settings the "
        "numbers match the classic worked example (seed 123, d = 16, d_q = d_k = 24, d_v = 28)."
    )
    body(options())


main()
