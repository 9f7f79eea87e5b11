"""The workshop's questions and scoring (model.lessons.workshop): the notebook example, reproducible
questions of every kind, shape answers that follow the reshape rules, shape parsing that never
echoes its input, and partial credit."""

import numpy as np
import pytest

from model.lessons.workshop import (
    hand_question,
    head_question,
    kind_of,
    parse_shape,
    score_attention_guess,
    score_shape_guess,
    shape_question,
)

WEIGHTS_OF_IS = [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]  # the hand example's weights for the query "is"


def test_question_zero_is_the_notebook_example():
    q = hand_question(0)
    assert q.tokens == ["Life", "is", "short", "eat", "dessert", "first."]
    assert q.tokens[q.query] == "is" and q.tokens[q.answer] == "dessert"
    assert [round(float(w), 4) for w in q.row] == WEIGHTS_OF_IS


def test_questions_are_reproducible_and_cycle_through_the_kinds():
    assert [kind_of(n) for n in range(6)] == ["attend", "shape", "head"] * 2
    a, b = shape_question(4), shape_question(4)
    assert (a.shape, a.step, a.b, a.t, a.k) == (b.shape, b.step, b.b, b.t, b.k)
    assert hand_question(3).row.tolist() == hand_question(3).row.tolist()
    shapes = {shape_question(n).step for n in range(1, 300, 3)}
    assert len(shapes) >= 6  # many different steps get asked


@pytest.mark.parametrize("n", [1, 4, 7, 10, 13])
def test_shape_answers_follow_the_reshape_rules(n):
    q = shape_question(n)
    s, bh = q.head_dim, q.b * q.heads
    rule = {
        "project to queries, keys, values": (q.b, q.t, q.heads * s),
        "view": (q.b, q.t, q.heads, s),
        "transpose": (q.b, q.heads, q.t, s),
        "fold heads into batch": (bh, q.t, s),
        "scale q and k": (bh, q.t, s),
        "bmm: scores": (bh, q.t, q.t),
        "scale": (bh, q.t, q.t),
        "softmax": (bh, q.t, q.t),
        "bmm with values": (bh, q.t, s),
        "unfold": (q.b, q.heads, q.t, s),
        "transpose back": (q.b, q.t, q.heads, s),
        "concatenate heads": (q.b, q.t, q.heads * s),
        "combine the heads": (q.b, q.t, q.k),
    }
    assert q.shape == rule[q.step]


def test_head_question_picks_a_row_of_the_given_attention():
    a = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 4))
    q = head_question(2, a, ["w", "x", "y", "z"])
    layer, head = (int(part.split()[-1]) for part in q.detail.split(" · "))
    assert q.row.tolist() == a[layer, head, q.query].tolist()
    with pytest.raises(ValueError):
        head_question(2, a, ["w"])


@pytest.mark.parametrize(
    "text, shape",
    [
        ("(2, 4, 8)", (2, 4, 8)),
        ("2 4 8", (2, 4, 8)),
        ("2x4x8", (2, 4, 8)),
        ("torch.Size([2, 4, 8])", (2, 4, 8)),
        ("[6]", (6,)),
    ],
)
def test_parse_shape(text, shape):
    assert parse_shape(text) == shape


@pytest.mark.parametrize(
    "text", ["", "   ", "(2, four)", "😀", "<script>alert(1)</script>", "1," * 2500, "2.5, 3", "-1, 2"]
)
def test_parse_shape_rejects_without_echoing(text):
    with pytest.raises(ValueError) as e:
        parse_shape(text)
    assert "<script>" not in str(e.value) and "😀" not in str(e.value)


def test_scores():
    assert score_attention_guess(WEIGHTS_OF_IS, 4) == 1
    assert score_attention_guess(WEIGHTS_OF_IS, 0) == pytest.approx(0.2912 / 0.4917)
    assert score_attention_guess([0.5, 0.5], 1) == 1  # a tie with the strongest is full marks
    with pytest.raises(ValueError):
        score_attention_guess(WEIGHTS_OF_IS, 6)
    assert score_shape_guess((2, 4, 8), (2, 4, 8)) == 1
    assert score_shape_guess((2, 8, 4), (2, 4, 8)) == pytest.approx(0.5 / 3)
    assert score_shape_guess((2, 4), (2, 4, 8)) == 0
