"""The "Any model" page in a real browser on a tiny GPT-2 saved to a folder (opened by path through the
URL, no network): the explorer renders the model's attention, and a click on a cell shows the
explanation panel with the weight the explorer reports."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from fixtures.hub_tiny import save_gpt2

from .test_explorer import CANVAS, ROOT, cell_point, state, until
from .test_pages import RUN_TIMEOUT_MS, screenshot, wait_until_idle

TEXT = "the cat sat on the mat ."


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return save_gpt2(tmp_path_factory.mktemp("hub") / "gpt2")


def test_click_explains_the_weight(page, app_url: str, gpt2) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(
        f"{app_url}/any_model?{urlencode({'hub_id': str(gpt2), 'hub_text': TEXT})}", wait_until="domcontentloaded"
    )
    try:
        root = page.locator(ROOT)
        root.wait_for(timeout=RUN_TIMEOUT_MS)
        s = until(page, lambda s: s is not None)
        assert (s["kind"], s["view"]) == ("decoder", "heatmap")
        expect(root.locator(".ae-kinds")).to_be_hidden()  # a decoder has one kind of attention
        wait_until_idle(page)  # the page below the explorer is drawn: nothing moves it any more
        root.locator(CANVAS).scroll_into_view_if_needed()
        page.mouse.click(*cell_point(page, 4, 2))
        clicked = until(page, lambda s: s["clicked"] is not None)["clicked"]
        assert {k: clicked[k] for k in ("kind", "layer", "head", "query", "key")} == {
            "kind": "decoder",
            "layer": 0,
            "head": 0,
            "query": 4,
            "key": 2,
        }
        page.get_by_text(re.compile(r"How .+ computed .+: \d\.\d{4}$")).wait_for(timeout=RUN_TIMEOUT_MS)
        metrics = page.locator('[data-testid="stMetricValue"]')
        expect(metrics).to_have_count(2)
        assert [m.inner_text() for m in metrics.all()] == [f"{clicked['weight']:.4f}"] * 2
        wait_until_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert state(page)["clicked"] == clicked  # the rerun kept the explorer's view
    finally:
        screenshot(page, "any_model")
    assert not errors, f"JavaScript errors: {errors}"
