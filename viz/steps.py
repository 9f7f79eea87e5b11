"""What one query attended to at a decoding step: its weights per head (with their mean row) and the
mean over heads as bars. The generator's new characters and the translator's output words use them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from viz.attention import heads_heatmap, query_bar
from viz.common import check_stack


def step_figures(
    row, keys: Sequence[str], *, query_label: str, bar_title: str, key_name: str = "key", heads_title: str | None = None
) -> list[go.Figure]:
    """One query's weights ``(heads, keys)``: a heatmap with a row per head, and the mean over heads as bars."""
    w = check_stack(row, ndim=2, name="one query's weights per head (heads, keys)")
    return [
        heads_heatmap(w, keys, query_label=query_label, key_name=key_name, title=heads_title),
        query_bar(w.mean(axis=0), keys, query_label=query_label, key_name=key_name, title=bar_title),
    ]


def decoding_step_figures(
    cross_row: np.ndarray, self_row: np.ndarray, source: Sequence[str], written: Sequence[str], *, query_label: str
) -> list[go.Figure]:
    """The translator writing one word: its cross-attention over the German words (per head, then the mean
    over heads) and its decoder self-attention over the English written so far (``self_row`` covers only
    those keys: later words are masked)."""
    q = query_label
    cross = step_figures(
        cross_row,
        source,
        query_label=q,
        key_name="key = German",
        heads_title=f"cross-attention of {q}, per head",
        bar_title=f"mean over heads: German words that {q} attended to",
    )
    title = f"decoder self-attention of {q}, per head (later words are masked)"
    own = heads_heatmap(self_row, written, query_label=q, key_name="key = English so far", title=title)
    return [*cross, own]
