"""Issue 43's screenshot review, in a real browser at 1440 and 390 px: the head finder's point names never
overlap and a score with no fixed range keeps 0 on its axis, its lines by decile fit a phone in three
columns (each line the link that opens it), and a student's own results in the classroom are not cut at a
phone's right edge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from fixtures.server import redis_server, streamlit_server
from model.core.checkpoint import default_dir, load_checkpoint
from model.lessons.questions import build_question
from rooms.store import REDIS_ENV

from .conftest import ARTIFACTS, STARTUP_SECONDS
from .test_explorer import ROOT as EXPLORER
from .test_explorer import until
from .test_page_fit import open_page, sized  # noqa: F401 - sized: a page at 1440 px, then at 390 px
from .test_pages import wait_until_idle

# the scatter's point names, each as its box on the page: [name, left, top, right, bottom]
NAME_BOXES = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.textContent.includes('Every head'));
  return [...plot.querySelectorAll('.textpoint text')].filter(t => t.textContent.trim()).map(t => {
    const r = t.getBoundingClientRect(); return [t.textContent, r.left, r.top, r.right, r.bottom]; });
}"""
AXIS_RANGES = """() => {
  const plot = [...document.querySelectorAll('.js-plotly-plot')].find(p => p.textContent.includes('Every head'));
  return [plot._fullLayout.xaxis.range, plot._fullLayout.yaxis.range];
}"""
# the table (in the main area) whose header has ``needle``: its columns' titles and widths, each body
# row's texts and whether each of its cells is a link alone, the table's right edge, width and scroll width
TABLE = """(needle) => {
  const table = [...document.querySelectorAll('[data-testid="stMain"] table')]
    .find(t => t.querySelector('thead').textContent.includes(needle));
  const box = table.getBoundingClientRect();
  const rows = [...table.querySelectorAll('tbody tr')];
  return {
    heads: [...table.querySelectorAll('thead th')].map(th => [th.textContent.trim(), th.getBoundingClientRect().width]),
    cells: rows.map(tr => [...tr.children].map(td => td.textContent.trim())),
    links: rows.map(tr => [...tr.children].map(td => td.querySelector('a') !== null && td.children.length === 1)),
    right: box.right, width: box.width, scroll: table.scrollWidth, viewport: window.innerWidth,
  };
}"""


def overlapping(boxes: list[list]) -> list[tuple[str, str]]:
    """The pairs of names whose boxes share more than a pixel each way."""
    return [
        (a[0], b[0])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if min(a[3], b[3]) - max(a[1], b[1]) > 1 and min(a[4], b[4]) - max(a[2], b[2]) > 1
    ]


def test_the_scatters_names_never_overlap(sized, app_url: str) -> None:  # noqa: F811
    """Before: every head of the classifier named, and four of them at 0.03 read "L1L0H0H1"."""
    page, width = sized
    open_page(page, app_url, "heads")
    boxes = page.evaluate(NAME_BOXES)
    assert boxes and not overlapping(boxes), f"{width} px: {boxes}"


def test_a_score_with_no_fixed_range_keeps_zero_on_its_axis(page, app_url: str) -> None:
    """Before: entropy and distance took Plotly's range, fitted to their spread, so a hair looked like a
    trend; now both axes start at 0."""
    open_page(page, app_url, "heads?heads_x=entropy&heads_y=distance")
    (x_low, x_high), (y_low, y_high) = page.evaluate(AXIS_RANGES)
    assert x_low <= 0 < x_high and y_low <= 0 < y_high, page.evaluate(AXIS_RANGES)


def test_the_lines_by_decile_fit_a_phone(sized, app_url: str) -> None:  # noqa: F811
    """Before: four columns at 390 px, one holding only "open in the explorer" on every row, which left
    each line 130 px and ran the table 2,400 px tall."""
    page, width = sized
    open_page(page, app_url, "heads")
    table = page.evaluate(TABLE, "explorer")
    (_, line_width), *_ = [h for h in table["heads"] if h[0].startswith("line")]
    assert len(table["heads"]) == 3 and line_width >= 0.6 * table["width"], f"{width} px: {table['heads']}"
    assert table["cells"] and all(row[-1] for row in table["links"])  # each line is its own link
    assert table["right"] <= table["viewport"] and table["scroll"] <= table["width"] + 1


