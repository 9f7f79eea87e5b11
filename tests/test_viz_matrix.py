"""Figure specs of viz.matrix and viz.reshape: trace types, titles with shapes, axis names, labels."""

import base64
import json

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from model.lessons.walkthrough import input_tensor, reshape_steps, walkthrough
from viz.common import HEAD_COLORS, plot_labels, unique_labels
from viz.matrix import (
    KEY_AXIS,
    QUERY_AXIS,
    auto_decimals,
    matrix_frame,
    matrix_heatmap,
    shape_title,
    vector_bar,
)
from viz.reshape import head_heatmap, split_axes, step_figure, step_payload, steps_frame

torch.set_num_threads(1)


def token_matrix(values, tokens, name: str = "weights") -> go.Figure:
    """A (queries, keys) matrix over tokens, as the hand page draws it."""
    labels = unique_labels(tokens)
    return matrix_heatmap(values, labels, labels, name=name, row_title=QUERY_AXIS, col_title=KEY_AXIS)


def spec(fig: go.Figure) -> dict:
    return json.loads(fig.to_json())


def array(value) -> np.ndarray:
    """A plotly JSON array: a plain list, or plotly 6's typed array {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = [int(n) for n in str(value.get("shape", len(flat))).split(",")]
        return flat.reshape(shape)
    return np.asarray(value)


def test_attention_heatmap_spec_with_repeated_tokens():
    w = walkthrough("the cat saw the dog")
    fig = token_matrix(w.weights, w.tokens, name="weights")
    s = spec(fig)
    assert [t["type"] for t in s["data"]] == ["heatmap"]
    trace = s["data"][0]
    assert trace["y"] == ["0:the", "1:cat", "2:saw", "3:the", "4:dog"] == trace["x"]
    assert s["layout"]["yaxis"]["title"]["text"] == QUERY_AXIS == "query (row)"
    assert s["layout"]["xaxis"]["title"]["text"] == KEY_AXIS == "key (column)"
    assert s["layout"]["title"]["text"] == "weights  (5 × 5)"
    assert s["layout"]["yaxis"]["autorange"] == "reversed"  # row 0 on top, as printed
    assert s["layout"]["font"]["size"] >= 12 and trace["textfont"]["size"] >= 12
    assert "query (row): %{y}" in trace["hovertemplate"] and "key (column): %{x}" in trace["hovertemplate"]


def test_seed_numbers_appear_as_cell_text():
    w = walkthrough()
    trace = spec(token_matrix(w.scores, w.tokens, name="scores"))["data"][0]
    assert trace["text"][1] == ["8.5808", "-7.6597", "3.2558", "1.0395", "11.1466", "-0.4800"]
    assert trace["colorscale"] and trace["zmid"] == 0  # signed values: diverging scale centred on 0


def test_matrix_heatmap_defaults_and_decimals():
    m = np.arange(12.0).reshape(3, 4) / 7
    s = spec(matrix_heatmap(m, name="W", row_title="output", col_title="input"))
    trace = s["data"][0]
    assert trace["y"] == ["0", "1", "2"] and trace["x"] == ["0", "1", "2", "3"]
    assert s["layout"]["xaxis"]["type"] == "category" and s["layout"]["xaxis"]["title"]["text"] == "input"
    assert trace["text"][0][1] == "0.1429"
    assert auto_decimals(6, 6) == 4 and auto_decimals(24, 16) == 2 and auto_decimals(6, 28) == 1
    assert auto_decimals(100, 4) is None and auto_decimals(4, 100) is None
    big = spec(matrix_heatmap(np.zeros((60, 60)), name="big"))["data"][0]
    assert "text" not in big  # too many cells to print: hover only


@pytest.mark.parametrize(
    "values, rows, cols, message",
    [
        (np.zeros((2, 3, 4)), None, None, "must be 2-D"),
        (np.zeros((2, 3)), ["a", "b", "c"], None, "3 query tokens"),
        (np.zeros((2, 3)), None, ["a"], "1 key tokens"),
        (np.zeros((2, 2)), ["a", "a"], None, "unique"),
    ],
)
def test_matrix_heatmap_rejects_wrong_shapes(values, rows, cols, message):
    with pytest.raises(ValueError, match=message):
        matrix_heatmap(values, rows, cols, name="m")


def test_markup_in_tokens_is_shown_not_interpreted():
    tokens = ["<script>alert(1)</script>", "<b>x</b>", "a&b"]
    fig = token_matrix(np.eye(3), tokens)
    y = spec(fig)["data"][0]["y"]
    assert y == ["0:&lt;script&gt;alert(1)&lt;/scr…", "1:&lt;b&gt;x&lt;/b&gt;", "2:a&amp;b"]  # cut at 24 characters
    assert all("<" not in label for label in y)
    assert plot_labels(["é 😀"], numbered=False) == ["é 😀"] and plot_labels(["é 😀"]) == ["0:é 😀"]


def test_vector_bar_and_frame():
    w = walkthrough()
    labels = [f"{i}:{t}" for i, t in enumerate(w.tokens)]
    s = spec(vector_bar(w.weights[1], labels, name="weights of 1:is", axis_title=KEY_AXIS, value_title="weight"))
    assert [t["type"] for t in s["data"]] == ["bar"]
    assert s["data"][0]["text"][:2] == ["0.2912", "0.0106"]
    assert s["layout"]["xaxis"]["title"]["text"] == KEY_AXIS and s["layout"]["title"]["text"] == "weights of 1:is  (6)"
    with pytest.raises(ValueError, match="1-D"):
        vector_bar(w.weights, labels)
    with pytest.raises(ValueError, match="6 values but 2 labels"):
        vector_bar(w.weights[1], labels[:2])
    frame = matrix_frame(w.scores, labels, labels)
    assert frame.loc["1:is", "4:dessert"] == pytest.approx(11.1466)
    assert shape_title("x", (2, 3, 4)) == "x  (2 × 3 × 4)"


def test_head_heatmap_colours_by_head():
    values = np.arange(8.0).reshape(2, 4)
    head_of = np.array([[0, 0, 1, 1], [0, 0, 1, 1]])
    s = spec(head_heatmap(values, head_of, ["r0", "r1"], ["a", "b", "c", "d"], heads=2, name="q"))
    trace = s["data"][0]
    assert [t["type"] for t in s["data"]] == ["heatmap"]
    assert array(trace["z"]).tolist() == head_of.tolist()
    colours = {c for _, c in trace["colorscale"]}
    assert colours == set(HEAD_COLORS[:2])
    assert trace["colorbar"]["ticktext"] == ["head 0", "head 1"]
    assert trace["text"][1][3] == "7.00"
    with pytest.raises(ValueError, match="same shape"):
        head_heatmap(values, head_of[:, :2], ["r0", "r1"], ["a", "b"], heads=2)
    with pytest.raises(ValueError, match="heads is 1"):
        head_heatmap(values, head_of, ["r0", "r1"], ["a", "b", "c", "d"], heads=1)


@pytest.mark.parametrize("wide", [False, True])
def test_step_figures_follow_the_heads(wide):
    b, t, k, h = 2, 3, 4, 2
    r = reshape_steps(input_tensor(b, t, k, seed=0), h, wide=wide, seed=1)
    tokens = ["a", "b", "a"]
    for step in r.steps:
        s = spec(step_figure(step.tensor, step.head_of, step.dims, heads=h, name=step.name, tokens=tokens))
        assert len(s["data"]) == 1 and s["data"][0]["type"] == "heatmap"
        trace = s["data"][0]
        n_rows = int(np.prod(step.shape[: split_axes(step.dims)]))
        assert len(trace["y"]) == len(set(trace["y"])) == n_rows
        assert len(trace["x"]) == len(set(trace["x"])) == step.tensor.numel() // n_rows
        assert " × ".join(map(str, step.shape)) in s["layout"]["title"]["text"]
        if step.name == "softmax":
            assert s["layout"]["yaxis"]["title"]["text"].startswith(QUERY_AXIS)
            assert s["layout"]["xaxis"]["title"]["text"].startswith(KEY_AXIS)
            assert trace["x"] == ["0:a", "1:b", "2:a"]
        if step.name == "fold heads into batch":
            # rows are (b·h, t): item i is head i % h, so z runs 0,0,0,1,1,1,0,0,0,1,1,1
            assert array(trace["z"])[:, 0].tolist() == [i // t % h for i in range(b * h * t)]
            assert trace["y"][t] == "1=b0h1 · 0:a"
        if step.name == "input x":
            assert "colorbar" not in trace or "ticktext" not in trace["colorbar"]  # plain values, no head


def test_step_figure_rejects_mismatches():
    with pytest.raises(ValueError, match="must agree"):
        step_figure(np.zeros((2, 3)), np.zeros((2, 3)), ("b", "t", "k"), heads=1, name="x")
    with pytest.raises(ValueError, match="token axis"):
        split_axes(("b", "k"))
    with pytest.raises(ValueError, match="2 tokens"):
        step_figure(np.zeros((1, 3, 2)), np.zeros((1, 3, 2)), ("b", "t", "k"), heads=1, name="x", tokens=["a", "b"])


def test_steps_frame_holds_every_number_with_its_head():
    r = reshape_steps(input_tensor(2, 3, 4, seed=0), 2, wide=False, seed=1)
    frame = steps_frame(r.steps)
    expected = sum(s.tensor.numel() * (1 + len(s.others)) for s in r.steps)
    assert len(frame) == expected and frame["step"].max() == len(r.steps)
    softmax = next(i for i, s in enumerate(r.steps, start=1) if s.name == "softmax")
    rows = frame[frame["step"] == softmax]
    assert set(rows["head"]) == {0, 1} and rows["axes"].iloc[0] == "b·h t t"
    step = r.steps[softmax - 1]
    assert rows["value"].iloc[5] == pytest.approx(float(step.tensor.reshape(-1)[5]))


def test_step_payload_matches_the_figure_grid():
    r = reshape_steps(input_tensor(1, 3, 4, seed=0), 2, wide=False, seed=1)
    step = next(s for s in r.steps if s.name == "transpose")
    p = step_payload(step.tensor, step.head_of, step.dims, heads=2, name="transpose", tokens=["a", "b", "c"])
    fig = step_figure(step.tensor, step.head_of, step.dims, heads=2, name="transpose", tokens=["a", "b", "c"])
    assert p["rows"] == list(fig.data[0].y) and p["cols"] == list(fig.data[0].x)
    assert p["colour"]["mode"] == "head" and p["title"].startswith("transpose: (b, h, t, s)")
