"""Attention Explorer: the router. Every page is described once in pages/__init__.py and lives in its
section folder under pages/; what several pages share is in pages/shared/."""

import streamlit as st

from pages import BY_ADDRESS, SECTIONS, in_section
from pages.router.lesson import enter_lesson, open_lesson, pin_control
from pages.router.menu import Menu, session_menu
from pages.router.sidebar import sidebar
from pages.shared.state import flush_url, start_url

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")


def build_menu() -> Menu:
    """One st.Page per registry entry (pages/__init__.py), grouped by section; every page listed (past 10
    Streamlit would hide some behind "View more")."""
    return {
        heading: [
            st.Page(p.script, title=p.title, url_path=p.address, icon=p.icon, default=p.address == "start")
            for p in in_section(section)
        ]
        for section, heading in SECTIONS.items()
    }


NAV = session_menu(build_menu)  # built on a session's first run only (pages/router/menu.py)
BY_PATH = {page.url_path: page for pages in NAV.values() for page in pages}

lesson = open_lesson()  # a valid ?lesson= link pins the page: no menu (pages/router/lesson.py)
page = st.navigation(NAV, expanded=True, position="hidden" if lesson else "sidebar")
start_url()
prefixes = BY_ADDRESS[page.url_path].url_keys if page.url_path in BY_ADDRESS else ()
in_lesson = enter_lesson(lesson, page, BY_PATH, prefixes)
sidebar()
if not in_lesson and page.url_path != "classroom":  # a live room has its own join link, and a teacher key
    pin_control(page, prefixes)
try:
    page.run()
finally:  # also after st.stop(): a page that stops early still writes what it set
    flush_url(prefixes)
