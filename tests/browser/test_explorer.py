"""The attention explorer in a real browser, on the harness app ``tests/browser/explorer_app.py``:
it renders; keys, buttons and hovering change the view without one websocket frame; hovering reports
the right tokens and weight; a click or Enter sends the cell to Python; markup tokens stay text; a new
sentence keeps the view and a reload restores it from the URL; the exported HTML works offline; a
weight is the same colour as in the matrix view."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import expect

from fixtures.explorer_runs import MARKUP, classifier_run, translator_run
from fixtures.server import streamlit_server
from model.core.results import attention_kind
from viz.common import WEIGHT_STOPS
from viz.explorer import display_token, explorer_html, explorer_payload
from viz.matrixview import asset as matrix_asset
from viz.matrixview import matrix_payload

from .conftest import ARTIFACTS, STARTUP_SECONDS

TIMEOUT_S = 30
ROOT = '[data-testid="attention-explorer"]'
CANVAS = ".ae-pane:not([hidden]) canvas.ae-base"  # the shown view's map


@pytest.fixture(scope="module")
def harness_url() -> Iterator[str]:
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(
        app="tests/browser/explorer_app.py",
        log_path=ARTIFACTS / "explorer-harness.log",
        startup_seconds=STARTUP_SECONDS,
    ) as server:
        yield server.url


@contextmanager
def fresh_page(browser, **context_args) -> Iterator[object]:
    """A page in a fresh context; every dialog (an injected alert would open one) is recorded and refused."""
    context = browser.new_context(**context_args)
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def xpage(browser) -> Iterator[object]:
    with fresh_page(browser, viewport={"width": 1300, "height": 1100}, accept_downloads=True) as page:
        yield page


def open_case(page, url: str, query: str = "case=translator") -> object:
    page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
    root = page.locator(ROOT)
    root.wait_for(timeout=TIMEOUT_S * 1000)
    until(page, lambda s: s is not None)
    return root


def state(page) -> dict | None:
    raw = page.locator(ROOT).get_attribute("data-state")
    return json.loads(raw) if raw else None


def until(page, check: Callable[[dict], bool], timeout: float = TIMEOUT_S) -> dict:
    """The explorer's state once ``check`` holds (polled), else the test fails with the last state."""
    deadline = time.monotonic() + timeout
    while True:
        s = state(page)
        if s is not None and check(s):
            return s
        if time.monotonic() > deadline:
            raise AssertionError(f"explorer state never matched; last: {s}")
        page.wait_for_timeout(50)


def layout(page, kind: str, timeout: float = TIMEOUT_S) -> dict:
    """Where the drawn view put its cells, once a view of ``kind`` (heat, lines, grid) is drawn."""
    root, deadline = page.locator(ROOT), time.monotonic() + timeout
    while True:
        lay = json.loads(root.get_attribute("data-layout") or "{}")
        if lay.get("type") == kind:
            return lay
        assert time.monotonic() < deadline, f"no {kind} view drawn: {lay}"
        page.wait_for_timeout(50)


def cell_point(page, q: int, k: int) -> tuple[float, float]:
    """Page coordinates of the centre of heatmap cell (q, k)."""
    lay = layout(page, "heat")
    box = page.locator(f"{ROOT} {CANVAS}").bounding_box()
    return box["x"] + lay["x0"] + (k + 0.5) * lay["c"], box["y"] + lay["y0"] + (q + 0.5) * lay["c"]


def url_state(page) -> dict[str, str]:
    query = parse_qs(urlparse(page.url).query)
    return {k: v[-1] for k, v in query.items() if k.startswith("t_")}


