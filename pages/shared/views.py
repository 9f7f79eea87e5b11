"""The attention of one run as every page shows it: the explorer (every kind, layer and head, viewed
in the browser), its downloads, and the explanation of the clicked weight."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.results import AttentionKind, RunResult
from model.core.specs import ModelSpec
from pages.shared.explain import checkpoint_explainer, explain_panel, remembered_cell, result_id
from pages.shared.explorer import attention_explorer, explorer_file, html_download
from pages.shared.state import bounded, in_fragment, init_state, keep_valid, radio_choice, sync_url
from viz.attention import grid_frame, visible_chars
from viz.common import head_name


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


def labelled(result: RunResult, order: Sequence[str] = ()) -> list[AttentionKind]:
    """The result's kinds with display labels on their axes, ``order`` first (the kind a page opens on)."""
    names = [n for n in order if n in result.kinds] + [n for n in result.kinds if n not in order]
    out = []
    for name in names:
        kind = result.kinds[name]
        queries, keys = axes(kind, result)
        out.append(replace(kind, queries=queries, keys=keys))
    return out


def attention_views(
    result: RunResult,
    prefix: str,
    *,
    ck: Checkpoint | None = None,
    rollout: np.ndarray | None = None,
    first: Sequence[str] = (),
    title: str = "",
) -> dict[str, Any] | None:
    """The explorer over every kind of ``result`` (``first`` opens first) and, with ``ck``, the explanation
    of the clicked weight. Returns the last clicked cell of this run. The run is also kept for
    :func:`attention_downloads`, which a page draws outside the fragment that calls this."""
    kinds = labelled(result, first)
    run = shown(prefix)
    run.update(kinds=kinds, rollout=rollout, title=title or "Attention Explorer")
    if run.get("drawn") is False and in_fragment():  # the downloads outside this fragment are missing
        st.rerun(scope="app")
    clicked = attention_explorer(kinds, key=f"{prefix}-explorer", url_prefix=prefix, rollout=rollout, title=title)
    cell = remembered_cell(result_id(result), f"{prefix}_cell", clicked)
    if ck is not None:
        explain_panel(checkpoint_explainer(ck, result), result, cell, prefix)
    elif cell is not None:
        kind = next(k for k in kinds if k.name == cell["kind"])
        st.caption(f"{kind.queries[cell['query']]} → {kind.keys[cell['key']]}: {cell['weight']:.4f}")
    return cell


def shown(prefix: str) -> dict[str, Any]:
    """The run the page's explorer shows now (``kinds``, ``rollout``, ``title``), one dict per page and
    session, updated in place by :func:`attention_views`."""
    return st.session_state.setdefault(f"{prefix}_shown", {})


NO_RUN = b"No attention to export: the input gave no run.\n"  # what a download holds after a bad input


def no_run(prefix: str) -> None:
    """The input gave no run (a message says why): forget the shown one and, when this is the input
    fragment's own rerun and the downloads outside it are drawn, rerun the page so that they go."""
    run = shown(prefix)
    drawn = run.get("drawn")
    run.clear()
    if drawn and in_fragment():
        st.rerun(scope="app")


def attention_downloads(prefix: str, name: str) -> None:
    """The explorer's HTML and every weight as CSV, for whatever run the explorer shows when clicked;
    nothing when the input gave no explorer (:func:`no_run`).

    Drawn outside the input's fragment, so a new input does not send them again: the files are built
    from :func:`shown` at the click, which the fragment keeps current. The fragment reruns the whole page
    only when the downloads appear or go (:func:`attention_views`, :func:`no_run`)."""
    run = shown(prefix)
    run["drawn"] = bool(run.get("kinds"))
    if not run["drawn"]:
        return
    left, right = st.columns(2)
    with left:
        html_download(
            lambda: explorer_file(run["kinds"], run["title"], run["rollout"]) if run.get("kinds") else NO_RUN,
            f"{name}-attention-explorer.html",
            f"{prefix}-explorer-html",
        )
    right.download_button(
        "Download every weight (CSV)",
        data=lambda: weights_csv(run["kinds"]).encode("utf-8") if run.get("kinds") else NO_RUN,
        file_name=f"{name}-all-heads.csv",
        mime="text/csv",
        key=f"{prefix}-csv",
        on_click="ignore",
    )


