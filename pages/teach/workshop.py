"""Workshop: predict, then reveal. Rounds of questions on attention (which key wins?) and on the
multi-head reshape (what shape comes out?), scored, with each question reachable by ``?q=N``."""

from __future__ import annotations

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind
from model.lessons.workshop import MAX_QUESTION, hand_question, head_question, head_sentence, kind_of, shape_question
from pages import heading
from pages.shared.models import get_checkpoint
from pages.shared.runs import run_model
from pages.shared.state import bounded, set_url, url_value
from pages.teach.rounds import attend_round, shape_round

QUESTION_URL = "q"  # ?q=N opens question N


def classifier_attention(sentence: str) -> AttentionKind | None:
    """The classifier's attention on one of the workshop sentences (None without a trained classifier)."""
    ck = get_checkpoint("classifier")
    return run_model(ck, sentence).kinds["encoder"] if isinstance(ck, Checkpoint) else None


def state() -> dict:
    """Session state of the round: the question number (seeded from the URL) and the scores."""
    s = st.session_state
    if "ws_q" not in s:
        s["ws_q"] = url_value(QUESTION_URL, 0, bounded(0, MAX_QUESTION))
    s.setdefault("ws_scores", {})  # question number -> points
    return s


def next_question() -> None:
    st.session_state["ws_q"] = min(st.session_state["ws_q"] + 1, MAX_QUESTION)


def reset_score() -> None:
    st.session_state["ws_scores"] = {}


def options(s) -> int:
    """The score so far, and the question to ask: its number (kept in the URL as ``?q=N``) is returned."""
    scores = s["ws_scores"]
    left, middle, right = st.columns([2, 2, 3], vertical_alignment="center")
    if scores:
        left.metric("Score", f"{sum(scores.values()):.2f} / {len(scores)}")
    else:  # "0.00 / 0" would read as a failed round
        left.metric("Score", "—", help="Reveal an answer to start scoring.")
    hint = "Every number is a fixed question: put ?q=N in a link and everyone gets the same one."
    middle.number_input("Question number", 0, MAX_QUESTION, step=1, key="ws_q", help=hint)
    with right:
        a, b = st.columns(2)
        a.button("Next question", key="ws_next", on_click=next_question, type="primary", width="stretch")
        b.button("Reset score", key="ws_reset", on_click=reset_score, width="stretch")
    set_url({QUESTION_URL: str(s["ws_q"])})
    return s["ws_q"]


def body(number: int, s) -> None:
    """Question ``number``: an attention question on the hand-worked example or a classifier head (the hand-worked
    example when no classifier is trained), or a reshape question."""
    kind = kind_of(number)
    if kind == "head":
        data = classifier_attention(head_sentence(number))
        if data is None:
            st.info(
                "The sentiment classifier is not trained on this machine, so this question uses the hand-worked "
                "example instead (train it with `python -m model train classifier`)."
            )
            kind = "attend"
        else:
            attend_round(head_question(number, data.weights, data.keys), s)
            return
    if kind == "attend":
        attend_round(hand_question(number), s)
    else:
        shape_round(shape_question(number), s)


def main() -> None:
    st.title(heading("workshop"))
    st.caption(
        "Guess first, then reveal the real numbers. Each question number is a fixed question, so a link with "
        "?q=N (e.g. on a slide) gives everyone the same one. Questions cycle: attention in the hand-worked "
        "example, a reshape shape, attention in a trained classifier head."
    )
    s = state()
    body(options(s), s)


main()
