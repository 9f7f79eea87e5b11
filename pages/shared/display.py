"""Showing figures and model output, and their downloads (CSV, standalone HTML)."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from pages.shared.matrixview import matrix_view
from pages.shared.projector import PROJECTOR_URL
from viz.common import TITLE_SIZE, for_projector
from viz.export import figures_to_html

CHART_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}  # plotly's toolbar
# Plotly's toolbar (its mode bar: the PNG export, zoom, pan) floats over a chart's top right corner, 2 to 28 px
# below its top edge. A title that reached the corner was drawn under it: most titles in a phone's 390 px, a
# long one on a desktop, and on a touch screen a tap shows the toolbar and it stays (issue 43). So every title
# is moved down below it (clear_of_toolbar) rather than the toolbar hidden on touch screens: the server cannot
# tell a touch screen (a tablet may have a mouse, a laptop a touch screen), a narrow column on a desktop is as
# narrow as a phone, and every device keeps the export. It costs a chart up to 35 px of height.
TOOLBAR_PX = 30  # the toolbar's lower edge and 2 px of air
# Where plotly (as Streamlit ships it) draws a title, in ems of its font: the first line's baseline is its pad
# below the top for a title of several lines, CAP lower for one line; the text rises ASCENT above a baseline.
CAP, ASCENT = 0.7, 1.0
LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)

# Plotly takes a hover label away when the pointer leaves the chart. A finger never leaves (a tap shows the
# label, and it stays), and a click left it over the chart (issue 43). st.plotly_chart takes no script, so every
# chart brings this one (once a page: a flag on window): a click with a mouse takes the labels away, and on a touch
# screen the next tap does (the first is how a touch screen hovers). Plotly's drag layer clears them when it sees
# the pointer go ("mouseout", plotly.js fx unhover, which also drops a hover still queued). Its own element is
# hidden, so it adds no gap to the page. A fixed script: no user text.
CHART_TIPS = """<style>[data-testid="stElementContainer"]:has(script[data-chart-tips]) { display: none; }</style>
<script data-chart-tips>
(() => {
  if (window.chartTipsListen) return;
  window.chartTipsListen = true;
  const shown = () => document.querySelector(".js-plotly-plot .hoverlayer .hovertext") !== null;
  const clear = () => {
    for (const drag of document.querySelectorAll(".js-plotly-plot .nsewdrag")) {
      drag.dispatchEvent(new MouseEvent("mouseout"));
    }
  };
  let dismiss = false;  // what the press before this click found: a mouse, or a label shown before a tap
  document.addEventListener("pointerdown", (e) => { dismiss = e.pointerType === "mouse" || shown(); }, true);
  document.addEventListener("click", () => { if (dismiss) setTimeout(clear); }, true);  // after plotly's own click
})();
</script>"""


def chart(fig: go.Figure, key: str, *, config: dict[str, Any] = CHART_CONFIG) -> None:
    """A Plotly chart as every page draws it: larger type in projector mode, its title clear of the toolbar
    where ``config`` shows one, and hover labels that a click or a tap takes away (``CHART_TIPS``)."""
    shown = for_projector(fig) if st.session_state.get(PROJECTOR_URL) else fig
    if config.get("displayModeBar", True) is not False:
        shown = clear_of_toolbar(shown)
    st.plotly_chart(shown, key=key, config=config)
    st.html(CHART_TIPS, unsafe_allow_javascript=True)


def clear_of_toolbar(fig: go.Figure) -> go.Figure:
    """``fig``, or a copy whose title starts below Plotly's toolbar (``TOOLBAR_PX``): the title moves down, and
    the top margin and the height grow as much, so the plot keeps its size. ``fig`` itself is untouched (it may
    be cached). A title is placed either by plotly ("auto": its first baseline halfway down the top margin) or,
    as ``viz.common.top_axis_layout`` does, from the top of the figure; the copy's is placed from the top."""
    layout = fig.layout
    title = layout.title
    if not title.text:
        return fig
    size = title.font.size or layout.font.size or TITLE_SIZE
    margin = 100 if layout.margin.t is None else layout.margin.t  # plotly's default
    cap = 0 if len(LINE_BREAK.split(title.text)) > 1 else CAP * size
    if title.y in (None, "auto") and title.yref in (None, "container"):
        baseline = margin / 2
    elif title.y == 1 and title.yref == "container" and title.yanchor == "top":
        baseline = (title.pad.t or 0) + cap
    else:
        return fig  # placed some other way: no figure of viz/ is
    down = math.ceil(TOOLBAR_PX + ASCENT * size - baseline)
    if down <= 0:
        return fig
    out = go.Figure(fig)
    out.update_layout(title_y=1, title_yref="container", title_yanchor="top", title_pad_t=baseline + down - cap)
    out.update_layout(margin_t=margin + down, **({"height": layout.height + down} if layout.height else {}))
    return out


def show_figure(
    fig: go.Figure,
    key: str,
    *,
    csv: pd.DataFrame | np.ndarray | None = None,
    csv_name: str = "attention.csv",
    html_name: str | None = None,
) -> None:
    """A plotly chart (its toolbar exports PNG; :func:`chart`) plus a CSV download of its numbers and, with
    ``html_name``, a "Download HTML" button for the figure as a standalone interactive file.
    In projector mode every font of the chart is drawn larger (the downloads keep the originals)."""
    chart(fig, key)
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
