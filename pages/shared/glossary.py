"""The words every page uses, said once for a learner: query, key, value, attention weight, head, layer,
decoder (causal self-attention), how a head is named (L3 H2), the roles the head finder names and the measures
of the "Did attention matter?" panel. A page shows them as a closed "Glossary" section (:func:`glossary`) where it
first uses them, or as a widget's tooltip (:func:`define`); the text is the app's own, never user text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from viz.common import head_name

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
    "L3 H2": (
        "How the app names a head: L3 H2 is layer 3, head 2, both counted from 0. Where a model has several "
        "kinds of attention, the kind comes first: cross L1 H0 is head 0 of the translator's cross-attention "
        "in its decoder's layer 1."
    ),
    "cross-attention": (
        "Attention from one sequence to another: in the translator, each English word it writes (a row, the "
        "query) looks at the German words (the columns, the keys). It is how the decoder reads the source."
    ),
    "causal mask": (
        "What keeps a token from looking ahead: every key after the query gets weight 0 before the row is "
        "shared out, so a map has nothing above its diagonal. The explorer draws those cells hatched."
    ),
    # what a head does: the head finder's roles, as the pages name them
    "previous-token head": (
        "A head that puts its weight on the token just before each query: in a map, a stripe just below the "
        "diagonal. Its score is the share of each row's weight on the previous token."
    ),
    "induction head": (
        "A head that copies. Where the token before the query appeared earlier, it looks at the token that "
        "followed that earlier copy, so the model can predict the same next token again: in text written "
        "twice, a stripe parallel to the diagonal, one copy's length to the left. It needs a previous-token "
        "head in an earlier layer."
    ),
    "first-token (sink) head": (
        "A head that parks its weight on the first token: a dark first column. Softmax has to hand out a "
        "whole row of weight, so a head with nothing to read on a row puts it where it changes little."
    ),
    "self head": "A head that puts its weight on the query's own token: a dark diagonal.",
    "monotonic alignment": (
        "A cross-attention head whose English words read the German words in order: the weight runs from "
        "the top left to the bottom right, as a word-for-word translation would."
    ),
    "a head with two roles": (
        "One head can do two jobs, on different rows. An induction head is often a first-token (sink) head "
        "too: it looks at the first character when no earlier copy is found, and at the character after "
        "the earlier copy when there is one. The head finder then names it under both roles."
    ),
    # how the app measures what attention did (the "Did attention matter?" panel)
    "rollout": (
        "Attention followed through all the layers: average each layer's heads, count the shortcut that "
        "carries each token past the layer as half, and multiply layer by layer. It estimates how much each "
        "input token reaches each position at the top (Abnar & Zuidema, 2020)."
    ),
    "contribution": (
        "How much a key really changed the query's output, where attention says only how much weight it "
        "got: a large weight on a key whose value carries little changes little. The three measures below "
        "each put a number on it, and the panel shows them beside attention."
    ),
    "weighted-value norm": (
        "A contribution: the length of the weight times the key's value vector, as the layer passes it on. "
        "A large weight on a short vector gives a small norm (Kobayashi et al., 2020)."
    ),
    "value zeroing": (
        "A contribution: set one key's value vector to zero, run the layer again and measure how far the "
        "query's output turns. The further it turns, the more that key contributed (Mohebbi et al., 2023)."
    ),
    "gradient × attention": (
        "A contribution: how much the model's score would change per unit of a weight, times the weight. It "
        "asks which weights the prediction depends on."
    ),
}
CORE = ("query", "key", "value", "head", "layer")  # the words the label names
# the words a weight's computation uses (the explanation panel's glossary)
BASICS = ("query", "key", "value", "attention weight", "head", "layer", "decoder", "causal mask", "L3 H2")
ROLE_WORDS = (  # the closed section a model page shows under its card: what heads do, and how it is measured
    "L3 H2",
    "previous-token head",
    "induction head",
    "first-token (sink) head",
    "a head with two roles",
    "self head",
    "monotonic alignment",
    "causal mask",
    "cross-attention",
    "rollout",
    "contribution",
    "weighted-value norm",
    "value zeroing",
    "gradient × attention",
)


# how one head does two roles, for the pairs the head finder names together (its role names, sorted)
HOW_BOTH = {
    ("first-token (sink)", "induction"): (
        "it looks at the first character when no earlier copy is found, and at the character after the earlier "
        "copy when there is one"
    ),
}


def two_roles(roles: Sequence[dict[str, Any]]) -> list[str]:
    """One plain line for each head named under two roles (``roles``: dicts with ``role``, ``layer``, ``head``
    and ``kind``, as the head finder's roles line has them): ``"L3 H2 is both … : it looks at …"``."""
    by_head: dict[tuple, list[str]] = {}
    for r in roles:
        by_head.setdefault((r.get("kind"), r["layer"], r["head"]), []).append(str(r["role"]))
    lines = []
    for (_, layer, head), names in by_head.items():
        if len(names) < 2:
            continue
        how = HOW_BOTH.get(tuple(sorted(names)), "on different rows it does different jobs")
        lines.append(f"{head_name(layer, head)} is both {' and '.join(names)}: {how}.")
    return lines


def define(term: str) -> str:
    """The glossary's text for ``term`` (a widget's ``help=``); a KeyError names the terms there are."""
    if term not in TERMS:
        raise KeyError(f"no glossary entry {term!r}; the entries are {', '.join(TERMS)}")
    return TERMS[term]


def glossary_text(terms: Sequence[str] = tuple(TERMS)) -> str:
    """``terms`` as one Markdown list, in the order given: ``- **query**: What a token …``."""
    return "\n".join(f"- **{term}**: {define(term)}" for term in terms)


def glossary(
    terms: Sequence[str] = tuple(TERMS), *, key: str | None = None, parent: Any = st, title: str | None = None
) -> None:
    """A closed "Glossary: query, key, value, head, layer" section listing ``terms`` (every entry by default),
    drawn in ``parent``; ``title`` names it instead of the core words. ``key`` tells two on one page apart."""
    named = title or ", ".join([t for t in CORE if t in terms] or list(terms))
    with parent.expander(f"Glossary: {named}", key=key, icon=":material/menu_book:"):
        st.markdown(glossary_text(terms))
