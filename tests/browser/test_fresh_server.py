"""A page address as the first request a fresh server ever gets (every Community Cloud wake), then a reload.

With a ``pages/`` folder beside the entry script, Streamlit runs its legacy multipage mode until
``st.navigation`` first runs in the process; that mode lists ``pages/*.py`` and would name menu entries
after files. Ours keeps every page script in a section folder, so the router runs from the first
request: our menu (the registry's titles, grouped by section), the page's own heading, no "page not
found" notice, no entry named after a file.
"""

from __future__ import annotations

import pytest

from fixtures.server import streamlit_server
from pages import PAGES, SECTIONS
from tests.browser.conftest import ARTIFACTS, STARTUP_SECONDS

HEADING = '[data-testid="stMainBlockContainer"] h1'
NAV_LINK = '[data-testid="stSidebarNavLink"]'
SECTION_HEADER = '[data-testid="stNavSectionHeader"]'
FILE_NAMES = {"app", "serve", "start", "__init__"}  # what a menu generated from files would show


def check_router_ran(page, entry) -> None:
    page.wait_for_selector(f"{HEADING}:has-text('{entry.shown_heading}')", timeout=90_000)
    titles = [t.strip().split("\n")[-1] for t in page.locator(NAV_LINK).all_inner_texts()]  # after the icon
    assert titles == [p.title for p in PAGES], titles
    assert not FILE_NAMES & {t.lower() for t in titles}
    headers = [t.strip() for t in page.locator(SECTION_HEADER).all_inner_texts()]
    assert headers == [h for h in SECTIONS.values() if h], headers
    body = page.locator("body").inner_text()
    assert "Page not found" not in body and "no corresponding file" not in body


@pytest.mark.parametrize("entry", PAGES, ids=lambda p: p.address)
def test_a_page_address_is_a_fresh_servers_first_request(browser, entry):
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / f"fresh-{entry.address}.log"
    with streamlit_server(log_path=log, startup_seconds=STARTUP_SECONDS) as server:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            page = context.new_page()
            address = "" if entry.address == "start" else entry.address
            page.goto(f"{server.url}/{address}")
            check_router_ran(page, entry)
            page.reload()
            check_router_ran(page, entry)
        finally:
            context.close()