def test_renders_with_markup_tokens_as_text(xpage, harness_url: str) -> None:
    root = open_case(xpage, harness_url)
    assert state(xpage)["view"] == "heatmap"
    expect(root.locator(".ae-caption")).to_have_text("Encoder self-attention · L0 H0 · heatmap")
    assert [b.inner_text() for b in root.locator(".ae-kinds button").all()] == [
        "Encoder self-attention",
        "Decoder self-attention",
        "Cross-attention",
    ]
    expect(root.locator(".ae-axes")).to_have_text("rows: query = German · columns: key = German")
    expect(root.get_by_text(MARKUP, exact=True).first).to_be_visible()  # shown as its characters
    expect(root.get_by_text("⟨U+202E⟩evil", exact=True)).to_have_count(1)  # the bidi override as a code point
    assert xpage.locator("img[src=x]").count() == 0 and xpage.locator(f"{ROOT} img").count() == 0
    for tok in root.locator(".ae-strip .ae-tok").all():
        assert tok.get_attribute("dir") == "auto"
    assert root.locator(CANVAS).bounding_box()["width"] > 200
    xpage.wait_for_timeout(300)
    assert xpage.dialogs == []


def test_viewing_sends_no_websocket_frame(xpage, harness_url: str) -> None:
    frames: list[str] = []
    xpage.on("websocket", lambda ws: ws.on("framesent", lambda payload: frames.append("frame")))
    root = open_case(xpage, harness_url)
    xpage.wait_for_timeout(1000)  # the page's own start-up messages are over
    before = len(frames)
    root.focus()
    for key in ["]", "]", "PageDown", "[", "ArrowDown", "ArrowRight", "ArrowRight"]:
        xpage.keyboard.press(key)
    s = until(xpage, lambda s: (s["layer"], s["head"]) == (1, 1) and s["selected"] is not None)
    assert (s["selected"]["query"], s["selected"]["key"]) == (0, 2)  # the first arrow selects (0, 0), then they move
    root.get_by_role("button", name="Cross-attention").click()
    root.get_by_role("button", name="lines", exact=True).click()
    layout(xpage, "lines")
    box = root.locator(CANVAS).bounding_box()
    x, y = box["x"], box["y"]
    xpage.mouse.move(x + 40, y + 60)
    xpage.mouse.move(x + 200, y + 80)
    s = until(xpage, lambda s: s["kind"] == "cross" and s["view"] == "lines")
    assert (s["layer"], s["head"]) == (1, 1)  # a new kind keeps the layer and head where it has them
    expect(root.locator(".ae-caption")).to_have_text("Cross-attention · L1 H1 · lines")
    deadline = time.monotonic() + 5
    while url_state(xpage) != {"t_kind": "cross", "t_layer": "1", "t_head": "1", "t_view": "lines"}:
        assert time.monotonic() < deadline, f"the URL never followed: {xpage.url}"
        xpage.wait_for_timeout(50)
    xpage.wait_for_timeout(500)
    assert len(frames) == before, "viewing sent a message to the server"


@pytest.mark.parametrize("kind_index, button", [(0, None), (2, "Cross-attention")])
def test_hover_reports_tokens_and_weight(xpage, harness_url: str, kind_index: int, button: str | None) -> None:
    kinds = translator_run(src=8, tgt=8)  # what the harness shows
    root = open_case(xpage, harness_url)
    if button:
        root.get_by_role("button", name=button).click()
        until(xpage, lambda s: s["kind"] == kinds[kind_index].name)
    root.focus()
    xpage.keyboard.press("]")  # layer 0, head 1
    until(xpage, lambda s: s["head"] == 1)
    ak = kinds[kind_index]
    for q, k in [(0, 0), (2, 5), (7, 3), (5, 7)]:
        xpage.mouse.move(*cell_point(xpage, q, k))
        s = until(
            xpage,
            lambda s, q=q, k=k: s["hovered"] is not None and (s["hovered"]["query"], s["hovered"]["key"]) == (q, k),
        )
        hov = s["hovered"]
        assert hov["query_token"] == display_token(ak.queries[q]) and hov["key_token"] == display_token(ak.keys[k])
        assert hov["weight"] == pytest.approx(float(ak.weights[0, 1, q, k]), abs=1e-7) and hov["masked"] is False
        tip = root.locator(".ae-tip-main")
        expect(tip).to_have_text(f"{hov['query_token']} → {hov['key_token']}: {hov['weight']:.4f}")


