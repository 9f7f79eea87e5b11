"""The attention of one run as every page shows it: pick a kind, a view, a layer and a head."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import streamlit as st

from model.analysis.results import AttentionKind, RunResult
from pages.shared.display import show_figure
from pages.shared.state import bounded, init_state, keep_valid, one_of, sync_url
from viz.attention import attention_heatmap, grid_frame, head_grid, mean_heads_heatmap, visible_chars, weights_frame

VIEWS = {"head": "One head", "mean": "Mean over heads", "grid": "Every layer and head", "rollout": "Rollout"}


def token_labels(tokens: Sequence[str], special: Sequence[bool], unknown: Sequence[str]) -> list[str]:
    """Axis tokens with the words the model read as ``<unk>`` marked, so a reader knows what it saw."""
    unknown = set(unknown)
    return [f"{t} (unk)" if s and t in unknown else t for t, s in zip(tokens, special)]


def axes(kind: AttentionKind, result: RunResult) -> tuple[list[str], list[str]]:
    """(query, key) labels of ``kind``: the key side carries the special flags; queries read the same
    tokens when the kind is self-attention."""
    keys = token_labels(kind.keys, kind.special, result.unknown)
    queries = keys if kind.queries == kind.keys else list(kind.queries)
    if result.unit == "characters":  # spaces and line breaks drawn as visible symbols
        return visible_chars(queries), visible_chars(keys)
    return queries, keys


def pick_kind(result: RunResult, prefix: str, default: str | None = None) -> AttentionKind:
    """A radio over the result's kinds (none when there is one), kept in the URL as ``<prefix>_kind``."""
    names = list(result.kinds)
    key = f"{prefix}_kind"
    default = default if default in names else names[-1]
    init_state(key, default, one_of(names))
    keep_valid(key, names, default)
    if len(names) > 1:
        st.radio("Attention", names, key=key, horizontal=True, format_func=lambda k: result.kinds[k].title)
    return result.kinds[st.session_state[key]]


def pick_head(layers: int, heads: int, prefix: str, *, head: bool = True, default_layer: int = 0) -> tuple[int, int]:
    """Layer and head selects kept in the URL as ``<prefix>_layer`` and ``<prefix>_head``."""
    lk, hk = f"{prefix}_layer", f"{prefix}_head"
    init_state(lk, default_layer, bounded(0, layers - 1))
    init_state(hk, 0, bounded(0, heads - 1))
    keep_valid(lk, range(layers), default_layer)
    keep_valid(hk, range(heads), 0)
    left, right = st.columns(2)
    left.selectbox("Layer", range(layers), key=lk, format_func=lambda l: f"layer {l}")
    if head:
        right.selectbox("Head", range(heads), key=hk, format_func=lambda h: f"head {h}")
    return st.session_state[lk], st.session_state[hk]


def attention_views(
    result: RunResult,
    prefix: str,
    *,
    rollout: np.ndarray | None = None,
    default_kind: str | None = None,
    csv_name: str = "attention",
) -> tuple[str, int, int]:
    """Every kind, layer and head of ``result``, one view at a time; returns the (kind, layer, head) shown."""
    kind = pick_kind(result, prefix, default_kind)
    views = {k: v for k, v in VIEWS.items() if k != "rollout" or rollout is not None}
    show_key = f"{prefix}_show"
    init_state(show_key, "head", one_of(list(views)))
    st.radio("Show", list(views), key=show_key, format_func=views.get, horizontal=True,
             help="One view at a time, so a new input redraws one chart.")  # fmt: skip
    show = st.session_state[show_key]
    L, H = kind.layers, kind.heads
    layer, head = pick_head(L, H, prefix, head=show == "head") if show in ("head", "mean") else (0, 0)
    rows, cols = axes(kind, result)
    named = f"{kind.title}: " if len(result.kinds) > 1 else ""
    names = dict(query_name=kind.query_axis, key_name=kind.key_axis)
    if show == "head":
        w = kind.head(layer, head)
        fig = attention_heatmap(w, rows, cols, title=f"layer {layer} · head {head}", **names)
        show_figure(fig, f"{prefix}-head", csv=weights_frame(w, rows, cols),
                    csv_name=f"{csv_name}-{kind.name}-layer{layer}-head{head}.csv")  # fmt: skip
    elif show == "mean":
        title = f"layer {layer}: mean over the {H} heads"
        show_figure(mean_heads_heatmap(kind.weights[layer], rows, cols, title=title, **names), f"{prefix}-mean")
    elif show == "grid":
        st.caption(f"{L} layers × {H} heads. Each small heatmap is one head: row = query, column = key.")
        fig = head_grid(kind.weights, rows, cols, title=f"{named}attention per layer and head", **names)
        show_figure(fig, f"{prefix}-grid", csv=grid_frame(kind.weights, rows, cols),
                    csv_name=f"{csv_name}-{kind.name}-all-heads.csv")  # fmt: skip
    else:
        st.caption(
            "Rollout (Abnar & Zuidema, 2020) follows attention through all layers: average the heads, add the "
            "residual connection (the identity), rescale rows, multiply layer by layer. Row i: how much of each "
            "input token reaches position i at the top."
        )
        show_figure(attention_heatmap(rollout, rows, cols, title=f"attention rollout through {L} layers"), f"{prefix}-rollout")
    sync_url(f"{prefix}_kind", show_key, f"{prefix}_layer", f"{prefix}_head")
    return kind.name, layer, head


GENERATOR_WINDOW = 40  # characters per heatmap axis: the last ones, readable on a projector


def window(m: np.ndarray, task: str) -> tuple[np.ndarray, slice]:
    """The generator's attention cut to its last ``GENERATOR_WINDOW`` queries and keys (others whole)."""
    if task != "generator" or m.shape[-1] <= GENERATOR_WINDOW:
        return m, slice(None)
    cut = slice(-GENERATOR_WINDOW, None)
    return m[..., cut, cut], cut
