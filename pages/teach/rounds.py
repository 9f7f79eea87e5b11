"""The workshop's rounds: an attention question (which key wins?) and a reshape question (what shape comes
out?), each asked, guessed, revealed and scored on the page."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from model.core.results import attention_kind
from model.lessons.workshop import AttendQuestion, ShapeQuestion, parse_shape, score_attention_guess, score_shape_guess
from pages import page
from pages.shared.display import show_figure, show_matrix
from pages.shared.explorer import attention_explorer
from pages.shared.text import markdown_escape, plural, sentence_end
from viz.attention import query_bar
from viz.common import unique_labels
from viz.matrixview import matrix_payload
from viz.reshape import step_payload


def question_name(number: int) -> str:
    """``"Question 3"``; question 0, where every round starts, is the warm-up."""
    return f"Question {number}" if number else "Warm-up question (number 0)"


def attend_round(q: AttendQuestion, s) -> None:
    """An attention question: the sentence and its query, a hint on request, the guess and, once revealed,
    the points, the query's weights and the head in the explorer (``s``: the session state with the scores)."""
    labels = unique_labels(q.tokens)
    query = labels[q.query]
    where = "the hand-worked example" if q.source == "hand" else f"the sentiment classifier, {q.detail}"
    st.subheader(f"{question_name(q.number)}: which word will the query attend to most?")
    st.markdown(
        f"In {where}, the sentence is **{markdown_escape(q.sentence)}**{sentence_end(q.sentence)} Query token: "
        f"**{markdown_escape(query)}**{sentence_end(query)} Which key token gets the largest attention weight?"
    )
    if q.source == "hand":
        hand = page("hand")  # the start page comes first now: name the page the example is worked on
        st.caption(f"One head with {q.detail}, d = 16, d_q = d_k = 24, as on the [{hand.title}]({hand.address}) page.")
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
    """A reshape question: the step and the tensor before it, the typed shape and, once revealed, the points."""
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