def test_masked_cells_say_masked(xpage, harness_url: str) -> None:
    root = open_case(xpage, harness_url)
    root.get_by_role("button", name="Decoder self-attention").click()
    until(xpage, lambda s: s["kind"] == "decoder")
    xpage.mouse.move(*cell_point(xpage, 1, 6))  # above the diagonal: the future
    s = until(xpage, lambda s: s["hovered"] is not None and s["hovered"]["key"] == 6)
    assert s["hovered"]["masked"] is True and s["hovered"]["weight"] == 0
    expect(root.locator(".ae-tip-main")).to_contain_text(": masked")
    expect(root.locator(".ae-mask-note")).to_be_visible()


def test_click_and_enter_send_the_cell_to_python(xpage, harness_url: str) -> None:
    kinds = translator_run(src=8, tgt=8)
    root = open_case(xpage, harness_url)
    root.get_by_role("button", name="Cross-attention").click()
    root.focus()
    xpage.keyboard.press("PageDown")
    until(xpage, lambda s: s["kind"] == "cross" and s["layer"] == 1)
    xpage.mouse.click(*cell_point(xpage, 4, 2))
    s = until(xpage, lambda s: s["clicked"] is not None)
    expected = {"kind": "cross", "layer": 1, "head": 0, "query": 4, "key": 2}
    assert {k: s["clicked"][k] for k in expected} == expected
    clicked = xpage.get_by_text("clicked: {")
    clicked.wait_for(timeout=TIMEOUT_S * 1000)
    got = json.loads(clicked.inner_text().removeprefix("clicked: "))
    assert got == {**expected, "weight": pytest.approx(float(kinds[2].weights[1, 0, 4, 2]))}

    root.focus()  # the selection moves with the keys and Enter explains it
    for key in ["ArrowUp", "ArrowRight", "Enter"]:
        xpage.keyboard.press(key)
    xpage.get_by_text('"query": 3, "key": 3').wait_for(timeout=TIMEOUT_S * 1000)
    got = json.loads(xpage.get_by_text("clicked: {").inner_text().removeprefix("clicked: "))
    assert got["weight"] == pytest.approx(float(kinds[2].weights[1, 0, 3, 3]))
    assert state(xpage)["layer"] == 1 and state(xpage)["kind"] == "cross"  # the rerun kept the view


def test_a_new_sentence_keeps_the_view_and_a_reload_restores_it(xpage, harness_url: str) -> None:
    root = open_case(xpage, harness_url)
    root.get_by_role("button", name="Decoder self-attention").click()
    root.get_by_role("button", name="grid", exact=True).click()
    root.focus()
    for key in ["PageDown", "]", "]"]:
        xpage.keyboard.press(key)
    first = until(xpage, lambda s: (s["kind"], s["view"], s["layer"], s["head"]) == ("decoder", "grid", 1, 2))
    xpage.get_by_role("textbox", name="sentence").fill("5")
    xpage.keyboard.press("Enter")
    s = until(xpage, lambda s: s["digest"] != first["digest"])
    assert (s["kind"], s["view"], s["layer"], s["head"]) == ("decoder", "grid", 1, 2)
    expect(root.locator(".ae-strip .ae-tok[data-i]")).to_have_count(5)  # drawn on the next frame
    # Streamlit's server does not see the address bar change on a rerun (its frontend sends the query
    # string it loaded with); it does after a reload, and the explorer starts where it was
    xpage.wait_for_timeout(300)
    assert url_state(xpage) == {"t_kind": "decoder", "t_layer": "1", "t_head": "2", "t_view": "grid"}
    xpage.reload(wait_until="domcontentloaded")
    xpage.locator(ROOT).wait_for(timeout=TIMEOUT_S * 1000)
    s = until(xpage, lambda s: s is not None)
    assert (s["kind"], s["view"], s["layer"], s["head"]) == ("decoder", "grid", 1, 2)
    xpage.get_by_text('"t_layer": "1"').wait_for(timeout=TIMEOUT_S * 1000)  # the server saw it this time


def test_url_state_is_clamped_on_load(xpage, harness_url: str) -> None:
    open_case(xpage, harness_url, "case=translator&t_kind=cross&t_layer=9&t_head=-2&t_view=mean")
    s = state(xpage)
    assert (s["kind"], s["layer"], s["head"], s["view"]) == ("cross", 1, 0, "mean")


