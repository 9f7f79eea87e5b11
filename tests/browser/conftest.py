"""A real Streamlit server and Debian's Chromium (driven by Playwright) for the browser tests.

The server and the browser options are the benchmarks' (``fixtures/server.py``), so both drive the
app the same way."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.server import CHROMIUM, launch_chromium, streamlit_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
STARTUP_SECONDS = 60


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Base URL of ``streamlit run serve.py`` (app.py, as `make run` serves it) on a free loopback port; stopped after the session."""
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(log_path=ARTIFACTS / "streamlit.log", startup_seconds=STARTUP_SECONDS) as server:
        yield server.url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium through Playwright; the tests skip only when it is not installed."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (`make test` installs it with apt-get when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = launch_chromium(pw)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, app_url: str) -> Iterator[object]:
    """A fresh browser context and page per test, so sessions never share state."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()
