"""Odd text on the axes: the one label helper cuts long labels (whole on hover), shows control and
invisible characters by code point, and no figure prints a negative zero."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viz.attention import attention_heatmap, head_grid, query_bar
from viz.common import number_text, plot_labels, printable

LONG = "x" * 2000


def spec(fig) -> dict:
    return json.loads(fig.to_json())


@pytest.mark.parametrize(
    "build",
    [
        lambda t: attention_heatmap(np.full((3, 3), 1 / 3), t),
        lambda t: head_grid(np.full((1, 2, 3, 3), 1 / 3), t),
    ],
    ids=["attention", "grid"],
)
def test_a_2000_character_word_is_cut_on_the_axis_and_whole_on_hover(build):
    s = spec(build(["a", LONG, "b"]))
    trace = s["data"][0]
    assert all(len(label) <= 24 for label in trace["y"]) and trace["y"][1].endswith("…")
    assert s["layout"]["margin"]["l"] < 400  # the heatmap keeps its width
    assert "customdata[0]" in trace["hovertemplate"]
    whole = trace["customdata"][1][0][0]
    assert whole.replace("<br>", "") == "1:" + LONG and "<br>" in whole  # broken into lines


def test_labels_that_fit_carry_no_hover_copy():
    trace = spec(attention_heatmap(np.eye(2), ["a", "b"]))["data"][0]
    assert "customdata" not in trace and "%{y}" in trace["hovertemplate"]


def test_invisible_characters_show_as_code_points():
    labels = plot_labels(["ab\u202ecd", "zero\u200bwidth", "tab\there", "nbsp\u00a0", "é 😀"])
    assert labels == ["0:ab⟨U+202E⟩cd", "1:zero⟨U+200B⟩width", "2:tab⇥here", "3:nbsp⟨U+00A0⟩", "4:é 😀"]
    assert printable("a\x00b\x1b") == "a⟨U+0000⟩b⟨U+001B⟩"
    y = spec(attention_heatmap(np.eye(2), ["\u202egood", "bad"]))["data"][0]["y"]
    assert y[0] == "0:⟨U+202E⟩good"


def test_no_negative_zero_in_cells_or_bars():
    assert number_text(-0.0001, 2) == "0.00" and number_text(-0.01, 2) == "-0.01" and number_text(0.5, 4) == "0.5000"
    weights = attention_heatmap(np.array([[-1e-4, 1.0], [0.5, 0.5]]), ["a", "b"])
    assert spec(weights)["data"][0]["text"][0][0] == "0.00"
    assert spec(query_bar(np.array([-1e-4, 1.0]), ["a", "b"], query_label="a"))["data"][0]["text"][0] == "0.00"
