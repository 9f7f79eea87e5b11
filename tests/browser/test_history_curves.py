"""The training-history page's loss and validation curves in a real browser: an inline SVG (st.markdown),
drawn as SVG and not shown as text, with a tooltip on every point."""

from __future__ import annotations

import json

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
    assert drawn["firstTip"].startswith(f"snapshot 1\n{drawn['series'][0]}: ")
    assert drawn["marked"] == ["2"]  # the epoch in the URL
    assert "<svg" not in page.locator('[data-testid="stMain"]').inner_text()
    assert not errors, f"JavaScript errors: {errors}"


MOMENT = 'svg[aria-label="each role\'s best head per snapshot"]'
READ_MOMENT = f"""() => {{
  const svg = document.querySelector({json.dumps(MOMENT)});
  const box = svg.getBoundingClientRect();
  const main = document.querySelector('[data-testid="stMain"]').getBoundingClientRect();
  const panel = (name) => [...svg.querySelectorAll(`g.series[data-panel="${{name}}"]`)].map((g) => g.dataset.name);
  const panels = [...svg.querySelectorAll('text.panel-title')].map((t) => t.textContent);
  return {{
    width: box.width, left: box.left, right: box.right, mainRight: main.right, viewport: window.innerWidth,
    panels, top: panel(panels[0]), bottom: panels[1] ? panel(panels[1]) : [],
    fontPx: parseFloat(getComputedStyle(svg.querySelector('text.panel-title')).fontSize) * box.width / 380,
    moment: [...new Set([...svg.querySelectorAll('line.moment')].map((l) => l.getAttribute('data-epoch')))],
    url: location.search,
    note: [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')].map((m) => m.innerText)
      .find((t) => t.startsWith('Watch a head learn its job')) || '',
  }};
}}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_history_opens_on_the_head_forming_readable_on_a_phone(page, app_url: str, width: int) -> None:
    """The page's plain address opens on the shipped generator at the snapshot its history marks, and the chart of
    the induction score above the loss on repeated text fits the screen, its words near the page's size."""
    if not (default_dir("generator") / "history.json").is_file():
        pytest.skip("no shipped generator history")
    from model.training.history import load_history

    moment = load_history(default_dir("generator")).moment()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{app_url}/history", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.locator(MOMENT).wait_for(state="visible", timeout=CHART_TIMEOUT_MS)
    page.locator(MOMENT).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(MOMENT).screenshot(path=str(ARTIFACTS / f"history-moment-{width}.png"))
    got = page.evaluate(READ_MOMENT)
    assert f"hist_epoch={moment.epoch}" in got["url"] and "hist_task=generator" in got["url"]
    assert got["moment"] == [str(moment.epoch)] and len(got["panels"]) == 2
    assert "induction" in got["top"] and got["bottom"] == ["loss on a repeated sequence (nats)"]
    assert got["left"] >= 0 and got["right"] <= got["viewport"]  # nothing past the screen's edge
    assert got["fontPx"] >= 11  # the panels' names stay readable when the chart shrinks to a phone
    assert f"Between snapshot {moment.before_epoch} and snapshot {moment.epoch}" in got["note"]
