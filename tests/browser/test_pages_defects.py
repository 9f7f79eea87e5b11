"""What a workshop saw in the browser (issue 36): downloads offered with nothing to download, and the
start page's picture and path cards cutting their own words. Measured in the page: which buttons
exist after a fragment's own rerun, label boxes that overlap, titles wider than their box."""

from __future__ import annotations

import pytest

from model.core.checkpoint import WEIGHTS, default_dir

from .test_pages import wait_until_idle

DOWNLOADS = ("Download as interactive HTML", "Download every weight (CSV)")
TIMEOUT_MS = 60_000


def download_labels(page) -> list[str]:
    return page.locator('[data-testid="stDownloadButton"] button').all_inner_texts()


def type_into(page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True).and_(page.locator("input"))
    box.fill(text)
    box.press("Enter")
    page.wait_for_timeout(300)  # the rerun starts; then wait for the page to settle
    wait_until_idle(page)


@pytest.mark.parametrize(
    "path, label, good",
    [("classifier", "Sentence (English)", "a moving film"), ("translator", "German sentence", "ein mann .")],
)
def test_no_downloads_without_an_explorer(page, app_url: str, path: str, label: str, good: str) -> None:
    """A new input reruns only its fragment; when it yields no explorer the downloads beside it go too,
    and come back with the next input that does."""
    if not (default_dir(path) / WEIGHTS).is_file():
        pytest.skip(f"no trained {path} checkpoint")
    page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.locator('[data-testid="attention-explorer"]').first.wait_for(state="attached", timeout=TIMEOUT_MS)
    assert set(DOWNLOADS) <= set(download_labels(page))

    type_into(page, label, "😀 🎬")
    page.get_by_text("None of the").first.wait_for(timeout=TIMEOUT_MS)
    assert page.locator('[data-testid="attention-explorer"]').count() == 0
    assert not set(DOWNLOADS) & set(download_labels(page))

    type_into(page, label, good)
    page.locator('[data-testid="attention-explorer"]').first.wait_for(state="attached", timeout=TIMEOUT_MS)
    assert set(DOWNLOADS) <= set(download_labels(page))


OVERLAPS = """(selector) => {
  const boxes = [...document.querySelectorAll(selector)].map((e) => e.getBoundingClientRect())
    .filter((r) => r.width > 0);
  const hits = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        hits.push([i, j]);
    }
  return {count: boxes.length, hits};
}"""

CUT_TITLES = """() => [...document.querySelectorAll('[data-testid="stPageLink-NavLink"]')].flatMap((link) =>
  [...link.querySelectorAll('*')].filter((e) => e.children.length === 0 && e.textContent.trim())
    .filter((e) => e.scrollWidth > e.clientWidth + 1 || e.getBoundingClientRect().right > link.getBoundingClientRect().right + 1)
    .map((e) => e.textContent.trim()))"""


@pytest.mark.parametrize("width", [1400, 1024])
def test_start_page_labels_and_titles_fit(page, app_url: str, width: int) -> None:
    """The small heatmap's column labels do not run into each other, and every path card shows its whole
    title (issue 36, item 8)."""
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{app_url}/", wait_until="domcontentloaded")
    wait_until_idle(page)
    chart = ".st-key-start-picture .js-plotly-plot"
    page.locator(chart).first.wait_for(state="attached", timeout=TIMEOUT_MS)
    page.locator(f"{chart} .xtick text").first.wait_for(state="attached", timeout=TIMEOUT_MS)
    columns = page.evaluate(OVERLAPS, f"{chart} .xtick text")
    assert columns["count"] == 6 and not columns["hits"], f"column labels dropped or overlapping: {columns}"
    rows = page.evaluate(OVERLAPS, f"{chart} .ytick text")
    assert rows["count"] == 6 and not rows["hits"], f"row labels dropped or overlapping: {rows}"
    assert page.locator('[data-testid="stPageLink-NavLink"]').count() >= 10
    assert page.evaluate(CUT_TITLES) == []
