"""Click any weight, in the real app on the shipped models: a click on a cell of the explorer shows
how that weight was computed, with the same weight the component shows; the arrow keys move the
explanation along the row."""

from __future__ import annotations

import re

import pytest

from .test_explorer import ROOT, TIMEOUT_S, cell_point, until

PANEL = re.compile(r"computed (.+): (\d\.\d{4})$")


def panel_weight(page) -> float:
    """The weight in the explanation's heading."""
    heading = page.get_by_role("heading", name=re.compile(r"^How .* computed")).first
    heading.wait_for(timeout=TIMEOUT_S * 1000)
    return float(PANEL.search(heading.inner_text().strip()).group(2))


@pytest.mark.parametrize(
    "path, kind_button", [("classifier", None), ("translator", "Cross-attention"), ("generator", None)]
)
def test_a_click_explains_the_weight_the_explorer_shows(page, app_url: str, path: str, kind_button) -> None:
    page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
    root = page.locator(ROOT)
    root.wait_for(timeout=TIMEOUT_S * 1000)
    until(page, lambda s: s is not None)
    if kind_button:
        root.get_by_role("button", name=kind_button).click()
    page.locator(f"{ROOT} canvas").first.scroll_into_view_if_needed()
    page.mouse.click(*cell_point(page, 2, 1))
    clicked = until(page, lambda s: s["clicked"] is not None)["clicked"]
    assert (clicked["query"], clicked["key"]) == (2, 1)
    assert panel_weight(page) == pytest.approx(clicked["weight"], abs=5e-5)
    # the panel follows the selection once the arrow keys rest
    root.focus()
    page.keyboard.press("ArrowRight")
    moved = until(page, lambda s: s["clicked"] is not None and s["clicked"]["key"] == 2)["clicked"]
    page.wait_for_function(
        "w => [...document.querySelectorAll('h3')].some(h => h.innerText.trim().endsWith(w))",
        arg=f"{moved['weight']:.4f}",
        timeout=TIMEOUT_S * 1000,
    )
