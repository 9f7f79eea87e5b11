"""The generator's sampling controls: temperature and top-k reshape the next-character distribution at
once, while the generated text keeps the settings it was written with until asked to write it again."""

from __future__ import annotations

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.inference import reshaped
from pages.shared.display import show_figure
from pages.shared.runs import attempt, run_model
from pages.shared.state import bounded, init_state, range_slider, url_widget
from viz.compare import distribution_bars, visible_probs

SAMPLING = ("gen_temp", "gen_topk")
TEMPERATURE = dict(min_value=0.0, max_value=2.0, step=0.1)


def drawn_from(temp: float, top_k: int) -> str:
    """How a character is drawn, in words: ``"at temperature 0.8 from every character"``, ``"... from the 5
    likeliest characters"`` (top-k 0 keeps every character)."""
    pool = (
        "every character"
        if not top_k
        else "the likeliest character"
        if top_k == 1
        else f"the {top_k} likeliest characters"
    )
    return f"at temperature {temp:g} from {pool}"


def sampling_used(vocab_size: int) -> tuple[float, int]:
    """The temperature and top-k the shown text is written with (the sliders may differ until asked)."""
    init_state("gen_temp", 0.8, bounded(0.0, 2.0, float))
    init_state("gen_topk", 0, bounded(0, vocab_size))
    if "gen_used" not in st.session_state:  # the sampling settings the shown text was written with
        st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)
    return st.session_state["gen_used"]


def write_again() -> None:
    st.session_state["gen_used"] = tuple(st.session_state[k] for k in SAMPLING)


@st.fragment
def sampling(ck: Checkpoint, prompt: str) -> None:
    """Temperature and top-k reshape the next-character distribution here and now; the text below is
    written again only when asked (a new text costs a whole generation)."""
    a, b = st.columns(2)
    hint = "0 always takes the likeliest character."
    temp = url_widget(a.slider, "Temperature", "gen_temp", 0.8, bounded(0.0, 2.0, float), **TEMPERATURE, help=hint)
    hint = "Sample only among the k likeliest characters; 0 = all."
    top_k = range_slider("gen_topk", 0, len(ck.vocabs["chars"]), 0, label="Top-k", parent=b, help=hint)
    nxt = attempt(run_model, ck, prompt)
    if nxt is None:
        return
    plain = visible_probs(nxt.probs)
    shaped = reshaped(plain, temp, top_k or None)
    names = (drawn_from(1, 0), drawn_from(temp, top_k))
    title = "what comes after the prompt: the 10 likeliest characters"
    fig = distribution_bars(plain, shaped, names=names, title=title, x_title="next character")
    show_figure(fig, "gen-next")
    used = st.session_state["gen_used"]
    if used != (temp, top_k):
        st.button("Write the text again with these settings", key="gen_write", on_click=write_again, type="primary")
        st.caption(f"The text below was written {drawn_from(*used)}.")
