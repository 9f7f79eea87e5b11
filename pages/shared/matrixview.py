"""The matrix view on a page: one Streamlit components v2 element per matrix, a table of coloured cells
with the numbers printed (:mod:`viz.matrixview`), drawn in the browser without Plotly.

The component is registered once, at import, from ``viz/matrixview/matrixview.js`` and
``matrixview.css`` (inline strings: no build step, no CDN), as ``pages/shared/explorer.py`` registers the
explorer. ``pages.shared.display.show_matrix`` puts it on a page with its CSV download.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from pages.shared.projector import PROJECTOR_URL
from viz.matrixview.assets import asset

COMPONENT_NAME = "matrix_view"
_component = st.components.v2.component(COMPONENT_NAME, js=asset("matrixview.js"), css=asset("matrixview.css"))


def matrix_view(payload: dict[str, Any], key: str) -> None:
    """Show one :func:`viz.matrixview.matrix_payload` (or :func:`~viz.matrixview.matrix_panels`), in
    larger type in projector mode."""
    _component(key=key, data={**payload, "projector": bool(st.session_state.get(PROJECTOR_URL))}, height="content")