def test_classifier_rollout_lines_and_grid(xpage, harness_url: str) -> None:
    kinds = classifier_run()
    root = open_case(xpage, harness_url, "case=classifier")
    assert root.locator(".ae-kinds").is_hidden()  # one kind: no kind tabs
    root.get_by_role("button", name="rollout", exact=True).click()
    until(xpage, lambda s: s["view"] == "rollout")
    expect(root.locator(".ae-caption")).to_have_text(re.compile(r"· rollout over all layers$"))
    xpage.mouse.move(*cell_point(xpage, 2, 1))
    s = until(xpage, lambda s: s["hovered"] is not None)
    assert s["hovered"]["head"] is None
    masked_key = len(kinds[0].keys) - 1  # padding
    xpage.mouse.move(*cell_point(xpage, 0, masked_key))
    assert until(xpage, lambda s: s["hovered"]["key"] == masked_key)["hovered"]["masked"] is True

    root.get_by_role("button", name="lines", exact=True).click()
    root.get_by_role("button", name="head 2").click()  # a second head, in its own colour
    assert until(xpage, lambda s: s["view"] == "lines")["heads_shown"] == [0, 2]
    lay = layout(xpage, "lines")
    box = root.locator(CANVAS).bounding_box()
    xpage.mouse.move(box["x"] + lay["left"] - 10, box["y"] + lay["top"] + 3.5 * lay["rowH"])  # query token 3
    s = until(xpage, lambda s: s["token"] is not None)
    assert s["token"] == {"side": "query", "index": 3, "text": display_token(kinds[0].queries[3])}

    root.get_by_role("button", name="grid", exact=True).click()
    until(xpage, lambda s: s["view"] == "grid")
    lay = layout(xpage, "grid")
    box = root.locator(CANVAS).bounding_box()
    step = lay["thumb"] + lay["gap"]
    xpage.mouse.move(box["x"] + lay["x0"] + 3.5 * step, box["y"] + lay["y0"] + 1.5 * step)
    assert until(xpage, lambda s: s["peek"] is not None)["peek"] == {"layer": 1, "head": 3}
    expect(root.locator(".ae-peek")).to_be_visible()
    xpage.mouse.click(box["x"] + lay["x0"] + 3.5 * step, box["y"] + lay["y0"] + 1.5 * step)
    s = until(xpage, lambda s: s["view"] == "heatmap")
    assert (s["layer"], s["head"]) == (1, 3)


def text_and_masked_cell_colour(page) -> tuple[int, int]:
    """Brightness (sum of RGB) of the explorer's text and of a masked cell's pixel on its canvas."""
    root = page.locator(ROOT)
    text = root.evaluate("e => getComputedStyle(e).color")
    lay = layout(page, "heat")
    cell = root.locator(CANVAS).evaluate(
        f"c => Array.from(c.getContext('2d').getImageData({lay['x0'] + 7.5 * lay['c']}, {lay['y0'] + 0.5 * lay['c']}, 1, 1).data)"
    )
    return sum(int(v) for v in text[text.index("(") + 1 : text.index(")")].split(",")[:3]), sum(cell[:3])


def test_theme_follows_streamlit_live(xpage, harness_url: str) -> None:
    xpage.emulate_media(color_scheme="light")
    root = open_case(xpage, harness_url)
    root.get_by_role("button", name="Decoder self-attention").click()
    until(xpage, lambda s: s["kind"] == "decoder")
    xpage.wait_for_timeout(200)
    text, cell = text_and_masked_cell_colour(xpage)
    assert text < 300 and cell > 500  # dark text, light masked cells
    xpage.emulate_media(color_scheme="dark")  # Streamlit follows the system: the explorer redraws
    deadline = time.monotonic() + TIMEOUT_S
    while text_and_masked_cell_colour(xpage)[1] > 400:
        assert time.monotonic() < deadline, "the canvas kept the light theme"
        xpage.wait_for_timeout(100)
    assert text_and_masked_cell_colour(xpage)[0] > 600


