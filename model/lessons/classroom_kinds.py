"""A classroom round in the attention explorer: what the explorer shows before and after the reveal,
and which option a click on it chooses. No streamlit here.

Rounds that ask "which key wins for this query" (:data:`KEY_KINDS`) are answered by clicking the key.
Before the reveal the explorer shows only the question's query row, every key alike: this module gives
each the weight ``1/T`` (what a softmax gives when every score is equal), and the page sends those weights
as NaN (``pages/teach/room_parts.without_weights``), so that no number reaches the browser. The student
sees the tokens and can hover and click them, and nothing in the colours, the tooltips or the strip hints
at the answer. A click
can only land in that one row, so it always names a key of the question's query. After the reveal
the same row comes back with the head's real weights, beside the head's whole ``(T, T)`` map.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from model.core.results import AttentionKind, attention_kind, causal
from rooms.question import Question

KEY_KINDS = ("attend", "head")  # answered by clicking a key; the options are the keys, in order
CHOICE, ROW, MAP = "choice", "row", "map"  # the explorer's kind names


def answers_by_key(q: Question) -> bool:
    """Whether ``q`` is answered by clicking one of its keys in the explorer."""
    spec = q.reveal
    return (
        q.kind in KEY_KINDS and spec.get("highlight_row") is not None and len(spec.get("tokens", ())) == len(q.options)
    )


def choice_kinds(q: Question) -> list[AttentionKind]:
    """Before the reveal: the query's row over every key, each at ``1/T`` (the weights stay hidden)."""
    if not answers_by_key(q):
        raise ValueError(f"a {q.kind!r} question is not answered by clicking a key")
    tokens, row = list(q.reveal["tokens"]), int(q.reveal["highlight_row"])
    T = len(tokens)
    uniform = np.full((1, 1, 1, T), 1.0 / T, dtype=np.float32)
    return [
        attention_kind(
            CHOICE,
            uniform,
            [tokens[row]],
            tokens,
            title=f"Which key does {q.options[row]} attend to most?",
            axes=("query", "key: click the one you think wins (every key looks the same until the reveal)"),
        )
    ]


def choice_from_cell(q: Question, cell: Mapping[str, Any] | None) -> int | None:
    """The option a click on the choice row chooses (the key's index), or None for no usable click."""
    if not cell or cell.get("kind") != CHOICE or not answers_by_key(q):
        return None
    key = cell.get("key")
    return key if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(q.options) else None


def reveal_kinds(q: Question) -> list[AttentionKind]:
    """After the reveal: the real weights of the round's head. For a key question, first the query's row
    (where the student clicked), then the whole map; otherwise the whole map alone. A causal model's
    map hides the future. ``[]`` when the round has no map."""
    spec = q.reveal
    if not spec or "weights" not in spec:
        return []
    tokens = list(spec["tokens"])
    w = np.asarray(spec["weights"], dtype=np.float32)
    if w.shape != (len(tokens), len(tokens)):
        raise ValueError(f"a reveal map must be (T, T) for its {len(tokens)} tokens, got {w.shape}")
    mask = causal(len(tokens)) if spec.get("causal") else None
    whole = attention_kind(MAP, w[None, None], tokens, tokens, mask=mask, title=spec.get("title") or "the head")
    if not answers_by_key(q):
        return [whole]
    row = int(spec["highlight_row"])
    answer = attention_kind(
        ROW, w[None, None, row : row + 1], [tokens[row]], tokens, title=f"{q.options[row]}: its row, the real weights"
    )
    return [answer, whole]
