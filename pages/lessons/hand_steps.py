"""The hand-worked page's steps, in order: tokens and ids, embeddings, the weight matrices, queries, keys and
values, scores, the scaled softmax, context vectors, one query in detail, several heads, and attention
without weights. Each draws its matrices as matrix views with their CSV downloads."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
import torch

from model.lessons.hand import MultiHeadWalkthrough, Walkthrough, plain_self_attention
from pages.shared.display import show_matrix
from pages.shared.state import init_state, sync_url
from pages.shared.text import plural
from viz.matrix import KEY_AXIS, QUERY_AXIS, matrix_frame
from viz.matrixview import matrix_payload

DEFAULT_QUERY = "1:is"  # the query the worked example follows in detail


def token_matrix(key: str, values, labels: list[str], *, name: str) -> None:
    """A (queries, keys) matrix over the sentence's tokens."""
    matrix_step(key, values, labels, labels, name=name, row_title=QUERY_AXIS, col_title=KEY_AXIS)


def matrix_step(key: str, values, rows, cols, *, name: str, row_title: str, col_title: str, **how) -> None:
    """One matrix with its values in coloured cells, its shape in the title, and a CSV download."""
    payload = matrix_payload(values, rows, cols, name=name, row_title=row_title, col_title=col_title, **how)
    show_matrix(payload, key, csv=matrix_frame(values, rows, cols), csv_name=f"{key}.csv")


def dims(n: int) -> list[str]:
    """Column labels of a vector's dimensions: "0", "1", …"""
    return [str(i) for i in range(n)]


def tokens_section(w: Walkthrough, labels: list[str]) -> None:
    st.markdown(
        "Each distinct word gets an index in the **sorted** vocabulary; the sentence becomes the list of "
        "those indices (ids), which picks rows of the embedding table."
    )
    words = list(w.vocab)
    st.caption(f"vocabulary  ({plural(len(words), 'word')})  ·  ids  ({plural(len(w.tokens), 'token')})")
    matrix_step(
        "hand-vocab",
        [list(w.vocab.values())],
        ["index"],
        words,
        name="vocabulary",
        row_title="",
        col_title="word",
        colour="none",
        decimals=0,
        shape=(len(words),),
    )
    matrix_step(
        "hand-ids",
        [w.ids.tolist()],
        ["id"],
        labels,
        name="ids",
        row_title="",
        col_title="token",
        colour="none",
        decimals=0,
        shape=(len(labels),),
    )


def embeddings_step(w: Walkthrough, labels: list[str]) -> None:
    """2. Each token's embedding: a row of a random table."""
    d = w.embeddings.shape[1]
    st.markdown(f"Each id selects a row of a random table with {d} columns: one vector per token.")
    matrix_step("hand-x", w.embeddings, labels, dims(d), name="embeddings x", row_title="token", col_title="dimension")


def weights_step(w: Walkthrough, labels: list[str]) -> None:
    """3. The random projection matrices."""
    d = w.embeddings.shape[1]
    st.markdown(
        "Three random matrices turn each embedding into a query, a key and a value. Training would learn them; "
        "here they are uniform in [0, 1)."
    )
    for tab, name, m in zip(st.tabs(["W_q", "W_k", "W_v"]), ("W_q", "W_k", "W_v"), (w.W_query, w.W_key, w.W_value)):
        with tab:
            matrix_step(f"hand-{name}", m, dims(m.shape[0]), dims(d), name=name, row_title="output", col_title="input")


def qkv_step(w: Walkthrough, labels: list[str]) -> None:
    """4. Queries, keys and values of every token."""
    d_q, d_v = w.queries.shape[1], w.values.shape[1]
    st.markdown(
        f"Multiply every embedding by each matrix: q = W_q·x ({d_q} numbers), k = W_k·x ({d_q}), v = W_v·x ({d_v})."
    )
    tabs = st.tabs(["queries", "keys", "values"])
    for tab, name, m in zip(tabs, ("queries", "keys", "values"), (w.queries, w.keys, w.values)):
        with tab:
            matrix_step(
                f"hand-{name}", m, labels, dims(m.shape[1]), name=name, row_title="token", col_title="dimension"
            )


def scores_step(w: Walkthrough, labels: list[str]) -> None:
    """5. Unnormalised scores q·k."""
    st.markdown("Score (i, j) is the dot product of token i's query with token j's key: how well they match.")
    token_matrix("hand-scores", w.scores, labels, name="scores ω")


def softmax_step(w: Walkthrough, labels: list[str]) -> None:
    """6. Softmax of the scaled scores."""
    d_q = w.queries.shape[1]
    st.markdown(f"Divide each score by √d_k = {d_q**0.5:.4f}, then softmax each row: positive weights summing to 1.")
    token_matrix("hand-weights", w.weights, labels, name="attention weights")