def test_projector_mode_uses_larger_type(xpage, harness_url: str) -> None:
    root = open_case(xpage, harness_url, "case=translator&projector=1")
    assert "ae-projector" in root.get_attribute("class")
    assert float(root.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 18


def test_export_works_offline(xpage, harness_url: str, tmp_path) -> None:
    open_case(xpage, harness_url)
    with xpage.expect_download(timeout=TIMEOUT_S * 1000) as info:
        xpage.get_by_role("button", name="Download as interactive HTML").click()
    path = tmp_path / "explorer.html"
    path.write_text(info.value.path().read_text(encoding="utf-8"), encoding="utf-8")
    requests: list[str] = []

    def only_the_file(route) -> None:
        requests.append(route.request.url)
        route.continue_() if route.request.url.startswith("file:") else route.abort()

    # the offline page's own requests: the app's page stays open in the same context and may still ask for
    # its favicon, which a route on the whole context would count
    offline = xpage.context.new_page()
    offline.route("**/*", only_the_file)
    errors: list[str] = []
    offline.on("pageerror", lambda e: errors.append(str(e)))
    offline.goto(path.as_uri())
    root = offline.locator(ROOT)
    root.wait_for(timeout=TIMEOUT_S * 1000)
    until(offline, lambda s: s["view"] == "heatmap")
    offline.mouse.move(*cell_point(offline, 3, 2))
    s = until(offline, lambda s: s["hovered"] is not None)
    assert (s["hovered"]["query"], s["hovered"]["key"]) == (3, 2)
    root.focus()
    offline.keyboard.press("]")
    assert until(offline, lambda s: s["head"] == 1)["head"] == 1
    offline.mouse.click(*cell_point(offline, 3, 2))
    until(offline, lambda s: s["clicked"] is not None)
    expect(root.locator(".ae-status")).to_contain_text("needs the app")  # drawn on the next frame
    assert errors == [] and requests == [path.as_uri()]


def test_a_weight_is_one_colour_in_the_explorer_and_the_matrix_view(xpage, tmp_path) -> None:
    """Both components paint from viz.common.WEIGHT_STOPS: the same weight, the same RGB. The weights
    sit on the explorer's 256 colour steps (k / 255), where its colour table and the matrix view's
    interpolation meet exactly; the largest is 1, so the explorer's "0 – map max" scale is 0 – 1."""
    weights = np.array([0, 51, 102, 153, 204, 255], dtype=np.float32) / 255
    n = len(weights)
    kind = attention_kind("encoder", weights.reshape(1, 1, 1, n), ["q"], [f"k{j}" for j in range(n)])
    path = tmp_path / "colours.html"
    path.write_text(explorer_html(explorer_payload([kind])), encoding="utf-8")
    xpage.goto(path.as_uri())
    until(xpage, lambda s: s["view"] == "heatmap")
    lay = layout(xpage, "heat")
    points = [[lay["x0"] + (j + 0.5) * lay["c"], lay["y0"] + 0.5 * lay["c"]] for j in range(n)]
    explorer = (
        xpage.locator(ROOT)
        .locator(CANVAS)
        .evaluate(
            "(c, points) => points.map(([x, y]) => Array.from(c.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3)))",
            points,
        )
    )
    table = matrix_payload(weights.reshape(1, n), limits=(0.0, 1.0))
    matrix = xpage.evaluate(
        """async ([js, data]) => {
            const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));  // as Streamlit loads it
            const host = document.createElement("div");
            document.body.append(host);
            (await import(url)).default({ parentElement: host, data });
            return [...host.querySelectorAll("td")].map((td) => td.style.backgroundColor.match(/\\d+/g).map(Number));
        }""",
        [matrix_asset("matrixview.js"), table],
    )
    first, last = ([int(h[i : i + 2], 16) for i in (1, 3, 5)] for h in (WEIGHT_STOPS[0], WEIGHT_STOPS[-1]))
    assert (
        explorer == matrix and explorer[0] == first and explorer[-1] == last and len({tuple(c) for c in explorer}) == n
    )
