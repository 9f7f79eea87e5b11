"""The explanation's chart titles fit a phone (issue 51, item 9), checked on the figures' JSON: at 390 px a
chart is 358 px wide, and Plotly neither wraps a title nor shrinks it, so the titles ran past the right edge
("softmax over the row: weight 0.0128 (the map: 0.0128)" drew 384 px). The browser's own measure of them is
tests/browser/test_page_phone_fit.py."""

from __future__ import annotations

import html

import pytest

from model.analysis.explain import explain
from model.analysis.runs import run
from model.core.checkpoint import default_dir, load_checkpoint
from viz.explain import (
    TITLE_CHARS,
    TITLE_LINE,
    cell_name,
    output_figure,
    row_figure,
    short_lines,
    split_figure,
    vector_figure,
)

# a cross-attention cell of the shipped translator whose key is a long German word
SENTENCE = "Ein Mann mit einem orangefarbenen Hut starrt auf etwas ."


@pytest.fixture(scope="module")
def cell():
    ck = load_checkpoint(default_dir("translator"))
    result = run(ck, SENTENCE)
    k = result.kinds["cross"].keys.index("orangefarbenen")
    return explain(ck, result.inputs, "cross", 1, 2, 1, k)


def shown(line: str) -> int:
    return len(html.unescape(line))


def test_every_title_line_fits_a_phone(cell) -> None:
    e, figures = cell, [vector_figure(cell), row_figure(cell), output_figure(cell)]
    if cell.position_split is not None:
        figures.append(split_figure(cell))
    for fig in figures:
        title = fig.layout.title
        lines = title.text.split("<br>")
        assert max(map(shown, lines)) <= TITLE_CHARS, lines  # before: 58 and 100 characters on one line
        assert (title.x, title.xanchor, title.y, title.yanchor) == (0, "left", 1, "top")  # from the top left down
        assert fig.layout.margin.t >= title.pad.t + TITLE_LINE * len(lines), (lines, fig.layout.margin)
    flat = [f.layout.title.text.replace("<br>", " ") for f in figures[:2]]
    assert all(html.escape(cell_name(e), quote=False) in t for t in flat)  # every word is still there
    assert f"→ key {e.key}:orangefarbenen" in figures[0].layout.title.text.split("<br>")[1]  # broken before the arrow


@pytest.mark.parametrize(
    "text, lines",
    [
        ("short", ["short"]),
        (
            "cross L1 H2 · query 0:a (input: &lt;sos&gt;) → key 3:fährt",
            ["cross L1 H2 · query 0:a (input: &lt;sos&gt;)", "→ key 3:fährt"],
        ),
        ("q_i · k_j = sum of the 256 products = -12.3456", ["q_i · k_j = sum of the 256 products", "= -12.3456"]),
        ("a<br>" + "x" * 50, ["a", "x" * 50]),  # a word longer than a line keeps one of its own
    ],
)
def test_lines_break_between_phrases(text: str, lines: list[str]) -> None:
    assert short_lines(text) == lines
