"""Workshop: predict, then reveal. Rounds of questions on attention (which key wins?) and on the
multi-head reshape (what shape comes out?), scored, with each question reachable by ``?q=N``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, attention_kind
from model.lessons.workshop import (
    MAX_QUESTION,
    AttendQuestion,
    ShapeQuestion,
    hand_question,
    head_question,
    head_sentence,
    kind_of,
    parse_shape,
    score_attention_guess,
    score_shape_guess,
    shape_question,
)
from ui.shared.display import show_figure, show_matrix
from ui.shared.explorer import attention_explorer
from ui.shared.models import get_checkpoint
from ui.shared.runs import run_model
from ui.shared.state import bounded, set_url, url_value
from ui.shared.text import markdown_escape, plural, sentence_end
from viz.attention import query_bar
from viz.common import unique_labels
from viz.matrixview import matrix_payload
from viz.reshape import step_payload

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


def question_name(number: int) -> str:
    """``"Question 3"``; question 0, where every round starts, is the warm-up."""
    return f"Question {number}" if number else "Warm-up question (number 0)"


def attend_round(q: AttendQuestion, s) -> None:
    labels = unique_labels(q.tokens)
    query = labels[q.query]
    where = "the hand-worked example" if q.source == "hand" else f"the sentiment classifier, {q.detail}"
    st.subheader(f"{question_name(q.number)}: which word will the query attend to most?")
    st.markdown(
        f"In {where}, the sentence is **{markdown_escape(q.sentence)}**{sentence_end(q.sentence)} Query token: "
        f"**{markdown_escape(query)}**{sentence_end(query)} Which key token gets the largest attention weight?"
    )
    if q.source == "hand":
        st.caption(f"One head with {q.detail}, d = 16, d_q = d_k = 24, as on the first page.")
    if q.query_vector is not None and q.key_vectors is not None:
        with st.expander("A hint: the query and the keys", expanded=False):
            st.caption(
                "Each key's score is the dot product of its row with the query row; the softmax keeps the order. "
                "Which key row looks most like the query row?"
            )
            rows = [f"query of {query}", *(f"key of {label}" for label in labels)]
            vectors = np.vstack([q.query_vector, q.key_vectors])
            dims = [str(i) for i in range(vectors.shape[1])]
            titles = dict(name="query and keys", row_title="vector", col_title="dimension")
            show_matrix(matrix_payload(vectors, rows, dims, **titles), "ws-hint")
    revealed = q.number in s["ws_scores"]
    key = f"ws_guess_{q.number}"
    guess = st.radio("Your guess", labels, index=None, key=key, horizontal=True, disabled=revealed)
    if not revealed and st.button("Reveal", key="ws_reveal"):
        if guess is None:
            st.warning("Pick a word first, then reveal.")
        else:
            s["ws_scores"][q.number] = score_attention_guess(q.row, labels.index(guess))
            st.rerun()
    if revealed:
        points = s["ws_scores"][q.number]
        i = labels.index(guess) if guess in labels else None
        best = labels[q.answer]
        mine = f"**{markdown_escape(guess)}** (weight {q.row[i]:.3f})" if i is not None else "no guess"
        message = (
            f"The strongest key is **{markdown_escape(best)}** with weight {q.row[q.answer]:.3f}. "
            f"You chose {mine}: **{points:.2f} points**."
        )
        (st.success if points == 1 else st.info)(message)
        show_figure(
            query_bar(q.row, q.tokens, query_label=query, title=f"what {query} attended to"),
            "ws-bar",
            csv=pd.DataFrame({"key": labels, "weight": np.round(q.row, 6)}),
            csv_name=f"question{q.number}.csv",
        )
        st.caption(f"Every query of this head ({q.detail}): hover a word to see what it looks at.")
        kind = attention_kind("encoder", q.weights[None, None], q.tokens, q.tokens, title=q.detail)
        attention_explorer([kind], key=f"ws-explorer-{q.number}", url_prefix="ws")


def shape_round(q: ShapeQuestion, s) -> None:
    st.subheader(f"{question_name(q.number)}: what shape does this reshape step give?")
    kind = f"wide heads: s = k = {q.k}" if q.wide else f"narrow heads: s = k / h = {q.head_dim}"
    st.markdown(
        f"Batched multi-head self-attention on an input x of shape (b, t, k) = ({q.b}, {q.t}, {q.k}) with "
        f"h = {plural(q.heads, 'head')} ({kind}).\n\n"
        f"The step before, **{q.before}**, gave shape `{q.before_shape}`. The next step is **{q.step}**: {q.note}\n\n"
        + (
            "What shape comes out? (Queries, keys and values go through this step side by side; give the queries'.)"
            if q.together
            else "What shape comes out?"
        )
    )
    table = step_payload(q.before_tensor, q.before_head_of, q.before_dims, heads=q.heads, name=q.before)
    show_matrix(table, "ws-before")
    st.caption("The tensor before this step; colour shows which head each number belongs to.")
    revealed = q.number in s["ws_scores"]
    key = f"ws_shape_{q.number}"
    st.text_input("Your shape", key=key, placeholder="e.g. (2, 4, 8)", disabled=revealed, max_chars=200)
    if not revealed and st.button("Reveal", key="ws_reveal"):
        try:
            guess = parse_shape(st.session_state.get(key, ""))
        except ValueError as e:
            st.warning(f"That is not a shape yet: {e}.")
        else:
            s["ws_scores"][q.number] = score_shape_guess(guess, q.shape)
            s[f"ws_parsed_{q.number}"] = guess
            st.rerun()
    if revealed:
        points = s["ws_scores"][q.number]
        guess = s.get(f"ws_parsed_{q.number}")
        named = ", ".join(f"{d} = {n}" for d, n in zip(q.dims, q.shape))
        message = f"The step gives `{q.shape}`: ({named}). You typed `{guess}`: **{points:.2f} points**."
        (st.success if points == 1 else st.info)(message)
        st.caption("Half a point per axis is the most a guess with the right number of axes but a wrong size can earn.")


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
    st.title("Workshop: predict, then reveal")
    st.caption(
        "Guess first, then reveal the real numbers. Each question number is a fixed question, so a link with "
        "?q=N (e.g. on a slide) gives everyone the same one. Questions cycle: attention in the hand-worked "
        "example, a reshape shape, attention in a trained classifier head."
    )
    s = state()
    body(options(s), s)


main()
