"""The attention explorer on a page: one Streamlit components v2 element that gets every kind, layer
and head of a run at once and does all viewing in the browser, and its HTML export.

The component is registered once, at import, from the explorer's ES modules joined into one script
(:func:`viz.explorer.assets.script`) and ``explorer.css``: inline strings, no build step, no CDN.
The data goes as one ``bytes`` value (float32 weights, not JSON lists). A click (or Enter) on a cell
comes back as a trigger value, checked here against the run.

The view (kind, layer, head, view) lives in the browser. It writes it to the address bar under
``url_prefix`` with ``history.replaceState``, which sends nothing to the server. Streamlit's server
sees those keys only when the page loads (a reload, a shared link): on a rerun its frontend sends the
query string it loaded with, not the address bar's (tests/browser/test_explorer.py shows both), and
components v2 has no way to set a value without a rerun. So a rerun with new data (a new sentence)
keeps the view in the browser, where the same element clamps it to the new run; a fresh mount starts
from the address bar; and this module passes ``st.query_params`` as the initial view for first loads,
clamped the same way.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import streamlit as st

from model.core.memory import give_back_memory
from model.core.results import AttentionKind
from pages.shared.projector import PROJECTOR_URL
from viz.explorer.assets import asset, script
from viz.explorer.export import explorer_html
from viz.explorer.payload import explorer_payload, pack_payload, rollout_kind
from viz.explorer.state import state_from_url
from viz.explorer.state import url_prefix as prefixed

COMPONENT_NAME = "attention_explorer"
_component = st.components.v2.component(COMPONENT_NAME, js=script(), css=asset("explorer.css"))


def attention_explorer(
    kinds: Sequence[AttentionKind],
    *,
    key: str,
    url_prefix: str,
    rollout: np.ndarray | None = None,
    height: int | None = None,
    title: str = "",
    compact: bool = False,
    scale: str = "max",
) -> dict[str, Any] | None:
    """Show the explorer for ``kinds``; return the cell clicked in this run, else None. ``compact`` shows
    the map, its kind tabs and legend without the tools around them (views, colour scale, SVG, the keyboard
    help): a classroom question on a phone. ``scale`` is the colour scale it opens on: ``"max"`` (0 to each
    map's largest weight) or ``"abs"`` (0 to 1: one scale for maps of different runs, e.g. a minimal pair).

    The cell is ``{"kind", "layer", "head", "query", "key", "weight"}`` (0-based indices; the weight
    read from ``kinds``, not from the browser). In the "mean" view ``head`` is None, in "rollout"
    ``layer`` and ``head`` are. It is a trigger value: the next rerun returns None again.
    """
    if scale not in ("max", "abs"):
        raise ValueError(f"scale must be 'max' or 'abs', not {scale!r}")
    prefix = _prefix(url_prefix)
    state = state_from_url(st.query_params, prefix)
    reuse = _encoded(kinds, rollout)
    payload = explorer_payload(kinds, state=state, rollout=rollout, title=title, reuse=reuse)
    _remember(kinds, rollout, payload)
    projector = bool(st.session_state.get(PROJECTOR_URL, False))
    extra = ({"compact": True} if compact else {}) | ({"scale": "abs"} if scale == "abs" else {})
    data = pack_payload(payload, url_prefix=prefix, projector=projector, **extra)
    result = _component(key=key, data=data, height=height or "content", on_cell_change=_ignore)
    if reuse is None and sum(k.weights.size for k in kinds) > ENCODE_ONCE:
        del data
        give_back_memory(later=True)  # the encoding's float copies, and the message's buffers once it is sent
    return checked_cell(kinds, result.get("cell"), rollout)


# The last few large payloads, by the identity of the run they encode (its kinds and rollout, held weakly):
# a rerun that shows the same run again (a click to explain, a toggle) reuses the encoding, which at
# 1,024 tokens of a 12 × 12 model takes a second. Runs are cached as resources (one object per run), so
# the same run is the same object; a new run, even of the same text, is encoded afresh.
_ENCODED: dict[tuple[int, ...], tuple[list[weakref.ref], dict[str, Any]]] = {}
KEEP_ENCODED = 2
_LOCK = threading.Lock()  # sessions rerun in threads of their own
ENCODE_ONCE = 1 << 20  # weights past which a payload is kept for reuse (smaller ones encode in milliseconds)


def _identity(kinds: Sequence[AttentionKind], rollout: np.ndarray | None) -> tuple[tuple[int, ...], list]:
    objects = [*kinds, *([rollout] if rollout is not None else [])]
    return tuple(map(id, objects)), objects


def _encoded(kinds: Sequence[AttentionKind], rollout: np.ndarray | None) -> dict[str, Any] | None:
    key, objects = _identity(kinds, rollout)
    with _LOCK:
        hit = _ENCODED.get(key)
    if hit is None or any(ref() is not obj for ref, obj in zip(hit[0], objects)):
        return None
    return hit[1]


def _remember(kinds: Sequence[AttentionKind], rollout: np.ndarray | None, payload: dict[str, Any]) -> None:
    if sum(k.weights.size for k in kinds) <= ENCODE_ONCE:
        return
    key, objects = _identity(kinds, rollout)
    # once the run is let go (pages.shared.hub), so is its encoding (80 MB at 1,024 tokens): before the next
    # run's forward pass, not when a later payload pushes it out
    forget = lambda _gone: _ENCODED.pop(key, None)  # noqa: E731 (a dict's pop needs no lock)
    try:
        refs = [weakref.ref(obj, forget) for obj in objects]
    except TypeError:  # an object that cannot be held weakly: not kept
        return
    with _LOCK:
        _ENCODED.pop(key, None)
        while len(_ENCODED) >= KEEP_ENCODED:  # the keys copied: a run let go meanwhile takes its entry out
            _ENCODED.pop(next(iter(list(_ENCODED)), None), None)
        _ENCODED[key] = (refs, payload)


def _ignore() -> None:
    """The cell is read from the return value; the callback only makes Streamlit report it."""


def _prefix(raw: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", raw or ""):
        raise ValueError(f"url_prefix must be letters, digits and _ (e.g. 'cls'), not {raw!r}")
    return prefixed(raw)


def checked_cell(kinds: Sequence[AttentionKind], cell: Any, rollout: np.ndarray | None = None) -> dict[str, Any] | None:
    """The browser's ``cell`` if it names a cell of ``kinds``, with the weight read from the arrays;
    None for anything else (no click, or a value that does not fit this run)."""
    if not isinstance(cell, Mapping):
        return None
    kind = next((k for k in kinds if k.name == cell.get("kind")), None)
    if kind is None:
        return None
    L, H, Tq, Tk = kind.weights.shape
    q, k = _index(cell.get("query"), Tq), _index(cell.get("key"), Tk)
    layer, head = _index(cell.get("layer"), L, optional=True), _index(cell.get("head"), H, optional=True)
    if BAD in (q, k, layer, head) or (layer is None and head is not None):
        return None
    if layer is None:  # rollout
        if rollout is None or kind is not rollout_kind(kinds):
            return None
        weight = float(np.asarray(rollout)[q, k])
    elif head is None:  # the mean over the layer's heads
        weight = float(kind.weights[layer, :, q, k].mean())
    else:
        weight = float(kind.weights[layer, head, q, k])
    return {"kind": kind.name, "layer": layer, "head": head, "query": q, "key": k, "weight": weight}


BAD = -1  # what _index gives for a value that is no index of the run


def _index(raw: Any, n: int, *, optional: bool = False) -> int | None:
    """``raw`` if it is an int in ``0..n-1``; None for None when ``optional``; else BAD."""
    if raw is None:
        return None if optional else BAD
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < n else BAD


def explorer_download(
    kinds: Sequence[AttentionKind], title: str, key: str, *, rollout: np.ndarray | None = None
) -> None:
    """A "Download as interactive HTML" button: the explorer with this run's data in one offline file,
    built only when clicked (no rerun)."""
    html_download(lambda: explorer_file(kinds, title, rollout), html_name(title), key)


def html_name(title: str) -> str:
    """A file name for the explorer of ``title``: lower case, dashes, at most 60 characters."""
    return (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "attention-explorer") + ".html"


def explorer_file(kinds: Sequence[AttentionKind], title: str, rollout: np.ndarray | None = None) -> bytes:
    """The standalone HTML file of the explorer over ``kinds``."""
    return explorer_html(explorer_payload(kinds, rollout=rollout, title=title), title).encode("utf-8")


def html_download(data: Callable[[], bytes], file_name: str, key: str) -> None:
    """The "Download as interactive HTML" button; ``data`` is called only when it is clicked."""
    st.download_button(
        "Download as interactive HTML",
        data=data,
        file_name=file_name,
        mime="text/html",
        key=key,
        on_click="ignore",
        help="The explorer in one HTML file with this run's attention: every view works offline; explaining a "
        "weight needs the app.",
    )
