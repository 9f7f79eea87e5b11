"""The training-history page's loss and validation curves in a real browser: an inline SVG (st.markdown),
drawn as SVG and not shown as text, with a tooltip on every point."""

from __future__ import annotations

import pytest

from model.core.checkpoint import WEIGHTS, default_dir

from .conftest import ARTIFACTS
from .test_pages import CHART_TIMEOUT_MS, wait_until_idle

CURVES = 'svg[aria-label="loss and validation per snapshot"]'
DRAWN = f"""() => {{
  const svg = document.querySelector('{CURVES}');
  const box = svg.getBoundingClientRect();
  const points = [...svg.querySelectorAll('g.series circle')];
  return {{
    namespace: svg.namespaceURI,
    width: box.width,
    height: box.height,
    lines: svg.querySelectorAll('g.series polyline').length,
    points: points.length,
    tips: points.filter((c) => c.firstElementChild && c.firstElementChild.tagName === 'title'
                              && c.firstElementChild.namespaceURI === svg.namespaceURI).length,
    firstTip: points.length ? points[0].textContent : null,
    series: [...svg.querySelectorAll('g.series')].map((g) => g.getAttribute('data-name')),
    marked: [...svg.querySelectorAll('line.current-epoch')].map((l) => l.getAttribute('data-epoch')),
  }};
}}"""


def test_history_page_draws_the_curves_as_inline_svg(page, app_url: str) -> None:
    if not (default_dir("classifier") / WEIGHTS).is_file():
        pytest.skip("no trained classifier checkpoint: the history page shows only its message")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{app_url}/history?hist_epoch=2", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.locator(CURVES).wait_for(state="visible", timeout=CHART_TIMEOUT_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(CURVES).screenshot(path=str(ARTIFACTS / "history-curves.png"))
    drawn = page.evaluate(DRAWN)
    assert drawn["namespace"] == "http://www.w3.org/2000/svg"  # an SVG element, not Markdown's text
    assert drawn["width"] > 200 and drawn["height"] > 150
    assert "training loss" in drawn["series"] and drawn["lines"] >= len(drawn["series"])
    assert drawn["points"] >= 4 and drawn["tips"] == drawn["points"]  # every point has its tooltip
    assert drawn["firstTip"].startswith(f"epoch 1\n{drawn['series'][0]}: ")
    assert drawn["marked"] == ["2"]  # the epoch in the URL
    assert "<svg" not in page.locator('[data-testid="stMain"]').inner_text()
    assert not errors, f"JavaScript errors: {errors}"
