"""Two runs' attention compared where their token lists do not line up (a minimal pair of different
lengths): each run's mean over the heads of one layer, side by side."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import plotly.graph_objects as go
import streamlit as st

from model.core.results import RunResult
from model.core.specs import ModelSpec
from pages.shared.display import show_matrix
from pages.shared.text import plural
from pages.shared.views import windowed
from viz.compare import pair_heatmaps, pair_tables


def layer_means(
    spec: ModelSpec,
    runs: tuple[RunResult, RunResult],
    kind: str,
    layer: int,
    tokens: tuple[tuple[Sequence[str], Sequence[str]], tuple[Sequence[str], Sequence[str]]],
    names: tuple[str, str],
    axes: dict[str, str],
) -> Callable[[], go.Figure]:
    """Say why no difference is drawn, show both runs' mean over the heads of ``layer`` (``tokens``: each
    run's (query, key) labels, already cut to the model's window), and return the function that builds
    the same as one figure for the export."""
    (a, b), (tok_a, tok_b) = runs, tokens
    ka, kb = a.kinds[kind], b.kinds[kind]
    size_a, size_b = (" × ".join(str(len(t)) for t in toks) for toks in (tok_a, tok_b))
    st.info(
        f"A difference heatmap needs A and B of equal lengths, position by position; here A is "
        f"{size_a} and B is {size_b} (queries × keys). "
        "Below is each one's mean over all heads of the layer instead. Make the two inputs the same "
        "number of tokens (e.g. swap one word for another) to see their difference."
    )
    mean_a, _ = windowed(ka.weights[layer].mean(axis=0), ka, a, spec)
    mean_b, _ = windowed(kb.weights[layer].mean(axis=0), kb, b, spec)
    mean_title = f"{ka.title}, layer {layer}: mean over the {plural(ka.weights.shape[1], 'head')}"
    tables = pair_tables(mean_a, tok_a, mean_b, tok_b, names=names, title=mean_title.lower(), **axes)
    for col, table, n in zip(st.columns(2), tables, names):
        with col:
            show_matrix(table, f"pair-mean-{n}")
    return lambda: pair_heatmaps(mean_a, tok_a, mean_b, tok_b, names=names, title=mean_title, **axes)
