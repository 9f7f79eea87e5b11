"""The router's ``st.Page`` objects, built on a session's first run and reused on every later run of it.

Building the 14 pages cost about 0.7 ms of every run (each ``st.Page`` resolves and checks its file,
derives a name and validates its icon), a tenth of a student's rerun in a live room. The objects are
kept per session, not per process: ``st.navigation`` marks the page it returns as runnable on the
object itself and ``Page.run`` clears the mark, so two sessions sharing one object could clear each
other's mark between the two calls ("This page cannot be called directly"). A session's runs never
overlap, so within one session the objects are reused safely.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

Menu = dict[str, list[st.Page]]  # a heading -> its pages, as st.navigation takes them
MENU_KEY = "_router_menu"  # in the session; no page's URL prefix starts with "_"


def session_menu(build: Callable[[], Menu]) -> Menu:
    """The session's menu: ``build()`` on its first run, the same objects on every later run."""
    menu = st.session_state.get(MENU_KEY)
    if menu is None:
        menu = st.session_state[MENU_KEY] = build()
    return menu
