"""The generator's sampling controls: temperature and top-k reshape the next-character distribution at
once, while the generated text keeps the settings it was written with until asked to write it again."""

from __future__ import annotations

import math

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.inference import reshaped
from model.core.results import RunResult
from pages.shared.display import show_figure
from pages.shared.runs import attempt, run_model
from pages.shared.state import bounded, init_state, range_slider, url_widget
from viz.attention import visible_chars
from viz.compare import distribution_bars, visible_probs

SAMPLING = ("gen_temp", "gen_topk")
TEMPERATURE = dict(min_value=0.0, max_value=2.0, step=0.1)
# Where the demo starts: the first place, from the prompt's end on, where the model's likeliest next
# character has less than HESITANT of the weight. After "ROMEO:" it is 99% sure of a line break, so
# temperature would move nothing; after "ROMEO:⏎" no character has 15% and temperature reshapes them all.
HESITANT = 0.6
LOOK_AHEAD = 40  # characters the model may be sure of before the demo gives up and shows the prompt's end


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


def where_it_hesitates(ck: Checkpoint, prompt: str) -> tuple[str, RunResult, float] | None:
    """The prompt, then the characters the model is sure of (its likeliest each time, each with at least
    ``HESITANT`` of the weight), up to the first place where it hesitates; the run there; and the least
    weight a sure character had (1 when there was none). The prompt itself when the model hesitates at
    once or stays sure for ``LOOK_AHEAD`` characters; None when it cannot run."""
    text, least = prompt, 1.0
    for _ in range(LOOK_AHEAD + 1):
        nxt = attempt(run_model, ck, text)
        if nxt is None:
            return None
        best = max(nxt.probs, key=nxt.probs.get)
        if nxt.probs[best] < HESITANT:
            return text, nxt, least
        if len(best) != 1:  # a special entry (<unk>): nothing a prompt could continue with
            break
        text, least = text + best, min(least, nxt.probs[best])
    nxt = attempt(run_model, ck, prompt)
    return None if nxt is None else (prompt, nxt, 1.0)


def shown_text(text: str, last: int = 30) -> str:
    """The end of ``text`` with its line breaks and spaces visible ("ROMEO:⏎")."""
    shown = "".join(visible_chars(list(text)))
    return shown if len(shown) <= last else "…" + shown[-last:]


@st.fragment
def sampling(ck: Checkpoint, prompt: str) -> None:
    """Temperature and top-k reshape the next-character distribution here and now; the text below is
    written again only when asked (a new text costs a whole generation)."""
    a, b = st.columns(2)
    hint = "0 always takes the likeliest character."
    temp = url_widget(a.slider, "Temperature", "gen_temp", 0.8, bounded(0.0, 2.0, float), **TEMPERATURE, help=hint)
    hint = "Sample only among the k likeliest characters; 0 = all."
    top_k = range_slider("gen_topk", 0, len(ck.vocabs["chars"]), 0, label="Top-k", parent=b, help=hint)
    found = where_it_hesitates(ck, prompt)
    if found is None:
        return
    text, nxt, least = found
    plain = visible_probs(nxt.probs)
    shaped = reshaped(plain, temp, top_k or None)
    names = (drawn_from(1, 0), drawn_from(temp, top_k))
    title = f"what comes after “{shown_text(text)}”: the 10 likeliest characters"
    if text != prompt:
        sure = text[len(prompt) :]
        what = "next character" if len(sure) == 1 else f"next {len(sure)} characters"
        st.caption(
            f"Right after your prompt the model is sure of the {what} "
            f"(“{shown_text(sure)}”: {math.floor(least * 100)}% or more), so temperature changes almost nothing "
            "there. The chart starts where it hesitates: move the temperature and watch the bars even out or "
            "sharpen."
        )
    fig = distribution_bars(plain, shaped, names=names, title=title, x_title="next character")
    show_figure(fig, "gen-next")
    used = st.session_state["gen_used"]
    if used != (temp, top_k):
        st.button("Write the text again with these settings", key="gen_write", on_click=write_again, type="primary")
        st.caption(f"The text below was written {drawn_from(*used)}.")
