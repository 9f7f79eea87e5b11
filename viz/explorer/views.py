"""The explorer's views on the server: their keys, in the order of their tabs, and when each can be
shown, as ``js/views.js`` (the browser's registry) and the views' own modules say. This is the one
module on the Python side that names a view: the rest asks :func:`view_for`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class View:
    key: str
    # shown only where the run has a rollout (else its tab is absent), and only for the rollout's kind
    needs_rollout: bool = False
    # the view shown instead where this one's tab is there but it cannot show the kind
    instead: str | None = None


REGISTRY = (
    View("heatmap"),
    View("lines"),
    View("grid"),
    View("mean"),
    View("rollout", needs_rollout=True, instead="mean"),
)
VIEWS = tuple(v.key for v in REGISTRY)
_BY_KEY = {v.key: v for v in REGISTRY}


def view_for(view: Any, kind: str, rollout_of: str | None = None) -> str:
    """The view ``view`` names as kind ``kind`` of a run can show it: an unknown view, or one the run
    has no tab for, is the first; one that cannot show the kind is the view it names instead.
    ``rollout_of`` is the kind the run's rollout belongs to (None: the run has none)."""
    v = _BY_KEY.get(view) if isinstance(view, str) else None
    if v is None or (v.needs_rollout and not rollout_of):
        return REGISTRY[0].key
    if v.needs_rollout and kind != rollout_of:
        return v.instead or REGISTRY[0].key
    return v.key
