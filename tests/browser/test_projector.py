"""Projector mode in a real browser: everything a room reads from the back is larger and nothing is
lost. Measured on the computed styles of the classifier and translator pages, normal against
projector: the prediction metric, the translation text, widget labels and titles grow; no label is
cut with an ellipsis; slider values stay clear of their thumbs; the main heatmap keeps every row
label. Full-page screenshots of each model page in projector mode go to test-artifacts/."""

from __future__ import annotations

import pytest

from .test_pages import screenshot, wait_until_idle

SENTENCE = "ein mann mit einem roten hut fährt mit seinem fahrrad durch die alte stadt ."
MEASURE = """() => {
  const size = (selector) => {
    const e = document.querySelector(selector);
    if (!e) return null;
    const leaf = [...e.querySelectorAll('*')].filter(x => !x.children.length && x.textContent.trim())[0] || e;
    return parseFloat(getComputedStyle(leaf).fontSize);
  };
  const cut = [...document.querySelectorAll('*')]
    .filter(e => e.children.length <= 1 && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).textOverflow === 'ellipsis')
    .map(e => e.textContent.trim());
  const covered = [...document.querySelectorAll('[data-testid="stSliderThumbValue"]')]
    .filter(v => v.getBoundingClientRect().bottom > v.parentElement.getBoundingClientRect().top + 1)
    .map(v => v.textContent);
  const heatmaps = [...document.querySelectorAll('.js-plotly-plot')]
    .filter(p => p.data && p.data.length === 1 && p.data[0].type === 'heatmap')
    .map(p => ({rows: p.data[0].y.length, shown: p.querySelectorAll('.yaxislayer-above .ytick').length}));
  return {
    metric: size('[data-testid="stMain"] [data-testid="stMetricValue"]'),
    text: size('[data-testid="stMain"] [data-testid="stText"]'),
    label: size('[data-testid="stMain"] [data-testid="stWidgetLabel"]'),
    title: size('[data-testid="stMain"] h1'),
    cut, covered, heatmaps,
  };
}"""


def measure(page, url: str) -> dict:
    page.goto(url, wait_until="domcontentloaded")
    wait_until_idle(page)
    page.wait_for_selector(".js-plotly-plot .ytick", state="attached", timeout=60_000)
    return page.evaluate(MEASURE)


@pytest.mark.parametrize(
    "path, grows",
    [("classifier", ("metric", "label", "title")), ("translator", ("text", "label", "title"))],
)
def test_projector_mode_is_larger_and_loses_nothing(page, app_url: str, path: str, grows: tuple[str, ...]) -> None:
    # the sections with plotly charts opened (the explorer's type is checked in test_explorer.py)
    query = f"tr_text={SENTENCE}&tr_steps=True&" if path == "translator" else "cls_reach=True&"
    normal = measure(page, f"{app_url}/{path}?{query}")
    large = measure(page, f"{app_url}/{path}?{query}projector=1")
    for what in grows:
        assert normal[what] and large[what] > normal[what], (what, normal[what], large[what])
    assert not large["cut"], f"labels cut with an ellipsis: {large['cut']}"
    assert not large["covered"], f"slider values over their thumbs: {large['covered']}"
    for heatmap in large["heatmaps"]:  # plotly's (the explorer's type is checked in test_explorer.py)
        assert heatmap["shown"] == heatmap["rows"], f"{heatmap['shown']} of {heatmap['rows']} row labels shown"


@pytest.mark.parametrize("path", ["classifier", "generator", "translator"])
def test_projector_screenshots_of_the_model_pages(page, app_url: str, path: str) -> None:
    opened = {"classifier": "cls_reach=True&", "translator": "tr_steps=True&", "generator": "gen_steps=True&"}.get(
        path, ""
    )
    page.goto(f"{app_url}/{path}?{opened}projector=1", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.wait_for_selector(".js-plotly-plot", state="attached", timeout=60_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    screenshot(page, f"projector-{path}")