def context_step(w: Walkthrough, labels: list[str]) -> None:
    """7. Context vectors: weighted sums of the values."""
    d_v = w.values.shape[1]
    st.markdown(f"Row i mixes all value vectors with row i's weights: {d_v} numbers per token.")
    matrix_step(
        "hand-context", w.context, labels, dims(d_v), name="context z", row_title="token", col_title="dimension"
    )


@st.fragment
def query_detail(w: Walkthrough, labels: list[str]) -> None:
    """One query's scores, weights and context vector; reruns alone when the token changes."""
    init_state("hand_query", DEFAULT_QUERY)
    if st.session_state.hand_query not in labels:
        st.session_state.hand_query = labels[1] if len(labels) > 1 else labels[0]
    st.selectbox("Query token", labels, key="hand_query")
    sync_url("hand_query")
    i = labels.index(st.session_state.hand_query)
    scale = w.keys.shape[1] ** 0.5
    st.markdown(
        f"This token's query meets every key: the score row, divided by {scale:.4f} and softmaxed, gives the weights; "
        "the context vector is the weighted sum of the value vectors."
    )
    rows = ["score ω", f"ω / {scale:.4f}", "weight"]
    detail = torch.stack([w.scores[i], w.scores[i] / scale, w.weights[i]])
    matrix_step(
        "hand-query",
        detail,
        rows,
        labels,
        name=f"query {labels[i]}: scores and weights",
        row_title="step",
        col_title=KEY_AXIS,
        row_scale=True,
    )
    st.metric("sum of the weights", f"{w.weights[i].sum().item():.4f}")
    context = w.context[i]
    matrix_step(
        "hand-query-context",
        context[None],
        [labels[i]],
        dims(len(context)),
        name=f"context vector z of {labels[i]}",
        row_title="token",
        col_title="dimension",
    )


def heads_section(mh: MultiHeadWalkthrough, labels: list[str]) -> None:
    h = len(mh.heads)
    st.markdown(
        f"{h} head(s), each with its own W_q, W_k, W_v drawn after the previous head's (head 0 is the one above). "
        "Each head attends differently; their context vectors are joined side by side."
    )
    if h == 1:
        st.info("Set Heads above 1 to compare several heads.")
    for i, tab in enumerate(st.tabs([f"head {i}" for i in range(h)])):
        with tab:
            token_matrix(f"hand-head-{i}", mh.weights[i], labels, name=f"head {i}: attention weights")
    d_v = mh.context.shape[-1]
    cols = [f"h{j // d_v}·{j % d_v}" for j in range(mh.concat.shape[1])]
    st.markdown(f"Concatenation: {h} × {d_v} = {mh.concat.shape[1]} numbers per token.")
    matrix_step(
        "hand-concat",
        mh.concat,
        labels,
        cols,
        name="concatenated heads",
        row_title="token",
        col_title="head · dimension",
    )


def plain_section(w: Walkthrough, labels: list[str]) -> None:
    st.markdown(
        "No weight matrices at all: each embedding is its own query, key and value. Scores are x·xᵀ, softmax per "
        "row, and the output mixes the embeddings themselves. Without scaling the diagonal (each vector with "
        "itself) usually wins by far."
    )
    scale = st.checkbox("Divide the scores by √d first", key="hand_plain_scale")
    sync_url("hand_plain_scale")
    plain = plain_self_attention(w.embeddings, scale=scale)
    raw, weights, output = st.tabs(["raw x·xᵀ", "weights", "output y"])
    with raw:
        token_matrix("hand-plain-raw", plain.raw, labels, name="raw x·xᵀ")
    with weights:
        token_matrix("hand-plain-weights", plain.weights, labels, name="weights")
    with output:
        d = plain.output.shape[1]
        matrix_step(
            "hand-plain-y", plain.output, labels, dims(d), name="output y", row_title="token", col_title="dimension"
        )


def sections(mh: MultiHeadWalkthrough, labels: list[str]) -> list[tuple[str, bool, Callable[[], None]]]:
    """(title, expanded in the full view, draw) for every step, in order."""
    w = mh.heads[0]
    show = lambda step: lambda: step(w, labels)
    return [
        ("1. Tokens, vocabulary and ids", True, show(tokens_section)),
        ("2. Embeddings x", False, show(embeddings_step)),
        ("3. Weight matrices W_q, W_k, W_v", False, show(weights_step)),
        ("4. Queries, keys and values", False, show(qkv_step)),
        ("5. Unnormalised scores ω = q·k", True, show(scores_step)),
        (f"6. Scaled softmax: softmax(ω / √{w.queries.shape[1]})", True, show(softmax_step)),
        ("7. Context vectors z", False, show(context_step)),
        ("8. One query in detail", True, show(query_detail)),
        ("9. Several heads", False, lambda: heads_section(mh, labels)),
        ("10. Without weights: x·xᵀ", False, show(plain_section)),
    ]