@pytest.fixture(scope="module")
def room_server() -> Iterator[tuple[str, str, str]]:
    """An app that keeps its rooms in a throw-away Redis, and a room there whose student, Zoë, answered four
    revealed rounds of four kinds (the ablation's answers are the longest): (app URL, code, member)."""
    from rooms.redis_store import RedisStore

    with ExitStack() as stack:
        try:
            url = stack.enter_context(redis_server())
        except RuntimeError as e:
            pytest.skip(f"no redis-server: {e} (`make redis-server` installs it as root)")
        store, loaded = RedisStore.from_url(url), {}
        room = store.create_room()
        member, _ = store.join(room.code, "Zoë")
        checkpoint = lambda task: loaded.setdefault(task, load_checkpoint(default_dir(task)))  # noqa: E731
        for kind, number, choice in (("attend", 0, 0), ("shape", 1, 1), ("previous", 0, 2), ("ablation", 3, 0)):
            store.set_question(room.code, room.secret, build_question(kind, number, checkpoint))
            store.answer(room.code, member, store.get(room.code).round, choice)
            store.reveal(room.code, room.secret)
        ARTIFACTS.mkdir(exist_ok=True)
        log = ARTIFACTS / "streamlit-rooms.log"
        app = stack.enter_context(streamlit_server(env={REDIS_ENV: url}, log_path=log, startup_seconds=STARTUP_SECONDS))
        yield app.url, room.code, member


@pytest.mark.parametrize("width", [390, 360])
def test_a_students_results_fit_a_phone(browser, room_server, width: int) -> None:
    """Before: five columns (round, the question's title, yours, answer, points) ran 438 px wide on a 390-px
    phone, the points cut off at the right edge."""
    url, code, member = room_server
    context = browser.new_context(viewport={"width": width, "height": 800}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{url}/classroom?room={code}&room_member={member}", wait_until="domcontentloaded")
        wait_until_idle(page)
        page.get_by_text("Your results:").wait_for()
        table = page.evaluate(TABLE, "round")
        assert [h[0] for h in table["heads"]][0] == "round" and len(table["cells"]) == 4
        assert table["right"] <= table["viewport"] and table["scroll"] <= table["width"] + 1, f"{width} px: {table}"
    finally:
        context.close()


# every line of the explanation's chart titles (the charts whose title names the clicked cell or its head's
# output), as [text, left, right] on the page, with each chart's own [left, right]
EXPLAIN_TITLES = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
  const title = plot.querySelector('.infolayer .gtitle');
  if (!title || !/→ key |output for /.test(title.textContent)) return [];
  const box = plot.getBoundingClientRect();
  const lines = [...title.querySelectorAll('tspan.line')];
  return (lines.length ? lines : [title]).map(t => {
    const r = t.getBoundingClientRect();
    return [t.textContent, r.left, r.right, box.left, box.right];
  });
})"""


# the explorer's state: whether a cell was clicked, and whether its map is zoomed (read through the locator:
# the explorer lives in its component's shadow root, out of document.querySelector's reach)
TAPPED = """r => [JSON.parse(r.dataset.state || '{}').clicked != null, !!JSON.parse(r.dataset.layout || '{}').zoomed]"""


def tap_cell(page, q: int, k: int) -> None:
    """Tap the explorer's cell (q, k) until it is clicked: where its cells are too small for a finger the first
    tap zooms the map (and picks nothing), so it is tapped again where it is drawn then."""
    for _ in range(4):
        wait_until_idle(page)
        lay = json.loads(page.locator(EXPLORER).get_attribute("data-layout"))
        canvas = page.locator(f"{EXPLORER} .ae-pane:not([hidden]) canvas.ae-base")
        canvas.scroll_into_view_if_needed()
        box, c = canvas.bounding_box(), lay["c"]
        x = box["x"] + lay["x0"] + (k - lay.get("j0", 0) + 0.5) * c
        page.touchscreen.tap(x, box["y"] + lay["y0"] + (q - lay.get("q0", 0) + 0.5) * c)
        for _ in range(50):  # the tap's answer: a click, or the map zoomed
            now = page.locator(EXPLORER).evaluate(TAPPED)
            if now[0] or now[1] != lay.get("zoomed", False):
                break
            page.wait_for_timeout(100)
        if now[0]:
            return
    raise AssertionError(f"four taps did not pick cell ({q}, {k})")


def test_the_explanations_chart_titles_fit_a_phone(browser, app_url: str) -> None:
    """Issue 51, item 9: at 390 px the explanation's titles ran off the chart ("cross L1 H2 · query 0:a
    (input: <sos>) → key 3:fährt" and "… then a last linear layer combines the heads (256 → 256)" cut at
    the right edge). Now every title line of the three charts lies within its chart."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        open_page(page, app_url, "translator")
        page.locator(EXPLORER).get_by_role("button", name="Cross-attention").tap()
        until(page, lambda s: s["kind"] == "cross")
        tap_cell(page, 2, 1)
        page.get_by_role("heading", name=re.compile(r"^How .* computed")).first.wait_for(timeout=60_000)
        page.wait_for_function(f"() => ({EXPLAIN_TITLES})().length >= 6", timeout=60_000)
        lines = page.evaluate(EXPLAIN_TITLES)
        cut = [line for line in lines if line[1] < line[3] - 1 or line[2] > line[4] + 1]
        assert not cut, cut
    finally:
        context.close()
