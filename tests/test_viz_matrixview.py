"""The matrix view's payload: labels as display text, the colour rule the script applies (the weights'
one scale, shared with the explorer and the figures), marked and blank cells, fixed colour limits,
the limits."""

import numpy as np
import plotly.graph_objects as go
import pytest

from fixtures.explorer_runs import translator_run
from viz.common import WEIGHT_STOPS, heatmap
from viz.explorer import explorer_payload
from viz.matrixview import BLUES, MAX_CELLS, RDBU_R, matrix_payload


def test_payload_holds_values_labels_and_title():
    p = matrix_payload([[0.25, 0.75], [1.0, 0.0]], ["a", "b"], ["x", "y"], name="w", row_title="q", col_title="k")
    assert p["title"] == "w  (2 × 2)" and p["shape"] == [2, 2] and p["values"] == [0.25, 0.75, 1.0, 0.0]
    assert (p["rows"], p["cols"], p["row_title"], p["col_title"]) == (["a", "b"], ["x", "y"], "q", "k")
    assert p["decimals"] == 4
    assert p["colour"] == {"mode": "value", "stops": list(BLUES), "ranges": [[0.0, 1.0]], "signed": False}


def test_signed_values_get_a_scale_centred_on_zero():
    p = matrix_payload(np.array([[-2.0, 1.0]]))
    assert p["colour"]["signed"] and p["colour"]["stops"] == list(RDBU_R) and p["colour"]["ranges"] == [[-2.0, 2.0]]
    assert p["rows"] == ["0"] and p["cols"] == ["0", "1"]  # indices when no labels are given


def test_row_scale_gives_each_row_its_range():
    p = matrix_payload([[1.0, 3.0], [0.1, 0.2]], row_scale=True)
    assert p["colour"]["ranges"] == [[0.0, 3.0], [0.0, 0.2]]


def test_head_colours_need_one_head_per_cell():
    heads = np.array([[0, 1], [-1, 1]])
    p = matrix_payload(np.ones((2, 2)), colour="head", heads=heads, head_count=2)
    assert p["colour"]["heads"] == [0, 1, -1, 1] and len(p["colour"]["palette"]) == 2
    with pytest.raises(ValueError, match="one head per cell"):
        matrix_payload(np.ones((2, 2)), colour="head", heads=heads[:1], head_count=2)
    with pytest.raises(ValueError, match="head_count"):
        matrix_payload(np.ones((2, 2)), colour="head", heads=heads, head_count=1)


def test_labels_show_invisible_characters_and_keep_markup_as_text():
    p = matrix_payload([[1.0, 2.0]], ["r"], ["\u202eevil", "<b>x</b>"])
    assert p["cols"] == ["⟨U+202E⟩evil", "<b>x</b>"]  # the script writes them with textContent


def test_digest_follows_the_content():
    a, b = matrix_payload([[1.0]]), matrix_payload([[2.0]])
    assert a["digest"] != b["digest"] and a["digest"] == matrix_payload([[1.0]])["digest"]


def test_marked_cells_and_their_name():
    p = matrix_payload(np.zeros((2, 3)), marks=[(1, 2), (0, 0), (1, 2)], mark_label="switched off")
    assert p["marks"] == [[0, 0], [1, 2]] and p["mark_label"] == "switched off"  # sorted, each once
    assert matrix_payload(np.zeros((1, 1)))["marks"] == []


def test_nan_is_a_blank_cell_outside_the_colour_range():
    p = matrix_payload([[np.nan, 0.5], [2.0, np.inf]])
    assert p["values"] == [None, 0.5, 2.0, None]  # JSON null: the script leaves the cell blank
    assert p["colour"]["ranges"] == [[0.0, 2.0]]


def test_fixed_limits_replace_the_data_range():
    assert matrix_payload([[0.2, 0.4]], limits=(0.0, 1.0))["colour"]["ranges"] == [[0.0, 1.0]]
    assert matrix_payload([[0.2, 0.4]], limits=(None, 3.0))["colour"]["ranges"] == [[0.0, 3.0]]


@pytest.mark.parametrize(
    "values, rows, kwargs, message",
    [
        (np.zeros(3), None, {}, "2-D"),
        (np.zeros((2, 2)), ["a"], {}, "query tokens"),
        (np.zeros((MAX_CELLS + 1, 1)), None, {}, "too many"),
        (np.zeros((1, 1)), None, {"colour": "rainbow"}, "colour must be"),
        (np.zeros((2, 2)), None, {"marks": [(2, 0)]}, "outside the 2 × 2"),
        (np.zeros((1, 1)), None, {"limits": (1.0, 0.5)}, "grow from low to high"),
    ],
)
def test_bad_input_says_what_to_fix(values, rows, kwargs, message):
    with pytest.raises(ValueError, match=message):
        matrix_payload(values, rows, **kwargs)


def test_weights_have_one_colour_scale_in_the_table_the_explorer_and_the_figures():
    assert matrix_payload([[0.5]])["colour"]["stops"] == list(WEIGHT_STOPS)
    assert explorer_payload(translator_run())["weight_stops"] == list(WEIGHT_STOPS)
    fig = heatmap(np.eye(2), ["a", "b"], ["c", "d"], title="t", row_title="query", col_title="key")
    named = go.Figure(dict(data=[dict(type="heatmap", z=[[0]], colorscale="Blues")]))  # Plotly's own stops
    assert fig.to_plotly_json()["data"][0]["colorscale"] == named.to_plotly_json()["data"][0]["colorscale"]
    hexes = ["#{:02x}{:02x}{:02x}".format(*map(int, c[4:-1].split(","))) for _, c in fig.data[0].colorscale]
    assert hexes == list(WEIGHT_STOPS)
