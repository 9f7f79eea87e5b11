"""Tooltips and the chart toolbar on a phone (390 px, touch) and on a desktop (1440 px, mouse), issue 43:
a click or a tap takes a tooltip away (the explorer's own, and Plotly's hover labels), and Plotly's toolbar
(its mode bar) never covers a chart's title. The classifier page has both: the explorer, and after a click on
one of its cells, the explanation's Plotly charts; the start page has a heatmap titled above its columns."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from model.core.checkpoint import WEIGHTS, default_dir

from .test_pages import CHART_TIMEOUT_MS, wait_until_idle

DEVICES = {
    "phone": dict(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True),
    "desktop": dict(viewport={"width": 1440, "height": 900}),
}
EXPLORER = '[data-testid="attention-explorer"]'
CHART = ".js-plotly-plot"
LABELS = f"{CHART} .hoverlayer .hovertext"  # Plotly's hover labels, on every chart of the page
SETTLE_MS = 400  # longer than Plotly's hover throttle (50 ms) and a frame or two: a label put back would show

pytestmark = pytest.mark.skipif(
    not (default_dir("classifier") / WEIGHTS).is_file(), reason="the classifier page needs its checkpoint"
)


@pytest.fixture(params=list(DEVICES))
def device(request, browser, app_url: str) -> Iterator[tuple[object, bool]]:
    """A fresh page on a phone or a desktop, and whether it touches."""
    options = DEVICES[request.param]
    context = browser.new_context(**options)
    try:
        yield context.new_page(), bool(options.get("has_touch"))
    finally:
        context.close()


def press(page, touch: bool, x: float, y: float) -> None:
    """A tap on a touch screen, a click with the mouse."""
    if touch:
        page.touchscreen.tap(x, y)
    else:
        page.mouse.click(x, y)


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    wait_until_idle(page)


def explain_a_cell(page, app_url: str, touch: bool) -> object:
    """The classifier page with a cell of its explorer hovered (with a mouse) and then clicked or tapped;
    returns the explorer. The click has the app explain the cell, with Plotly charts."""
    open_page(page, f"{app_url}/classifier")
    root = page.locator(EXPLORER)
    root.wait_for(timeout=CHART_TIMEOUT_MS)
    canvas = root.locator(".ae-pane:not([hidden]) canvas.ae-base")
    canvas.scroll_into_view_if_needed()
    lay = json.loads(root.get_attribute("data-layout") or "{}")
    box = canvas.bounding_box()
    x, y = box["x"] + lay["x0"] + 1.5 * lay["c"], box["y"] + lay["y0"] + 0.5 * lay["c"]  # query 0, key 1
    if not touch:
        page.mouse.move(x, y)
        expect(root.locator(".ae-tip")).to_be_visible()  # hovering shows the tooltip
    press(page, touch, x, y)
    expect(root).to_have_attribute("data-state", re.compile(r'"selected":\{"query":0,"key":1,'))
    page.locator(CHART).first.wait_for(state="attached", timeout=CHART_TIMEOUT_MS)  # the explanation
    wait_until_idle(page)
    return root


def test_a_click_takes_the_tooltips_away(device, app_url: str) -> None:
    page, touch = device
    root = explain_a_cell(page, app_url, touch)
    page.wait_for_timeout(SETTLE_MS)
    expect(root.locator(".ae-tip")).to_be_hidden()  # the explorer's, after the click that selected the cell

    chart = page.locator(CHART).first  # the explanation's first chart: a heatmap, a cell under its middle
    chart.scroll_into_view_if_needed()
    box = chart.locator(".nsewdrag").first.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    if touch:
        page.touchscreen.tap(x, y)  # a touch screen's hover: the tap shows the label
    else:
        page.mouse.move(x, y)
    expect(page.locator(LABELS)).not_to_have_count(0)
    press(page, touch, x, y)  # on a touch screen the next tap takes it away, as a click does with a mouse
    page.wait_for_timeout(SETTLE_MS)
    expect(page.locator(LABELS)).to_have_count(0)


BOXES = """() => [...document.querySelectorAll('.js-plotly-plot')].map(chart => {
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const title = chart.querySelector('.gtitle');
  return {title: title ? title.textContent : null, title_box: box(title), toolbar: box(chart.querySelector('.modebar'))};
})"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def covered_titles(page) -> list[dict]:
    """Every chart of the page whose title's box meets its toolbar's (with the pointer over the chart, on a
    desktop, where the toolbar shows)."""
    charts = page.evaluate(BOXES)
    assert charts, "no Plotly chart on the page"
    shown = [c for c in charts if c["title_box"] and c["toolbar"]]
    assert shown, f"no chart with a title and a toolbar: {charts}"
    return [c for c in shown if overlap(c["title_box"], c["toolbar"])]


def test_the_toolbar_leaves_every_title_clear(device, app_url: str) -> None:
    page, touch = device
    open_page(page, f"{app_url}/")  # a heatmap, its title above the column labels
    chart = page.locator(CHART).first
    chart.wait_for(state="attached", timeout=CHART_TIMEOUT_MS)
    if not touch:
        chart.hover()
    assert covered_titles(page) == []
    explain_a_cell(page, app_url, touch)  # charts with titles of one and two lines
    if not touch:
        page.locator(CHART).first.hover()
    assert covered_titles(page) == []


def test_the_head_finder_scatter_takes_its_labels_away_too(device, app_url: str) -> None:
    """The Head finder's scatter is drawn by its own st.plotly_chart (it reports selected points), not by
    `chart`: it brings the same script, so a page opened at its own address has it."""
    page, touch = device
    open_page(page, f"{app_url}/heads")
    page.locator(CHART).first.wait_for(state="attached", timeout=CHART_TIMEOUT_MS)
    assert page.locator("script[data-chart-tips]").count() >= 1
    assert page.evaluate("() => window.chartTipsListen === true")
