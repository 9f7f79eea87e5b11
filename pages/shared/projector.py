"""Projector mode: larger text for the back of a room, switched in the sidebar and kept in the URL."""

from __future__ import annotations

import streamlit as st

from pages.shared.state import init_state, set_url

PROJECTOR_URL = "projector"  # ?projector=1 turns the projector theme on


# Larger text everywhere a room reads from the back, and nothing lost on the way: the rules at the
# end keep the metric value large (Markdown's p rule above would shrink it), grow st.text output,
# wrap labels that Streamlit cuts with an ellipsis, and lift slider values clear of their thumbs.
PROJECTOR_CSS = """<style>
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] li { font-size: 1.35rem !important; line-height: 1.5; }
[data-testid="stMain"] h1 { font-size: 3.2rem !important; }
[data-testid="stMain"] h2 { font-size: 2.5rem !important; }
[data-testid="stMain"] h3 { font-size: 2rem !important; }
[data-testid="stWidgetLabel"] p { font-size: 1.3rem !important; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 1.2rem !important; }
[data-testid="stMetricValue"] { font-size: 3rem !important; }
[data-testid="stMain"] button p, [data-testid="stMain"] input, [data-testid="stMain"] textarea,
[data-baseweb="select"] div, [data-baseweb="tab"] p { font-size: 1.3rem !important; }
[data-testid="stSidebar"] p, [data-testid="stSidebar"] label { font-size: 1.15rem !important; }
[data-testid="stMain"] [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  font-size: 3rem !important; line-height: 1.2; }
[data-testid="stMain"] [data-testid="stText"], [data-testid="stMain"] [data-testid="stText"] span {
  font-size: 1.35rem !important; line-height: 1.5; }
[data-testid="stSidebarNavLink"] span, [data-testid="stSidebarNavLink"] [data-testid="stMarkdownContainer"],
[data-testid="stSidebarNavLink"] p, [data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"] {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }
[data-testid="stSidebarNavLink"] { height: auto !important; min-height: 2rem; }
[data-testid="stMain"] [data-testid="stSliderThumbValue"] { top: auto !important; bottom: 100%; }
[data-testid="stMain"] [data-testid="stSliderThumbValue"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stSliderThumbValue"] { font-size: 1.2rem !important; line-height: 1.3; }
</style>"""


def projector_toggle() -> None:
    """The sidebar's projector switch: larger text for the back of a room, kept in the URL."""
    init_state(PROJECTOR_URL, False, lambda raw: raw.lower() in ("1", "true", "yes", "on"))
    st.sidebar.toggle(
        "Projector mode", key=PROJECTOR_URL, help="Larger text for teaching; a link with ?projector=1 opens in it."
    )
    if st.session_state[PROJECTOR_URL]:
        set_url({PROJECTOR_URL: "1"})
        st.markdown(PROJECTOR_CSS, unsafe_allow_html=True)  # a fixed stylesheet: no user text
    else:
        st.query_params.pop(PROJECTOR_URL, None)
