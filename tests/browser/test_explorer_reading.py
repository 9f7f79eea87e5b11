"""The explorer's words and colours read right (issue 43, items 3, 8 and 10), checked in Chromium on the
exported page (the explorer's own script, no server): the steppers read "L0 (L0–L1)" (the part of the head's
one name, "L0 H2", that they move, then the names there are: never a count beside an index, which misreads;
issue 51 replaced "layer 0 (1st of 2)", a second way of naming a head), the caption names the head as every
page does ("L1 H2") and the mean view names no one head, a single map has no stepper and its caption does not
repeat the layer and head its
title names, a causal map's colour scale is not topped by its first row (which can only attend to itself,
so always holds 1), and a compact explorer (a classroom question) shows no tools around the map."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from fixtures.explorer_runs import translator_run
from model.core.results import attention_kind
from viz.explorer import explorer_html, explorer_payload

ROOT = '[data-testid="attention-explorer"]'
TIMEOUT_MS = 30_000


@pytest.fixture
def open_payload(browser, tmp_path):
    context = browser.new_context(viewport={"width": 1200, "height": 900})

    def show(payload: dict, name: str = "view"):
        path = tmp_path / f"{name}.html"
        path.write_text(explorer_html(payload, "reading"), encoding="utf-8")
        page = context.new_page()
        page.goto(path.as_uri())
        page.locator(f"{ROOT} .ae-caption").wait_for(timeout=TIMEOUT_MS)
        page.wait_for_function("() => document.querySelector('.ae-caption').textContent.length > 0", timeout=TIMEOUT_MS)
        return page

    yield show
    context.close()


def visible_texts(page, selector: str) -> list[str]:
    return [e.inner_text() for e in page.locator(f"{ROOT} {selector}").all() if e.is_visible()]


def settled(page, read, want, timeout_s: float = 10.0):
    """``read()`` once it equals ``want`` (the explorer redraws on the next animation frame after a click),
    else its last value, for the assertion to show."""
    deadline = time.monotonic() + timeout_s
    while (got := read()) != want and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    return got


def causal_map() -> np.ndarray:
    """Two layers of one head over 5 tokens: row 0 holds 1 on itself, every other row
    spreads its weight."""
    rng = np.random.default_rng(0)
    w = np.zeros((2, 1, 5, 5), dtype=np.float32)
    for layer in range(2):
        w[layer, 0, 0, 0] = 1.0
        for q in range(1, 5):
            row = rng.uniform(0.5, 1.0, q + 1)
            w[layer, 0, q, : q + 1] = row / row.sum()
    return w


def test_steppers_and_caption_name_the_head_one_way(open_payload):
    """Not "layer 0 of 2" (issue 43), nor "head 2 (3rd of 6)" beside "layer 3 · head 2" (issue 51): the head's
    one name, L1 H1, in the caption and its parts in the steppers, with the names there are."""
    page = open_payload(explorer_payload(translator_run(src=5, tgt=5)))  # 2 layers × 3 heads
    assert visible_texts(page, ".ae-step-value") == ["L0 (L0–L1)", "H0 (H0–H2)"]
    page.locator(f'{ROOT} button[aria-label="next head"]').click()
    page.locator(f'{ROOT} button[aria-label="next layer"]').click()
    want = ["L1 (L0–L1)", "H1 (H0–H2)"]
    assert settled(page, lambda: visible_texts(page, ".ae-step-value"), want) == want
    caption = page.locator(f"{ROOT} .ae-caption").inner_text()
    assert caption.endswith(" · L1 H1 · heatmap") and "layer" not in caption and "head " not in caption


def test_the_mean_view_names_every_head_of_its_layer(open_payload):
    """Issue 51, item 7: the Mean view's caption named one head ("layer 1 · head 1 · mean")."""
    page = open_payload(explorer_payload(translator_run(src=5, tgt=5), state={"view": "mean", "layer": 1, "head": 2}))
    caption = lambda: page.locator(f"{ROOT} .ae-caption").inner_text()  # noqa: E731
    assert settled(page, caption, "Encoder self-attention · mean of all 3 heads, layer 1").endswith(
        " · mean of all 3 heads, layer 1"
    )
    assert "H2" not in caption() and "head 2" not in caption()


