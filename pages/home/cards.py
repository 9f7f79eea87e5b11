"""Link cards (the start page's path through the app): a bordered box per page with its link and one line,
the link's title wrapping inside the card instead of ending in an ellipsis."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import streamlit as st

from pages import PageInfo

MAX_PER_ROW = 3  # five cards in a row left a title ~50 px on a 1024-px projector: words broke mid-letter
# st.page_link writes its title on one line and cuts it with an ellipsis ("Translator (de → e"); in a
# card of a five-column row that cut most titles. Inside the cards' container only, titles wrap.
CARD_CSS = """<style>
.st-key-path-cards [data-testid="stPageLink-NavLink"] span,
.st-key-path-cards [data-testid="stPageLink-NavLink"] [data-testid="stMarkdownContainer"],
.st-key-path-cards [data-testid="stPageLink-NavLink"] p {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  overflow-wrap: normal !important; word-break: normal !important; }
.st-key-path-cards [data-testid="stPageLink-NavLink"] { height: auto !important; }
</style>"""


def link_cards(sections: Mapping[str, Sequence[PageInfo]]) -> None:
    """Each section's pages (registry entries) as cards under its heading, at most :data:`MAX_PER_ROW` a
    row and rows filled evenly: icon and title (the navigation's), then its line."""
    st.html(CARD_CSS)  # a fixed stylesheet: no user text
    with st.container(key="path-cards"):
        for heading, names in sections.items():  # names: the section's pages
            st.subheader(heading)
            per_row = math.ceil(len(names) / math.ceil(len(names) / MAX_PER_ROW))  # 5 -> 3 + 2, 4 -> 2 + 2
            for start in range(0, len(names), per_row):
                row = names[start : start + per_row]
                for column, name in zip(st.columns(per_row), row):
                    with column.container(border=True):
                        st.page_link(name.script, icon=name.icon)
                        st.caption(name.purpose)
