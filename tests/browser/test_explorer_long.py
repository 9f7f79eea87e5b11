"""The explorer at a model's full context, in a real browser: 12 layers × 12 heads at 1,024 tokens
(151 M weights, sent as one byte each) on the harness tests/browser/explorer_long_app.py. The state
says 1,024 queries and keys; switching head and layer sends nothing to the server; hovering a known
cell reads its weight within the q8 error; a pixel of the heatmap has that weight's colour; the grid
marks grouped-query heads and the heatmap hatches cells outside a sliding window; the lines view keeps
each row's largest weights, whose mass plus the rest's is the row's."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from fixtures.long_runs import long_run
from fixtures.server import streamlit_server
from viz.common import WEIGHT_STOPS

from .conftest import ARTIFACTS, STARTUP_SECONDS
from .test_explorer import fresh_page
from .test_explorer import layout as explorer_layout
from .test_explorer import until as explorer_until

TIMEOUT_S = 60
ROOT = '[data-testid="attention-explorer"]'
CANVAS = f"{ROOT} .ae-pane:not([hidden]) canvas.ae-base"
N = 1024


@pytest.fixture(scope="module")
def long_url() -> Iterator[str]:
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(
        app="tests/browser/explorer_long_app.py",
        log_path=ARTIFACTS / "explorer-long-harness.log",
        startup_seconds=STARTUP_SECONDS,
    ) as server:
        yield server.url


@pytest.fixture(scope="module")
def weights() -> np.ndarray:
    """The harness's run at 1,024 tokens (its seed is the token count), to check the browser against."""
    return long_run(N, seed=N)[0].weights


@pytest.fixture
def lpage(browser) -> Iterator[object]:
    with fresh_page(browser, viewport={"width": 1400, "height": 2000}) as page:  # a 1,024-row map fits whole
        yield page


def until(page, check: Callable[[dict], bool], timeout: float = TIMEOUT_S) -> dict:
    return explorer_until(page, check, timeout)


def layout(page, kind: str) -> dict:
    return explorer_layout(page, kind, TIMEOUT_S)


def open_long(page, url: str, query: str = "") -> object:
    page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
    root = page.locator(ROOT)
    root.wait_for(timeout=TIMEOUT_S * 1000)
    until(page, lambda s: s is not None)
    return root


def cell_point(page, q: int, k: int) -> tuple[float, float]:
    """Page coordinates of the centre of heatmap cell (q, k)."""
    lay = layout(page, "heat")
    canvas = page.locator(CANVAS)
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    return box["x"] + lay["x0"] + (k + 0.5) * lay["c"], box["y"] + lay["y0"] + (q + 0.5) * lay["c"]


def block(page, lay: dict, q: int, k: int, n: int = 16) -> list[int]:
    """The heatmap's pixels over cells (q..q+n, k..k+n), as RGBA bytes."""
    return page.locator(CANVAS).evaluate(
        f"c => Array.from(c.getContext('2d').getImageData(({lay['x0']} + {k} * {lay['c']}) * devicePixelRatio, "
        f"({lay['y0']} + {q} * {lay['c']}) * devicePixelRatio, {n} * {lay['c']} * devicePixelRatio, "
        f"{n} * {lay['c']} * devicePixelRatio).data)"
    )


def until_drawn(page, check: Callable[[], bool], timeout: float = TIMEOUT_S) -> None:
    """Wait until ``check()`` holds of the painted canvas."""
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, "the heatmap was not painted as expected"
        page.wait_for_timeout(50)


def colour(w: float, top: float) -> tuple[int, int, int]:
    """The colour the explorer gives weight ``w`` on a 0..``top`` scale (viz.common.WEIGHT_STOPS, 256 steps)."""
    rgb = [tuple(int(s[i : i + 2], 16) for i in (1, 3, 5)) for s in WEIGHT_STOPS]
    idx = min(255, max(0, round(w / top * 255)))
    t = idx / 255 * (len(rgb) - 1)
    j = min(int(t), len(rgb) - 2)
    f = t - j
    return tuple(round(rgb[j][c] + f * (rgb[j + 1][c] - rgb[j][c])) for c in range(3))


def test_full_context_state_hover_and_colour(lpage, long_url: str, weights: np.ndarray) -> None:
    root = open_long(lpage, long_url)
    s = until(lpage, lambda s: s["queries"] == N)
    assert (s["queries"], s["keys"], s["encoding"]) == (N, N, "q8")
    lay = layout(lpage, "heat")
    assert lay["c"] >= 1 and lay["W"] < 1400  # one pixel a cell at least, and the map fits the page

    q, k = 700, 3  # a known cell, far down the map
    lpage.mouse.move(*cell_point(lpage, q, k))
    hov = until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["query"] == q)["hovered"]
    assert hov["key"] == k and hov["approx"] is True and hov["masked"] is False
    row = weights[0, 0, q]
    assert abs(hov["weight"] - row[k]) <= row.max() / 510 + 1e-7  # the stated q8 error
    assert "≈" in root.locator(".ae-tip-main").inner_text()
    lpage.mouse.move(*cell_point(lpage, 5, 900))
    masked = until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["key"] == 900)["hovered"]
    assert masked["masked"] is True and masked["weight"] == 0

    # the pixel at the centre of cell (q, k) has the colour of its weight on the map's 0..max scale
    lpage.mouse.move(0, 0)
    pixel = lpage.locator(CANVAS).evaluate(
        f"c => Array.from(c.getContext('2d').getImageData(({lay['x0']} + {k + 0.5} * {lay['c']}) * devicePixelRatio, "
        f"({lay['y0']} + {q + 0.5} * {lay['c']}) * devicePixelRatio, 1, 1).data)"
    )
    want = colour(float(row[k]), float(weights[0, 0].max()))
    assert max(abs(a - b) for a, b in zip(pixel[:3], want)) <= 3, (pixel, want)
    assert lpage.dialogs == [] and lpage.locator(f"{ROOT} img").count() == 0


