"""The attention explorer: one run's attention, every kind, layer and head, viewed in the browser.

``payload.py`` packs the run for the browser, ``state.py`` clamps the view and maps it to the URL,
``views.py`` names the views (as ``js/views.js`` does in the browser),
``export.py`` writes the standalone HTML file, ``assets.py`` joins the ES modules under ``js/``
(``main.js`` is the entry) into the one script Streamlit and the file take; ``explorer.css`` styles
both. ``pages/shared/explorer.py`` puts it on a page. Nothing here imports streamlit. The names below
are re-exported so callers import them from ``viz.explorer``.
"""

from viz.explorer.assets import asset, script
from viz.explorer.export import explorer_html, script_json
from viz.explorer.payload import (
    MAX_WEIGHTS,
    display_token,
    explorer_payload,
    kind_weights,
    pack_payload,
    rollout_kind,
    unpack_payload,
    weights_array,
)
from viz.explorer.state import clamp_state, state_from_url, state_to_url, url_prefix
from viz.explorer.views import VIEWS

__all__ = [
    "MAX_WEIGHTS",
    "VIEWS",
    "asset",
    "clamp_state",
    "display_token",
    "explorer_html",
    "explorer_payload",
    "kind_weights",
    "pack_payload",
    "rollout_kind",
    "script",
    "script_json",
    "state_from_url",
    "state_to_url",
    "unpack_payload",
    "url_prefix",
    "weights_array",
]
