"""The app's pages (run by app.py's st.navigation) and what they share (pages/shared/).

Streamlit sees a ``pages/`` folder beside ``app.py`` and, until ``st.navigation`` has run once
in the process, serves that folder in its legacy multipage mode: a direct link to a page on a
freshly started server would run the page without ``app.py`` (no router, no sidebar). Every page
imports this package first, so here we switch the process to ``app.py``'s router and rerun; the
rerun goes through ``app.py`` to the same URL. (``PagesManager.uses_pages_directory`` is the
flag Streamlit itself clears inside ``st.navigation``.)
"""

from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

if PagesManager.uses_pages_directory and get_script_run_ctx() is not None:
    import streamlit as st

    PagesManager.uses_pages_directory = False
    st.rerun()
