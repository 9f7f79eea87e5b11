"""The words every page uses, said once for a learner: query, key, value, attention weight, head, layer and
decoder (causal self-attention). A page shows them as a closed "Glossary" section (:func:`glossary`) where it
first uses them, or as a widget's tooltip (:func:`define`); the text is the app's own, never user text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

# term -> what it is, in two or three sentences (Markdown: the app's notation in backticks)
TERMS: dict[str, str] = {
    "query": (
        "What a token is looking for. Its input times a learned matrix `W_q` gives its query vector `q_i`. "
        "In an attention map each row is one query, named by the token the row shows."
    ),
    "key": (
        "What a token offers to the queries. Its input times `W_k` gives its key vector `k_j`; a query's score "
        "for a key is their dot product `q_i · k_j`, scaled. In a map each column is one key."
    ),
    "value": (
        "What a token passes on once a query attends to it. Its input times `W_v` gives its value vector `v_j`; "
        "the query's output is the sum of the values, each times its attention weight."
    ),
    "attention weight": (
        "How much one query takes from one key: the softmax of the query's scores over the keys it may see, "
        "so each row of a map sums to 1. Each cell of a map is one weight."
    ),
    "head": (
        "One attention computation with its own `W_q`, `W_k` and `W_v`. A layer runs several heads side by "
        "side, each free to learn its own pattern (the previous token, the same word, the end of the sentence); "
        "their outputs are joined and mixed back to the model's width. Heads are counted from 0."
    ),
    "layer": (
        "One block of the model: its heads, then a small feed-forward network. Layers are stacked: layer 0 "
        "reads the tokens (and their positions), each later layer reads what the one before it wrote. "
        "Counted from 0."
    ),
    "decoder": (
        "Attention that sees only the past, also called causal self-attention: a token may look at itself and "
        "at earlier tokens, never at later ones, so the model cannot peek at what it has to predict. The "
        "generator's attention, and the translator's attention over the English it has written so far."
    ),
}
CORE = ("query", "key", "value", "head", "layer")  # the words the label names


def define(term: str) -> str:
    """The glossary's text for ``term`` (a widget's ``help=``); a KeyError names the terms there are."""
    if term not in TERMS:
        raise KeyError(f"no glossary entry {term!r}; the entries are {', '.join(TERMS)}")
    return TERMS[term]


def glossary_text(terms: Sequence[str] = tuple(TERMS)) -> str:
    """``terms`` as one Markdown list, in the order given: ``- **query**: What a token …``."""
    return "\n".join(f"- **{term}**: {define(term)}" for term in terms)


def glossary(terms: Sequence[str] = tuple(TERMS), *, key: str | None = None, parent: Any = st) -> None:
    """A closed "Glossary: query, key, value, head, layer" section listing ``terms`` (every entry by default),
    drawn in ``parent``. ``key`` tells two on one page apart."""
    named = [t for t in CORE if t in terms] or list(terms)
    with parent.expander(f"Glossary: {', '.join(named)}", key=key, icon=":material/menu_book:"):
        st.markdown(glossary_text(terms))
