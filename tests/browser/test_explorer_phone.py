"""The explorer on a phone (390 px, touch) and on a desktop (1440 px, mouse), issue 43's screenshot review,
checked in Chromium on the exported page (the explorer's own script, no server):

- a touch screen reads help for a tap, not the keys a phone does not have (Arrow keys, Page Up, Enter);
- no view runs past the edge at 390 px, so no label is cut by it; a label cut to fit ends in "…" and
  hovering it gives the whole token as a title;
- a classroom question before its reveal (the choice row as ``pages.teach.room_parts`` sends it) shows
  no weight: no number in the status line, the tooltip or the legend, every cell the same colour.

The steppers' words ("L0 (L0–L1)") are checked in ``test_explorer_reading.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import numpy as np
import pytest
from playwright.sync_api import expect

from fixtures.explorer_runs import SENTENCE, classifier_run, generator_run
from model.core.results import attention_kind, causal
from model.lessons.classroom_kinds import choice_kinds
from model.lessons.questions import build_question
from viz.explorer import explorer_html, explorer_payload

ROOT = '[data-testid="attention-explorer"]'
CANVAS = ".ae-pane:not([hidden]) canvas.ae-base"  # the shown view's map
TIMEOUT_MS = 30_000
DEVICES = {
    "phone": dict(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True),
    "desktop": dict(viewport={"width": 1440, "height": 900}),
}
KEYBOARD_WORDS = ("Arrow", "Page Up", "Page Down", "Enter", "[ ]")
DECIMAL = re.compile(r"\d\.\d")  # a weight as the explorer writes one ("0.1667", "≈ 0.49")


@pytest.fixture(params=list(DEVICES))
def device(request, browser) -> Iterator[tuple[str, object]]:
    context = browser.new_context(**DEVICES[request.param])
    try:
        yield request.param, context
    finally:
        context.close()


def open_file(context, tmp_path, payload: dict, name: str = "view", *, as_in_the_app: bool = False):
    """The exported explorer of ``payload`` in a new page of ``context``, once it has drawn. ``as_in_the_app``:
    the page behaves as the app's element does (a click selects and explains the cell, with no note that
    the file cannot explain it), its message to Python going nowhere."""
    path = tmp_path / f"{name}.html"
    html = explorer_html(payload, name)
    if as_in_the_app:
        assert html.count('"standalone":true') == 1
        html = html.replace('"standalone":true', '"standalone":false')
    path.write_text(html, encoding="utf-8")
    page = context.new_page()
    page.goto(path.as_uri())
    page.locator(f"{ROOT} .ae-caption").wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function("() => document.querySelector('.ae-caption').textContent.length > 0", timeout=TIMEOUT_MS)
    return page


def text_of(page, selector: str) -> str:
    return page.locator(f"{ROOT} {selector}").inner_text()


def show_view(page, view: str) -> dict:
    """Switch to ``view`` and return the layout it drew."""
    page.locator(f'{ROOT} .ae-views button[data-view="{view}"]').click()
    page.wait_for_function(
        "v => { const r = document.querySelector('[data-testid=\"attention-explorer\"]');"
        " return JSON.parse(r.dataset.state).view === v && JSON.parse(r.dataset.layout).type; }",
        arg=view,
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(100)  # the frame that draws it
    return json.loads(page.locator(ROOT).get_attribute("data-layout"))


def test_the_help_fits_the_device(device, tmp_path) -> None:
    name, context = device
    page = open_file(context, tmp_path, explorer_payload(classifier_run()))
    touch = page.evaluate("() => matchMedia('(hover: none), (pointer: coarse)').matches")
    assert touch == (name == "phone")
    help_text, strip = text_of(page, ".ae-help"), text_of(page, ".ae-strip-label")
    if touch:
        assert help_text == "Tap a weight to explain it"
        assert not [w for w in KEYBOARD_WORDS if w in help_text]
        assert "tap a cell" in strip and "hover" not in strip  # nothing to hover on a touch screen
    else:
        assert help_text.startswith("Arrow keys move the cell") and "Enter or a click explains the weight" in help_text
        assert "hover a cell" in strip


def test_no_view_runs_past_the_edge(device, tmp_path) -> None:
    """At 390 px the lines view's key column ran 60 px past the stage ("<img src=", "Donaudamp" cut off at
    the edge), and the heatmap 8 px (it laid out in the root's width, padding included)."""
    _, context = device
    page = open_file(context, tmp_path, explorer_payload(classifier_run()))  # tokens of 14 characters and more
    for view in ("heatmap", "lines", "grid", "mean"):
        lay = show_view(page, view)
        stage = page.locator(f"{ROOT} .ae-stage").evaluate("s => [s.clientWidth, s.scrollWidth]")
        drawn = page.locator(f"{ROOT} {CANVAS}").evaluate("c => c.getBoundingClientRect().width")
        assert stage[1] <= stage[0] and drawn <= stage[0] and lay["W"] <= stage[0], (view, lay, stage, drawn)


def test_a_cut_label_gives_its_whole_token_on_hover(browser, tmp_path) -> None:
    context = browser.new_context(**DEVICES["desktop"])
    try:
        page = open_file(context, tmp_path, explorer_payload(classifier_run()))
        long = SENTENCE.index("Donaudampfschifffahrtsgesellschaft")  # shown as "Donaudampfsch…"
        lay = show_view(page, "heatmap")
        box = page.locator(f"{ROOT} {CANVAS}").bounding_box()
        page.mouse.move(box["x"] + lay["x0"] + (long + 0.5) * lay["c"], box["y"] + lay["y0"] - 8)  # its column label
        stage = page.locator(f"{ROOT} .ae-stage")
        page.wait_for_function("s => s.title.length > 0", arg=stage.element_handle(), timeout=TIMEOUT_MS)
        assert stage.get_attribute("title") == "Donaudampfschifffahrtsgesellschaft"
        page.mouse.move(box["x"] + lay["x0"] + lay["c"] / 2, box["y"] + lay["y0"] + lay["c"] / 2)  # a cell
        page.wait_for_function("s => s.title === ''", arg=stage.element_handle(), timeout=TIMEOUT_MS)
    finally:
        context.close()


def choice_payload() -> dict:
    """The explorer's data for a student's phone before the reveal, as the Classroom page builds it."""
    from pages.teach.room_parts import without_weights  # imports streamlit: only where it is used

    q = build_question("attend", 0, lambda task: None)  # "Which key does 1:is attend to most?"
    return {**explorer_payload(without_weights(choice_kinds(q)), title=q.title), "compact": True}


def test_a_question_shows_no_weight_before_the_reveal(device, tmp_path) -> None:
    """A student's phone showed "selected: is → dessert : 0.1667" and "0 → 0.1667" under the map: the
    choice row's stand-in weight, read as the model's."""
    name, context = device
    page = open_file(context, tmp_path, choice_payload(), as_in_the_app=True)
    root = page.locator(ROOT)
    lay = json.loads(root.get_attribute("data-layout"))
    box = root.locator(CANVAS).bounding_box()
    x, y = box["x"] + lay["x0"] + 4.5 * lay["c"], box["y"] + lay["y0"] + 0.5 * lay["c"]  # key 4: dessert
    if name == "phone":
        page.touchscreen.tap(x, y)
    else:
        page.mouse.move(x, y)
        tip = root.locator(".ae-tip")
        tip.wait_for(state="visible", timeout=TIMEOUT_MS)
        assert tip.inner_text().startswith("is → dessert") and not DECIMAL.search(tip.inner_text())
        page.mouse.click(x, y)
    page.wait_for_function(
        "() => /dessert/.test(document.querySelector('.ae-status-sel').textContent)", timeout=TIMEOUT_MS
    )
    assert text_of(page, ".ae-status-sel") == "selected: is → dessert"
    legend = text_of(page, ".ae-legend")
    assert "not shown" in legend and not root.locator(".ae-legend-bar").is_visible()
    assert not DECIMAL.search(root.inner_text()), root.inner_text()  # no weight anywhere in the explorer
    colours = root.locator(CANVAS).evaluate(
        """(c, lay) => {  // the colour at the middle of every key's cell
          const ctx = c.getContext('2d'), dpr = c.width / lay.W, out = new Set();
          for (let j = 0; j < 6; j++) {
            const px = ctx.getImageData((lay.x0 + (j + 0.5) * lay.c) * dpr, (lay.y0 + 0.2 * lay.c) * dpr, 1, 1).data;
            out.add(px.slice(0, 3).join(','));
          }
          return [...out];
        }""",
        lay,
    )
    assert colours == ["240,242,246"], colours  # every key alike, in the second background, no weight's colour
    state = json.loads(root.get_attribute("data-state"))
    assert state["selected"]["key_token"] == "dessert" and state["selected"]["weight"] is None  # NaN: not sent


def previous_token_payload(n: int = 24, head: int = 3) -> dict:
    """A causal run of ``n`` characters whose ``head`` (head 3: the palette's pale yellow, #F0E442) puts 0.9
    of each row on the character before and 0.1 on itself, the others a weight each on themselves; opened
    in the lines view on that head."""
    chars = list(("To be, or not to be, that is the question:\n" * 2)[:n])
    w = np.zeros((1, 4, n, n), dtype=np.float32)
    w[0, :, np.arange(n), np.arange(n)] = 1.0
    w[0, head, 1:, :] = 0.0
    w[0, head, np.arange(1, n), np.arange(n - 1)] = 0.9
    w[0, head, np.arange(1, n), np.arange(1, n)] = 0.1
    kind = attention_kind("decoder", w, chars, chars, mask=causal(n), title="Causal self-attention")
    return explorer_payload([kind], state={"view": "lines", "head": head})


# Down the column of pixels halfway between the lines view's columns, from the line that leaves query q
# for key q - 1 (the previous token): how many pixels in a row it covers there, and its colour as drawn
# over the page's white (the canvas is transparent where nothing is drawn)
PREVIOUS_LINE = """(c, [lay, q]) => {
  const ctx = c.getContext('2d'), dpr = c.width / lay.W, x = Math.round((lay.left + lay.right) / 2 * dpr);
  const mid = Math.round((lay.top + (q - 0.5) * lay.rowH + lay.rowH / 2) * dpr);
  const px = (y) => ctx.getImageData(x, y, 1, 1).data;
  let top = mid, bottom = mid;
  while (px(top - 1)[3] > 128) top--;
  while (px(bottom + 1)[3] > 128) bottom++;
  const [r, g, b, a] = px(mid), over = (v) => Math.round(v * a / 255 + 255 * (1 - a / 255));
  return { thick: (bottom - top + 1) / dpr, opaque: a, rgb: [over(r), over(g), over(b)] };
}"""


def contrast_on_white(rgb: list[int]) -> float:
    """WCAG's contrast ratio of a colour against white."""
    lin = [c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def test_the_lines_view_shows_a_previous_token_head(device, tmp_path) -> None:
    """Issue 51, item 8: the generator's previous-token head (head 3, pale yellow) drew as 1-px hairlines at
    1.3:1 on white, each falling 20 px over 420, so the offset-by-one stripe looked level. Now a strong
    weight draws a wide line in a colour that stands 3:1 from the page, and the columns stand five rows
    apart: the line to the token before falls a fifth of its run."""
    name, context = device
    page = open_file(context, tmp_path, previous_token_payload())
    page.wait_for_function(
        "() => JSON.parse(document.querySelector('[data-testid=\"attention-explorer\"]').dataset.layout).type === 'lines'",
        timeout=TIMEOUT_MS,
    )
    page.wait_for_timeout(100)  # the frame that draws it
    root = page.locator(ROOT)
    assert json.loads(root.get_attribute("data-state"))["heads_shown"] == [3]
    lay = json.loads(root.get_attribute("data-layout"))
    assert lay["rowH"] / lay["gap"] >= 0.15, lay  # before: 20.4 / 420 at 1440 px
    line = root.locator(CANVAS).evaluate(PREVIOUS_LINE, [lay, 6])
    assert line["thick"] >= 4, line  # before: 1 px
    assert contrast_on_white(line["rgb"]) >= 3, line  # before: 1.3:1
    swatch = root.locator('.ae-swatch[data-head="3"] .ae-dot').evaluate("d => getComputedStyle(d).backgroundColor")
    assert contrast_on_white([int(v) for v in re.findall(r"\d+", swatch)[:3]]) >= 3, swatch  # the key matches


SELECTED = f"() => JSON.parse(document.querySelector('{ROOT}').dataset.state).selected !== null"


def cell_centre(page, q: int, k: int) -> tuple[float, float]:
    """Page coordinates of the middle of cell (q, k) in the heatmap as it is drawn now (zoomed or not)."""
    lay = json.loads(page.locator(ROOT).get_attribute("data-layout"))
    box = page.locator(f"{ROOT} {CANVAS}").bounding_box()
    c = lay["c"]
    return box["x"] + lay["x0"] + (k - lay.get("j0", 0) + 0.5) * c, box["y"] + lay["y0"] + (
        q - lay.get("q0", 0) + 0.5
    ) * c


def test_a_tapped_cell_is_big_enough_to_tap(device, tmp_path) -> None:
    """Issue 51, item 9: at 390 px a map of 40 characters drew 6-px cells, a quarter of the 24 px a finger
    needs (WCAG 2.5.8). Now a tap on such a map zooms it around the tap to cells of 24 px and more and picks
    nothing; the next tap picks the cell under it, and "Show the whole map" goes back. A mouse picks at once."""
    name, context = device
    page = open_file(context, tmp_path, explorer_payload(generator_run(n=40, layers=1, heads=2)))
    root = page.locator(ROOT)
    before = json.loads(root.get_attribute("data-layout"))
    x, y = cell_centre(page, 30, 12)
    if name == "desktop":  # room for 16-px cells and a mouse: a click picks the cell
        page.mouse.click(x, y)
        page.wait_for_function(SELECTED)
        s = json.loads(root.get_attribute("data-state"))
        assert (s["selected"]["query"], s["selected"]["key"]) == (30, 12)
        return
    assert before["c"] < 24, before
    assert text_of(page, ".ae-help") == "Tap the map to zoom in, then tap a weight to explain it"
    page.touchscreen.tap(x, y)
    page.wait_for_function(f"() => JSON.parse(document.querySelector('{ROOT}').dataset.layout).zoomed === true")
    page.wait_for_timeout(100)  # the frame that draws it
    lay = json.loads(root.get_attribute("data-layout"))
    assert lay["c"] >= 24 and lay["q0"] <= 30 < lay["q0"] + lay["rows"] and lay["j0"] <= 12 < lay["j0"] + lay["cols"]
    assert json.loads(root.get_attribute("data-state"))["selected"] is None  # the zooming tap picked nothing
    stage = root.locator(".ae-stage").evaluate("s => [s.clientWidth, s.scrollWidth]")
    assert lay["W"] <= stage[0] and stage[1] <= stage[0], (lay, stage)  # the zoomed part fits the phone
    page.touchscreen.tap(*cell_centre(page, 31, 13))
    page.wait_for_function(SELECTED)
    s = json.loads(root.get_attribute("data-state"))
    assert (s["selected"]["query"], s["selected"]["key"]) == (31, 13)
    root.get_by_role("button", name="Show the whole map").tap()
    page.wait_for_function(f"() => !JSON.parse(document.querySelector('{ROOT}').dataset.layout).zoomed")
    assert json.loads(root.get_attribute("data-layout"))["c"] == before["c"]
    expect(root.get_by_role("button", name="Show the whole map")).to_be_hidden()
