"""Every page in a real browser: it runs to the end without an exception and draws its charts."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from model.core.checkpoint import WEIGHTS, default_dir

from .conftest import ARTIFACTS

PAGES = [
    "start",
    "hand",
    "reshape",
    "classifier",
    "generator",
    "translator",
    "any_model",
    "ablation",
    "pairs",
    "profiles",
    "history",
    "heads",
    "workshop",
    "classroom",
]
# Streamlit serves the default page (st.Page(..., default=True)) at the app root; its own
# url_path answers "Page not found" and falls back to the root, so it is visited at "/".
DEFAULT_PAGE = "start"
MODEL_PAGES = {"classifier", "generator", "translator"}  # these need a trained checkpoint
OPENING_TEXT = {"any_model": "Type a model id or a folder"}  # pages that draw no chart until asked
PAGE_MODEL = {
    "ablation": "classifier",
    "pairs": "classifier",
    "profiles": "classifier",
    "history": "generator",  # it opens on the generator's induction head forming (issue 51)
    "heads": "classifier",  # the head finder opens on the classifier's stored scores
}  # pages that open on one of the models
NO_CHARTS = {"classroom": "Start a room"}  # its lobby draws no chart: it waits for this button instead
DRAWN = '.js-plotly-plot, [data-testid="attention-explorer"], [data-testid="matrix-view"]'  # a chart of any kind
RUN_TIMEOUT_MS = 180_000  # first visits load torch models on a shared 2-core machine
CHART_TIMEOUT_MS = 60_000

# Idle means: connected, the script is not running, no running indicator, and that has held for
# half a second (a page may rerun itself once, e.g. after writing widget state into the URL).
APP_IDLE = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = app !== null
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && app.getAttribute('data-test-script-state') === 'notRunning'
    && document.querySelector('[data-testid="stStatusWidgetRunningIcon"]') === null;
  if (!idle) { window.__attentionIdleSince = undefined; return false; }
  window.__attentionIdleSince = window.__attentionIdleSince ?? performance.now();
  return performance.now() - window.__attentionIdleSince > 500;
}"""


def wait_until_idle(page) -> None:
    page.wait_for_selector('[data-testid="stApp"]', state="attached", timeout=RUN_TIMEOUT_MS)
    page.wait_for_function(APP_IDLE, timeout=RUN_TIMEOUT_MS, polling=100)
    page.wait_for_selector('[data-testid="stMain"]', state="attached", timeout=RUN_TIMEOUT_MS)


def screenshot(page, name: str) -> None:
    """The whole page, including what the main area scrolls: the viewport is stretched to fit."""
    height = page.evaluate(
        """() => Math.max(document.documentElement.scrollHeight,
             ...[...document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppScrollToBottomContainer"]')]
                .map(e => e.scrollHeight))"""
    )
    page.set_viewport_size({"width": 1400, "height": max(1000, min(int(height) + 100, 30_000))})
    page.wait_for_function("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def nav_targets(page) -> list[str]:
    """Last URL segment of each link in the sidebar navigation ("" for the default page)."""
    hrefs = page.locator('[data-testid="stSidebarNav"] a').evaluate_all("links => links.map(a => a.href)")
    return [urlsplit(href).path.strip("/").rsplit("/", 1)[-1] for href in hrefs]


@pytest.mark.parametrize("path", PAGES)
def test_page_renders(page, app_url: str, path: str) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{app_url}/{'' if path == DEFAULT_PAGE else path}", wait_until="domcontentloaded")
    task = path if path in MODEL_PAGES else PAGE_MODEL.get(path)
    has_model = task is None or (default_dir(task) / WEIGHTS).is_file()
    try:
        wait_until_idle(page)
        exceptions = page.locator('[data-testid="stException"]')
        assert exceptions.count() == 0, f"/{path} raised: {exceptions.first.inner_text()[:2000]}"
        # the router ran (st.navigation lists exactly our pages) and served this page, not a fallback
        assert page.get_by_text("Page not found").count() == 0, f"/{path}: Streamlit does not know this page"
        targets = nav_targets(page)
        assert set(PAGES) - {DEFAULT_PAGE} <= set(targets) and "common" not in targets and "shared" not in targets, (
            f"unexpected navigation: {targets}"
        )
        if path in NO_CHARTS:
            page.get_by_role("button", name=NO_CHARTS[path]).wait_for(timeout=CHART_TIMEOUT_MS)
        elif path in OPENING_TEXT:
            page.get_by_text(OPENING_TEXT[path]).first.wait_for(timeout=CHART_TIMEOUT_MS)
        elif has_model:
            drawn = page.locator(DRAWN)
            drawn.first.wait_for(state="attached", timeout=CHART_TIMEOUT_MS)
            assert drawn.count() >= 1
        else:
            message = page.get_by_text(f"The {task} model could not be loaded")
            message.first.wait_for(timeout=CHART_TIMEOUT_MS)
    finally:
        screenshot(page, path)
    assert page.locator('[data-testid="stException"]').count() == 0, f"/{path} raised after its charts appeared"
    assert not errors, f"/{path}: JavaScript errors: {errors}"


def test_students_see_no_developer_toolbar(page, app_url: str) -> None:
    """.streamlit/config.toml's client.toolbarMode = "viewer": no Deploy button, no developer menu."""
    page.goto(f"{app_url}/", wait_until="domcontentloaded")
    wait_until_idle(page)
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
    assert page.get_by_role("button", name="Deploy").count() == 0
    menu = page.locator('[data-testid="stMainMenu"]')
    if menu.count():  # viewer mode keeps a small menu: nothing in it for developers
        menu.first.click()
        items = page.locator('[data-testid="stMainMenuList"]').inner_text()
        assert "Rerun" not in items and "Clear cache" not in items and "Developer" not in items
