"""viz.matrix's shared pieces (decimals, titles with shapes, the matrix as a table) and viz.reshape's
step layout: labels, axis names, titles and head colours of every reshape step's matrix view."""

import numpy as np
import pytest
import torch

from model.lessons.hand import walkthrough
from model.lessons.reshape import input_tensor, reshape_steps
from viz.common import plot_labels
from viz.matrix import auto_decimals, matrix_frame, shape_title
from viz.reshape import split_axes, step_payload, steps_frame

torch.set_num_threads(1)


def test_auto_decimals():
    assert auto_decimals(6, 6) == 4 and auto_decimals(24, 16) == 2 and auto_decimals(6, 28) == 1
    assert auto_decimals(100, 4) is None and auto_decimals(4, 100) is None


def test_markup_in_tokens_is_shown_not_interpreted():
    tokens = ["<script>alert(1)</script>", "<b>x</b>", "a&b"]
    y = plot_labels(tokens)
    assert y == ["0:&lt;script&gt;alert(1)&lt;/scr…", "1:&lt;b&gt;x&lt;/b&gt;", "2:a&amp;b"]  # cut at 24 characters
    assert all("<" not in label for label in y)
    assert plot_labels(["é 😀"], numbered=False) == ["é 😀"] and plot_labels(["é 😀"]) == ["0:é 😀"]


def test_matrix_frame_and_shape_title():
    w = walkthrough()
    labels = [f"{i}:{t}" for i, t in enumerate(w.tokens)]
    frame = matrix_frame(w.scores, labels, labels)
    assert frame.loc["1:is", "4:dessert"] == pytest.approx(11.1466)
    assert shape_title("x", (2, 3, 4)) == "x  (2 × 3 × 4)"


@pytest.mark.parametrize("wide", [False, True])
def test_step_payloads_follow_the_heads(wide):
    b, t, k, h = 2, 3, 4, 2
    r = reshape_steps(input_tensor(b, t, k, seed=0), h, wide=wide, seed=1)
    tokens = ["a", "b", "a"]
    for step in r.steps:
        p = step_payload(step.tensor, step.head_of, step.dims, heads=h, name=step.name, tokens=tokens)
        n_rows = int(np.prod(step.shape[: split_axes(step.dims)]))
        assert len(p["rows"]) == len(set(p["rows"])) == n_rows
        assert len(p["cols"]) == len(set(p["cols"])) == step.tensor.numel() // n_rows
        assert " × ".join(map(str, step.shape)) in p["title"]
        if step.name == "softmax":
            assert p["row_title"].startswith("queries ") and p["col_title"] == "keys t"
            assert p["cols"] == ["0:a", "1:b", "2:a"]
        if step.name == "fold heads into batch":
            # rows are (b·h, t): item i is head i % h, so the heads run 0,0,0,1,1,1,0,0,0,1,1,1
            heads = np.reshape(p["colour"]["heads"], p["shape"])
            assert heads[:, 0].tolist() == [i // t % h for i in range(b * h * t)]
            assert p["rows"][t] == "1=b0h1 · 0:a"
        if step.name == "input x":
            assert p["colour"]["mode"] == "value"  # plain values, no head


def test_step_payload_rejects_mismatches():
    with pytest.raises(ValueError, match="must agree"):
        step_payload(np.zeros((2, 3)), np.zeros((2, 3)), ("b", "t", "k"), heads=1, name="x")
    with pytest.raises(ValueError, match="token axis"):
        split_axes(("b", "k"))
    with pytest.raises(ValueError, match="2 tokens"):
        step_payload(np.zeros((1, 3, 2)), np.zeros((1, 3, 2)), ("b", "t", "k"), heads=1, name="x", tokens=["a", "b"])


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


def test_step_payload_colours_by_head():
    r = reshape_steps(input_tensor(1, 3, 4, seed=0), 2, wide=False, seed=1)
    step = next(s for s in r.steps if s.name == "transpose")
    p = step_payload(step.tensor, step.head_of, step.dims, heads=2, name="transpose", tokens=["a", "b", "c"])
    assert p["colour"]["mode"] == "head" and p["title"].startswith("transpose: (b, h, t, s)")
