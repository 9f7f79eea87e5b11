"""Every page fits a projector (1440 px) and a phone (390 px) in a real browser: no text in the main area cut
short, the start page's picture keeps its numbers apart, and the profiles' nearest-heads table keeps each
head's name on one line (issue 43's screenshot review)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .test_pages import DEFAULT_PAGE, DRAWN, PAGES, wait_until_idle

WIDTHS = (1440, 390)
# elements of the main area whose text is wider than their clipped box (an ellipsis, or hidden overflow)
CUT_TEXT = """() => [...document.querySelectorAll('[data-testid="stMain"] *')].filter(el => {
  const cs = getComputedStyle(el);
  const clips = cs.textOverflow === 'ellipsis' || cs.overflow === 'hidden' || cs.overflowX === 'hidden';
  return clips && el.textContent.trim() && el.children.length <= 3 && el.clientWidth > 0
    && el.scrollWidth > el.clientWidth + 1;
}).map(el => el.textContent.trim().slice(0, 80))"""
# the picture's cell numbers ("0.34"), row by row: [top, left, right] each
PICTURE_NUMBERS = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.textContent.includes("one head"));
  return [...plot.querySelectorAll('text')].filter(t => /^\\d\\.\\d\\d$/.test(t.textContent.trim()))
    .map(t => { const r = t.getBoundingClientRect(); return [Math.round(r.top), r.left, r.right]; });
}"""
# how many lines the text of each "head" cell of the page's st.table takes
HEAD_CELL_LINES = """() => {
  const table = document.querySelector('[data-testid="stTable"] table');
  const names = [...table.querySelectorAll('thead th')].map(th => th.textContent.trim());
  const col = names.indexOf('head');
  return [...table.querySelectorAll('tbody tr')].map(tr => {
    const tops = new Set(), text = document.createTreeWalker(tr.children[col], NodeFilter.SHOW_TEXT);
    for (let node; (node = text.nextNode()); ) {
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const box of range.getClientRects()) tops.add(Math.round(box.top));
    }
    return tops.size;
  });
}"""


@pytest.fixture(params=WIDTHS, ids=lambda w: f"{w}px")
def sized(request, browser, app_url: str) -> Iterator[tuple[object, int]]:
    """A fresh page at a projector's or a phone's width (the phone with touch, as a phone reports)."""
    width = request.param
    phone = width < 500
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=phone, has_touch=phone)
    try:
        yield context.new_page(), width
    finally:
        context.close()


def open_page(page, app_url: str, path: str) -> None:
    page.goto(f"{app_url}/{'' if path == DEFAULT_PAGE else path}", wait_until="domcontentloaded")
    wait_until_idle(page)
    if page.locator(DRAWN).count() == 0 and path not in ("any_model", "classroom", "workshop"):
        page.locator(DRAWN).first.wait_for(state="attached", timeout=60_000)


@pytest.mark.parametrize("path", PAGES)
def test_no_text_is_cut(sized, app_url: str, path: str) -> None:
    """Before: the translator's "Teacher-forced view on a reference translation" ended in "…" at 1440 px."""
    page, width = sized
    open_page(page, app_url, path)
    assert page.evaluate(CUT_TEXT) == [], f"/{path} at {width} px"


def test_the_start_pictures_numbers_stand_apart(sized, app_url: str) -> None:
    """Before: at 390 px a colour bar beside the map left 3 px between numbers ("0.340.000.00")."""
    page, width = sized
    open_page(page, app_url, DEFAULT_PAGE)
    numbers = page.evaluate(PICTURE_NUMBERS)
    assert len(numbers) == 36  # six words, every weight printed
    rows: dict[int, list[tuple[float, float]]] = {}
    for top, left, right in numbers:
        rows.setdefault(top, []).append((left, right))
    gaps = [b[0] - a[1] for row in rows.values() for a, b in zip(sorted(row), sorted(row)[1:])]
    assert len(rows) == 6 and min(gaps) >= 8, f"{width} px: numbers {min(gaps):.1f} px apart"


def test_the_nearest_heads_keep_their_names_on_one_line(sized, app_url: str) -> None:
    """Before: at 390 px each row of "Heads like this one" read "layer / 0 · / head / 0" down four lines."""
    page, width = sized
    open_page(page, app_url, "profiles")
    # the table comes after the page's first drawing: on a busy machine it was not there yet
    page.locator('[data-testid="stTable"] table').first.wait_for(state="attached", timeout=60_000)
    lines = page.evaluate(HEAD_CELL_LINES)
    assert len(lines) == 4 and set(lines) == {1}, f"{width} px: {lines}"  # the chosen head and its 3 nearest
