"""The explorer's words and colours read right (issue 43, items 3, 8 and 10), checked in Chromium on the
exported page (the explorer's own script, no server): the steppers read "layer 0 (1st of 2)" (the name,
from 0, as captions and tables name heads; then which of how many, in words that cannot be read as the
index), a single map has no stepper and its caption does not repeat the layer and head its
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


def test_steppers_count_the_layers_and_heads(open_payload):
    """Not "layer 0 of 2" (issue 43): an index from 0 beside a count reads as none of two."""
    page = open_payload(explorer_payload(translator_run(src=5, tgt=5)))  # 2 layers × 3 heads
    assert visible_texts(page, ".ae-step-value") == ["layer 0 (1st of 2)", "head 0 (1st of 3)"]
    page.locator(f'{ROOT} button[aria-label="next head"]').click()
    page.locator(f'{ROOT} button[aria-label="next layer"]').click()
    want = ["layer 1 (2nd of 2)", "head 1 (2nd of 3)"]
    assert settled(page, lambda: visible_texts(page, ".ae-step-value"), want) == want


@pytest.mark.parametrize(("head", "words"), [(2, "3rd"), (10, "11th"), (11, "12th"), (12, "13th"), (20, "21st")])
def test_a_stepper_says_which_of_how_many_in_words(open_payload, head: int, words: str):
    w = np.full((1, 24, 2, 2), 0.5, dtype=np.float32)
    kind = attention_kind("encoder", w, list("ab"), list("ab"), title="Encoder self-attention")
    page = open_payload(explorer_payload([kind], state={"head": head}))
    assert visible_texts(page, ".ae-step-value") == [f"head {head} ({words} of 24)"]  # one layer: no layer stepper


def test_one_map_has_no_stepper_and_says_its_head_once(open_payload):
    w = np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32)
    one = attention_kind("encoder", w, list("abc"), list("abc"), title="Encoder self-attention, layer 1 · head 2")
    page = open_payload(explorer_payload([one]))
    assert visible_texts(page, ".ae-step-value") == []  # no "layer 0 / 0"
    caption = page.locator(f"{ROOT} .ae-caption").inner_text()
    assert caption == "Encoder self-attention, layer 1 · head 2 · heatmap"
    assert caption.count("layer") == 1


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
    assert (
        settled(page, caption, "A: encoder · layer 1 · head 1 · heatmap") == "A: encoder · layer 1 · head 1 · heatmap"
    )
    page.locator(f'{ROOT} .ae-kinds button[data-kind="B_encoder"]').click()
    assert (
        settled(page, caption, "B: encoder · layer 1 · head 1 · heatmap") == "B: encoder · layer 1 · head 1 · heatmap"
    )
    assert visible_texts(page, ".ae-scale") == ["colour: 0 – 1"]