def test_switching_head_and_layer_sends_nothing(lpage, long_url: str, weights: np.ndarray) -> None:
    frames: list[int] = []
    lpage.on("websocket", lambda ws: ws.on("framesent", lambda payload: frames.append(len(payload))))
    root = open_long(lpage, long_url)
    until(lpage, lambda s: s["queries"] == N)
    lpage.wait_for_timeout(1000)  # the page's own start-up messages are over
    before = len(frames)
    root.focus()
    for key in ["]", "]", "PageDown", "PageDown", "PageDown", "["]:
        lpage.keyboard.press(key)
    s = until(lpage, lambda s: (s["layer"], s["head"]) == (3, 1))
    assert (s["queries"], s["keys"]) == (N, N)
    for view in ["grid", "lines", "mean", "heatmap"]:
        root.get_by_role("button", name=view, exact=True).click()
        until(lpage, lambda s, v=view: s["view"] == v)
    lay = layout(lpage, "heat")
    q, k = 1000, 998
    lpage.mouse.move(*cell_point(lpage, q, k))
    hov = until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["query"] == q)["hovered"]
    row = weights[3, 1, q]
    assert hov["head"] == 1 and abs(hov["weight"] - row[k]) <= row.max() / 510 + 1e-7
    lpage.wait_for_timeout(300)
    assert len(frames) == before, f"{len(frames) - before} websocket frame(s) sent while only viewing"
    assert lay["c"] >= 1


def test_a_rows_largest_keys_and_the_rest(lpage, long_url: str, weights: np.ndarray) -> None:
    """A 1,024-key row reads out as its largest weights and the rest's mass (the token strip), and the
    lines view draws a pixel a token, each row thinned to its largest weights."""
    root = open_long(lpage, long_url)
    until(lpage, lambda s: s["queries"] == N)
    q = 900
    lpage.mouse.move(*cell_point(lpage, q, 10))
    until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["query"] == q)
    spans = root.locator(".ae-strip .ae-tok[data-w]")
    keys = [int(i) for i in spans.evaluate_all("els => els.map((e) => e.dataset.i)")]
    shown = np.array(spans.evaluate_all("els => els.map((e) => Number(e.dataset.w))"))
    rest = float(root.locator(".ae-strip .ae-rest").get_attribute("data-rest"))
    row = weights[0, 0, q]
    err = row.max() / 510 + 1e-7  # the q8 error of one weight
    assert 0 < len(keys) <= 16 and keys == sorted(keys)  # in key order
    assert np.all(np.abs(shown - row[keys]) <= err)
    assert row[np.setdiff1d(np.arange(N), keys)].max() <= row[keys].min() + 2 * err  # the largest ones
    assert abs(shown.sum() + rest - 1.0) <= (q + 1) * err  # kept + rest is the whole row
    assert abs(rest - (1 - row[keys].sum())) <= (q + 1) * err

    root.get_by_role("button", name="lines", exact=True).click()
    until(lpage, lambda s: s["view"] == "lines")
    lay = layout(lpage, "lines")
    assert lay["rowH"] <= 1.5 and lay["H"] < 1200  # 1,024 rows fit one screen


def test_grouped_query_heads_and_sliding_window(lpage, long_url: str) -> None:
    root = open_long(lpage, long_url, "n=300&layers=4&heads=8&kv=2&window=64")
    s = until(lpage, lambda s: s["queries"] == 300)
    assert s["kv_heads"] == 2
    lay = layout(lpage, "heat")
    lpage.mouse.move(*cell_point(lpage, 200, 100))  # 100 keys back: outside the window in layer 0
    hov = until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["key"] == 100)["hovered"]
    assert hov["masked"] is True
    assert "key/value head 0, shared by heads 0–3" in root.locator(".ae-tip-sub").inner_text()
    lpage.mouse.move(0, 0)
    windowed = block(lpage, lay, 150, 60)  # rows 150-165, keys 60-75: outside the window of 64
    root.focus()
    lpage.keyboard.press("PageDown")  # layer 1 attends to every earlier key
    until(lpage, lambda s: s["layer"] == 1)
    # no hatch on layer 1: the hatch is the layer's, not the kind's (the state may change a frame before the paint)
    until_drawn(lpage, lambda: block(lpage, lay, 150, 60) != windowed)
    lpage.mouse.move(*cell_point(lpage, 200, 100))
    hov = until(lpage, lambda s: s["hovered"] is not None and s["hovered"]["key"] == 100)["hovered"]
    assert hov["masked"] is False
    lpage.mouse.move(0, 0)
    root.focus()
    lpage.keyboard.press("PageUp")  # back on layer 0: its hatch again (kept, not rebuilt, on a head switch)
    until(lpage, lambda s: s["layer"] == 0)
    until_drawn(lpage, lambda: block(lpage, lay, 150, 60) == windowed)
    lpage.keyboard.press("PageDown")
    until(lpage, lambda s: s["layer"] == 1)
    root.get_by_role("button", name="grid", exact=True).click()
    grid = layout(lpage, "grid")
    assert grid["group"] == 4
    lpage.locator(f"{ROOT}").screenshot(path=str(ARTIFACTS / "explorer-long-grid.png"))
    assert lay["c"] >= 1
