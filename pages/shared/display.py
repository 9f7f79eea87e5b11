"""Showing figures and model output, and their downloads (CSV, standalone HTML)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.shared.matrixview import matrix_view
from pages.shared.projector import PROJECTOR_URL
from viz.common import for_projector
from viz.export import figures_to_html

CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}  # plotly's toolbar


def show_figure(
    fig: go.Figure,
    key: str,
    *,
    csv: pd.DataFrame | np.ndarray | None = None,
    csv_name: str = "attention.csv",
    html_name: str | None = None,
) -> None:
    """A plotly chart (its toolbar exports PNG) plus a CSV download of its numbers and, with
    ``html_name``, a "Download HTML" button for the figure as a standalone interactive file.
    In projector mode every font of the chart is drawn larger (the downloads keep the originals)."""
    shown = for_projector(fig) if st.session_state.get(PROJECTOR_URL) else fig
    st.plotly_chart(shown, key=key, config=CHART_CONFIG)
    if csv is not None:
        csv_button(csv, key, csv_name)
    if html_name is not None:
        title = html.unescape(fig.layout.title.text or "Attention Explorer figure")  # figure titles are escaped
        html_button("Download HTML", [fig], title, key=f"{key}-html", file_name=html_name)


def show_matrix(
    payload: dict[str, Any],
    key: str,
    *,
    csv: pd.DataFrame | Callable[[], pd.DataFrame] | None = None,
    csv_name: str = "matrix.csv",
) -> None:
    """A matrix drawn as a table of coloured cells (:func:`viz.matrixview.matrix_payload`), no Plotly:
    a page with many small matrices (the hand-worked and reshape pages) draws them in milliseconds.
    With ``csv`` (or the function that builds it, called only on the click), a CSV download of its numbers."""
    matrix_view(payload, key)
    if csv is not None:
        csv_button(csv, key, csv_name)


def csv_button(
    csv: pd.DataFrame | np.ndarray | Callable[[], pd.DataFrame], key: str, name: str, *, label: str = "Download CSV"
) -> None:
    """A download button for ``csv`` (or the function that builds it); the file is written when
    clicked, not on every rerun."""

    def write() -> bytes:
        df = csv() if callable(csv) else csv
        return (df if isinstance(df, pd.DataFrame) else pd.DataFrame(df)).to_csv().encode("utf-8")

    st.download_button(
        label,
        data=write,
        file_name=name,
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
    )


def output_text(text: str, parent: Any = st) -> None:
    """A model's output (a translation, generated text) in a bordered box under ``parent`` (a column,
    or the page). st.text, not st.code: st.code makes the browser load a 1.5 MB syntax highlighter
    (the page's resource timings) to show a few plain words."""
    parent.container(border=True).text(text)


Figures = Sequence[go.Figure] | Callable[[], Sequence[go.Figure]]


def html_button(label: str, figs: Figures, title: str, *, key: str, file_name: str, notes: str = "") -> None:
    """A download button whose standalone HTML is built only when clicked (it embeds ~5 MB of plotly.js).
    ``figs`` may be a function that builds them, so figures the page does not show cost nothing until then."""
    build = figs if callable(figs) else (lambda figs=list(figs): figs)
    st.download_button(
        label,
        data=lambda: figures_to_html(list(build()), title, notes).encode("utf-8"),
        file_name=file_name,
        mime="text/html",
        key=key,
        on_click="ignore",
        help="One HTML file with interactive charts; it opens offline in any browser.",
    )


def export_view_button(figs: Figures, title: str, key: str, *, notes: str = "", file_name: str | None = None) -> None:
    """Offer the page's main figures (``figs``, in order, or a function that builds them on click) as one
    standalone HTML file under ``title`` and ``notes``."""
    if not callable(figs) and not figs:
        return
    name = file_name or (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "attention-explorer") + ".html"
    html_button("Download this view as HTML", figs, title, key=key, file_name=name, notes=notes)
