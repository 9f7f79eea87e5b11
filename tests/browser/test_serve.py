"""serve.py in a real browser: a page opened by its address connects to the app at once (one health
check, at the app's root, not the 404 probe of ``/<page>/_stcore/health`` and a 100 ms wait), and the
app behaves as under ``streamlit run app.py``: the page, its sidebar links, moving between pages."""

from __future__ import annotations

import urllib.request

import pytest

HEADING = '[data-testid="stMainBlockContainer"] h1'


def html_of(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 - a loopback URL of the test server
        return r.read().decode()


def test_only_page_addresses_get_the_base(app_url):
    assert "BACKEND_BASE_URL" in html_of(f"{app_url}/classifier")
    assert "BACKEND_BASE_URL" in html_of(f"{app_url}/ablation?abl_model=translator")
    assert "BACKEND_BASE_URL" not in html_of(f"{app_url}/")  # the start page has nothing to skip
    assert "BACKEND_BASE_URL" not in html_of(f"{app_url}/not-a-page")


@pytest.mark.parametrize("name, heading", [("ablation", "Head ablation"), ("profiles", "Head profiles")])
def test_a_page_address_connects_without_the_probe(page, app_url, name, heading):
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/_stcore/" in r.url else None)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{app_url}/{name}")
    page.wait_for_selector(f"{HEADING}:has-text('{heading}')", timeout=60_000)
    health = [u for u in asked if u.endswith("/_stcore/health")]
    assert health == [f"{app_url}/_stcore/health"]  # never /<page>/_stcore/health
    assert [s.split("//", 1)[1].split("/", 1)[1] for s in sockets] == ["_stcore/stream"]
    # the links and moving between pages are Streamlit's own, as without serve.py
    links = page.locator('[data-testid="stSidebarNavLink"]')
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    assert f"{app_url}/classifier" in hrefs and f"{app_url}/" in hrefs
    page.locator(f'[data-testid="stSidebarNavLink"][href="{app_url}/classifier"]').click()
    page.wait_for_selector(f"{HEADING}:has-text('Sentiment classifier')", timeout=60_000)
    page.wait_for_function("location.pathname === '/classifier'", timeout=30_000)
    page.reload()
    page.wait_for_selector(f"{HEADING}:has-text('Sentiment classifier')", timeout=60_000)
    assert not [u for u in asked if "/classifier/_stcore/" in u or f"/{name}/_stcore/" in u]