def head_explorer(
    result: RunResult, name: str, layer: int, head: int, prefix: str, *, ck: Checkpoint | None = None, title: str = ""
) -> None:
    """One head of ``result`` in the explorer (hover, lines, the token strip) and, with ``ck``, the
    explanation of a clicked weight. The head chosen elsewhere on the page decides what is sent."""
    kind = next(k for k in labelled(result) if k.name == name)
    one = replace(
        kind,
        weights=kind.weights[layer : layer + 1, head : head + 1],
        title=f"{kind.title}, {head_name(layer, head)}",
    )
    clicked = attention_explorer([one], key=f"{prefix}-explorer-{layer}-{head}", url_prefix=prefix, title=title)
    if clicked is not None:  # indices of the one head sent -> the model's
        clicked = {**clicked, "layer": layer, "head": head if clicked["head"] is not None else None}
    cell = remembered_cell(result_id(result), f"{prefix}_cell", clicked)
    if cell is not None and (cell["kind"], cell["layer"], cell["head"]) != (name, layer, head):
        cell = None
    if ck is not None:
        explain_panel(checkpoint_explainer(ck, result), result, cell, prefix)


def weights_csv(kinds: Sequence[AttentionKind]) -> str:
    """Every weight of every kind, layer and head, one table (kind as its first column)."""
    frames = [grid_frame(k.weights, k.queries, k.keys).reset_index() for k in kinds]
    return pd.concat(frames, keys=[k.name for k in kinds], names=["kind", None]).droplevel(1).to_csv()


def pick_head(layers: int, heads: int, prefix: str, *, default_layer: int = 0) -> tuple[int, int]:
    """One head of a ``layers`` × ``heads`` attention, for the views drawn on the server (differences,
    ablation), as one select box ("L1 H2", key ``<prefix>_lh``: one widget is about half the
    browser's work of two); the URL keeps ``<prefix>_layer`` and ``<prefix>_head``."""
    lk, hk, key = f"{prefix}_layer", f"{prefix}_head", f"{prefix}_lh"
    init_state(lk, default_layer, bounded(0, layers - 1))
    init_state(hk, 0, bounded(0, heads - 1))
    keep_valid(lk, range(layers), default_layer)
    keep_valid(hk, range(heads), 0)
    options = [(l, h) for l in range(layers) for h in range(heads)]
    if st.session_state.get(key) in options:  # the select box's own value wins once it exists
        st.session_state[lk], st.session_state[hk] = st.session_state[key]
    else:
        st.session_state[key] = (st.session_state[lk], st.session_state[hk])
    st.selectbox("Layer and head", options, key=key, format_func=lambda lh: head_name(*lh))
    sync_url(lk, hk)
    return st.session_state[lk], st.session_state[hk]


def pick_kind(result: RunResult, key: str, *, last: bool = False) -> str:
    """One kind of ``result``'s attention, as a radio drawn when there is a choice and kept in the URL under
    ``key``: the first kind by default, with ``last`` the last (a translator's cross-attention)."""
    kinds = list(result.kinds)
    titled = lambda k: result.kinds[k].title
    return radio_choice(key, kinds, kinds[-1] if last else kinds[0], label="Attention", format_func=titled)


def window(m: np.ndarray, spec: ModelSpec) -> tuple[np.ndarray, slice]:
    """``m`` cut to the last ``spec.window`` queries and keys when the model draws a window (whole otherwise),
    and the cut, for the labels."""
    if spec.window is None or m.shape[-1] <= spec.window:
        return m, slice(None)
    cut = slice(-spec.window, None)
    return m[..., cut, cut], cut


def windowed(m: np.ndarray, kind: AttentionKind, result: RunResult, spec: ModelSpec) -> tuple[np.ndarray, tuple]:
    """One head's ``(queries, keys)`` matrix ``m`` of ``kind`` and its (query, key) labels, cut to the
    model's window."""
    m, cut = window(m, spec)
    rows, cols = axes(kind, result)
    return m, (rows[cut], cols[cut])