def test_a_stepper_with_many_heads(open_payload):
    w = np.full((1, 24, 2, 2), 0.5, dtype=np.float32)
    kind = attention_kind("encoder", w, list("ab"), list("ab"), title="Encoder self-attention")
    page = open_payload(explorer_payload([kind], state={"head": 20}))
    assert visible_texts(page, ".ae-step-value") == ["H20 (H0–H23)"]  # one layer: no layer stepper


def test_one_map_has_no_stepper_and_says_its_head_once(open_payload):
    w = np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32)
    one = attention_kind("encoder", w, list("abc"), list("abc"), title="Encoder self-attention, L1 H2")
    page = open_payload(explorer_payload([one]))
    assert visible_texts(page, ".ae-step-value") == []  # no "layer 0 / 0"
    caption = page.locator(f"{ROOT} .ae-caption").inner_text()
    assert caption == "Encoder self-attention, L1 H2 · heatmap"
    assert caption.count("L1") == 1


def test_a_causal_maps_colour_scale_is_not_topped_by_its_first_row(open_payload):
    w = causal_map()
    mask = np.tril(np.ones((5, 5), dtype=bool))
    kind = attention_kind("decoder", w, list("abcde"), list("abcde"), mask=mask, title="Decoder self-attention")
    page = open_payload(explorer_payload([kind]))
    legend = page.locator(f"{ROOT} .ae-legend").inner_text()
    top = float(w[0, 0, 1:].max())
    assert f"{top:.4f}" in legend and "not counting rows with one key" in legend, legend
    assert top < 0.99


def test_a_compact_explorer_shows_no_tools(open_payload):
    payload = explorer_payload(translator_run(src=5, tgt=5))
    full = open_payload(payload, "full")
    assert visible_texts(full, ".ae-views button") and visible_texts(full, ".ae-scale")
    page = open_payload({**payload, "compact": True}, "compact")
    assert visible_texts(page, ".ae-views button") == []
    assert visible_texts(page, ".ae-scale") == [] and visible_texts(page, ".ae-svg") == []
    assert visible_texts(page, ".ae-help") == []
    assert visible_texts(page, ".ae-kinds button")  # the kinds stay: a reveal's row and whole map


def test_a_pair_opens_on_one_scale_and_a_tab_keeps_the_head(open_payload):
    """A minimal pair's explorer (header scale "abs"): 0 – 1 for A and B alike, and switching from A's tab
    to B's keeps the layer and head (one control for both)."""
    a, b = translator_run(src=5, tgt=5)[:1], translator_run(src=6, tgt=6)[:1]
    kinds = [replace(a[0], name="A_encoder", title="A: encoder"), replace(b[0], name="B_encoder", title="B: encoder")]
    page = open_payload({**explorer_payload(kinds), "scale": "abs"})
    assert visible_texts(page, ".ae-scale") == ["colour: 0 – 1"]
    assert page.locator(f"{ROOT} .ae-legend").inner_text().startswith("0 → 1")
    page.locator(f'{ROOT} button[aria-label="next layer"]').click()
    page.locator(f'{ROOT} button[aria-label="next head"]').click()
    caption = lambda: page.locator(f"{ROOT} .ae-caption").inner_text()  # noqa: E731
    assert settled(page, caption, "A: encoder · L1 H1 · heatmap") == "A: encoder · L1 H1 · heatmap"
    page.locator(f'{ROOT} .ae-kinds button[data-kind="B_encoder"]').click()
    assert settled(page, caption, "B: encoder · L1 H1 · heatmap") == "B: encoder · L1 H1 · heatmap"
    assert visible_texts(page, ".ae-scale") == ["colour: 0 – 1"]
