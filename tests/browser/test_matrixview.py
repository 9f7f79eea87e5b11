"""The matrix view (the hand-worked and reshape pages' tables) in a real browser: it draws the
payload's numbers, hovering a cell reports its labels and value in ``data-state`` and sends nothing
to the server, markup in a sentence stays text, the head-coloured reshape steps show their legend,
and the ablation page's grid outlines the heads switched off."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from model.core.checkpoint import WEIGHTS, default_dir

from .test_pages import wait_until_idle

VIEW = '[data-testid="matrix-view"]'
MARKUP = "<img src=x onerror=alert(1)>"


def view_titled(page, title_start: str):
    """The matrix view whose title starts with ``title_start``."""
    view = page.locator(VIEW).filter(has=page.locator(".mv-title", has_text=title_start)).first
    view.wait_for(timeout=60_000)
    return view


def state(view) -> dict:
    return json.loads(view.get_attribute("data-state"))


def test_hand_page_hover_reports_the_cell_without_a_message(page, app_url: str) -> None:
    page.goto(f"{app_url}/hand", wait_until="domcontentloaded")
    wait_until_idle(page)
    weights = view_titled(page, "attention weights")
    assert weights.locator("tbody tr").count() == 6 and weights.locator("td").count() == 36
    assert weights.locator("td").nth(1 * 6 + 4).inner_text() == "0.4917"  # query 1:is, key 4:dessert
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    weights.locator("td").nth(1 * 6 + 4).hover()
    page.wait_for_function(
        "v => v.dataset.state && JSON.parse(v.dataset.state).hover !== null", arg=weights.element_handle()
    )
    hover = state(weights)["hover"]
    assert (hover["row_label"], hover["col_label"], round(hover["value"], 4)) == ("1:is", "4:dessert", 0.4917)
    assert weights.locator(".mv-readout").inner_text() == "1:is → 4:dessert: 0.4917"
    assert weights.locator("th.mv-on").all_inner_texts() == ["4:dessert", "1:is"]  # its column and row
    page.mouse.move(0, 0)
    page.wait_for_timeout(200)
    assert not sent, f"hovering sent {len(sent)} websocket frame(s)"


def test_markup_in_the_sentence_is_text(page, app_url: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/hand?hand_sentence={quote('hi ' + MARKUP)}", wait_until="domcontentloaded")
    wait_until_idle(page)
    scores = view_titled(page, "scores ω")
    assert scores.locator("img").count() == 0
    assert f"1:{MARKUP.split()[0]}" in scores.locator("th.mv-col").all_inner_texts()
    assert not dialogs


def test_reshape_steps_are_coloured_by_head(page, app_url: str) -> None:
    page.goto(f"{app_url}/reshape", wait_until="domcontentloaded")
    wait_until_idle(page)
    softmax = view_titled(page, "softmax")
    assert softmax.locator(".mv-key").all_inner_texts() == ["head 0", "head 1"]
    colours = softmax.locator("td").evaluate_all("cells => [...new Set(cells.map(c => c.style.backgroundColor))]")
    assert sorted(colours) == sorted(["rgb(230, 159, 0)", "rgb(86, 180, 233)"])  # HEAD_COLORS[:2]
    assert softmax.locator("tbody tr").count() == 16  # (b·h, t, t) = (4, 4, 4): b·h·t rows


def test_reshape_tabs_switch_in_the_browser(page, app_url: str) -> None:
    page.goto(f"{app_url}/reshape", wait_until="domcontentloaded")
    wait_until_idle(page)
    view = view_titled(page, "transpose · queries").element_handle()  # its title changes with the tab
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(payload)))
    cells = lambda: [td.inner_text() for td in view.query_selector_all("td")]
    queries = cells()
    view.query_selector(".mv-tab:nth-child(2)").click()  # queries, keys, values
    page.wait_for_function("v => JSON.parse(v.dataset.state).panel === 'keys'", arg=view)
    assert view.query_selector(".mv-title").text_content() == "transpose · keys: (b, h, t, s)  (2 × 2 × 4 × 4)"
    assert cells() != queries
    assert view.query_selector(".mv-tab:nth-child(2)").get_attribute("aria-selected") == "true"
    page.wait_for_timeout(200)
    assert not sent, f"switching the tab sent {len(sent)} websocket frame(s)"


def test_ablation_grid_marks_the_heads_switched_off(page, app_url: str) -> None:
    if not (default_dir("classifier") / WEIGHTS).is_file():
        pytest.skip("no classifier checkpoint: the page shows only the could-not-be-loaded message")
    page.goto(f"{app_url}/ablation?abl_cls_enc0=0&abl_kind=encoder", wait_until="domcontentloaded")
    wait_until_idle(page)
    grid = view_titled(page, "Self-attention: largest change")
    marked = grid.locator("td.mv-marked")
    assert marked.count() == 1 and grid.locator(".mv-key").all_inner_texts() == ["switched off"]
    marked.hover()
    page.wait_for_function(
        "v => v.dataset.state && JSON.parse(v.dataset.state).hover !== null", arg=grid.element_handle()
    )
    hover = state(grid)["hover"]
    assert (hover["row_label"], hover["col_label"], hover["marked"]) == ("layer 0", "head 0", True)
    assert grid.locator(".mv-readout").inner_text().endswith("(switched off)")
    assert page.locator(".js-plotly-plot").count() == 0  # the page draws no Plotly chart on load
