"""The explorer's view (kind, layer, head, view) on the server: clamped to what a run has, and read from
and written to the URL under a page's prefix, as ``js/url.js`` and ``js/state.js`` do in the browser."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from model.core.results import AttentionKind
from viz.explorer.views import view_for

URL_FIELDS = ("kind", "layer", "head", "view")


def url_prefix(prefix: str) -> str:
    """``"cls"`` and ``"cls_"`` both name the URL keys ``cls_layer``, ``cls_head``, ..."""
    return prefix if not prefix or prefix.endswith("_") else prefix + "_"


def clamp_state(kinds: Sequence[AttentionKind], state: Mapping[str, Any] | None, rollout_of: str | None = None) -> dict:
    """``state`` (kind name, layer, head, view; any of them missing, mistyped or out of range) as the
    nearest state that exists in ``kinds``: a new input keeps the layer and head where it still has them.
    ``rollout_of`` names the kind the run's rollout belongs to (None: it has none); which view a state
    gets is :func:`viz.explorer.views.view_for`'s answer."""
    state = dict(state or {})
    names = [k.name for k in kinds]
    kind = state.get("kind") if state.get("kind") in names else names[0]
    ak = kinds[names.index(kind)]
    view = view_for(state.get("view"), kind, rollout_of)
    return {
        "kind": kind,
        "layer": _clamped_int(state.get("layer"), ak.layers),
        "head": _clamped_int(state.get("head"), ak.heads),
        "view": view,
    }


def _clamped_int(raw: Any, n: int) -> int:
    try:
        value = int(str(raw).strip()) if not isinstance(raw, (int, np.integer)) else int(raw)
    except ValueError:
        return 0
    return min(max(value, 0), n - 1)


def state_from_url(query: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """The explorer's fields found in a query-parameter mapping (``st.query_params``) under ``prefix``."""
    p = url_prefix(prefix)
    found = {}
    for field in URL_FIELDS:
        raw = query.get(p + field)
        if isinstance(raw, list):  # AppTest and some mappings give lists
            raw = raw[-1] if raw else None
        if raw is not None:
            found[field] = str(raw)
    return found


def state_to_url(state: Mapping[str, Any], prefix: str) -> dict[str, str]:
    """The URL keys the browser writes for ``state`` (the inverse of :func:`state_from_url`)."""
    p = url_prefix(prefix)
    return {p + field: str(state[field]) for field in URL_FIELDS if field in state}
