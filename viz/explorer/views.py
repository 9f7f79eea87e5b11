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
    has no tab for, is the first view that can; one that cannot show the kind is the view it names
    instead. ``rollout_of`` is the kind the run's rollout belongs to (None: the run has none)."""

    def listed(v: View) -> bool:
        return not v.needs_rollout or bool(rollout_of)

    def can(v: View) -> bool:
        return listed(v) and (not v.needs_rollout or kind == rollout_of)

    v = _BY_KEY.get(view) if isinstance(view, str) else None
    if v is not None and listed(v) and not can(v) and v.instead:
        return v.instead
    if v is not None and can(v):
        return v.key
    return next((w.key for w in REGISTRY if can(w)), REGISTRY[0].key)
