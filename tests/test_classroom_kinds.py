"""A classroom round in the attention explorer: before the reveal the choice row gives nothing away
(its payload does not depend on the weights), a click names exactly one option, and after the reveal
the explorer holds the head's real weights (with the causal mask for the generator)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from model.core.checkpoint import load_checkpoint
from model.lessons.classroom_kinds import (
    CHOICE,
    answers_by_key,
    choice_from_cell,
    choice_kinds,
    reveal_kinds,
)
from model.lessons.questions import build_question, from_attend, previous_question
from model.lessons.workshop import hand_question
from viz.explorer import explorer_payload


@pytest.fixture(scope="module")
def models(checkpoints):
    return {t: load_checkpoint(str(checkpoints / t), task=t, device="cpu") for t in ("classifier", "generator")}


def cell(key, kind=CHOICE, **extra) -> dict:
    return {"kind": kind, "layer": 0, "head": 0, "query": 0, "key": key, "weight": 0.2, **extra}


@pytest.mark.parametrize("number", [0, 5, 17])
def test_the_choice_row_is_the_query_over_every_key_all_alike(number):
    q = build_question("attend", number, lambda task: None)
    w = hand_question(number)
    (kind,) = choice_kinds(q)
    T = len(w.tokens)
    assert kind.weights.shape == (1, 1, 1, T) and kind.mask.all()
    assert kind.queries == [w.tokens[w.query]] and kind.keys == w.tokens
    np.testing.assert_allclose(kind.weights.sum(-1), 1.0, rtol=1e-6)  # a softmax row of equal scores
    assert len(set(kind.weights.ravel().tolist())) == 1


def test_the_choice_payload_does_not_depend_on_the_weights():
    """Two rounds with the same sentence and query but opposite answers send the browser the same bytes."""
    w = hand_question(0)
    flipped = replace(w, weights=w.weights[:, ::-1].copy())
    a, b = from_attend(w), from_attend(flipped)
    assert a.answer != b.answer
    pa, pb = explorer_payload(choice_kinds(a)), explorer_payload(choice_kinds(b))
    assert pa["weights"] == pb["weights"] and pa["digest"] == pb["digest"]


def test_a_click_names_one_option_or_none():
    q = build_question("attend", 0, lambda task: None)
    assert [choice_from_cell(q, cell(k)) for k in range(len(q.options))] == list(range(len(q.options)))
    for bad in (None, {}, cell(len(q.options)), cell(-1), cell(True), cell("4"), cell(2.0), cell(4, kind="map")):
        assert choice_from_cell(q, bad) is None, bad
    shape = build_question("shape", 1, lambda task: None)
    assert not answers_by_key(shape) and choice_from_cell(shape, cell(0)) is None
    with pytest.raises(ValueError, match="not answered by clicking a key"):
        choice_kinds(shape)


def test_the_reveal_holds_the_real_row_then_the_whole_map():
    q = build_question("attend", 0, lambda task: None)
    w = hand_question(0)
    row, whole = reveal_kinds(q)
    np.testing.assert_allclose(row.weights[0, 0, 0], w.weights[w.query], atol=1e-4)
    np.testing.assert_allclose(whole.weights[0, 0], w.weights, atol=1e-4)
    assert row.queries == [w.tokens[w.query]] and whole.queries == whole.keys == w.tokens
    assert int(np.argmax(row.weights[0, 0, 0])) == q.answer
    explorer_payload([row, whole])  # a valid explorer payload


def test_the_previous_token_reveal_hides_the_future():
    T = 5
    w = np.tril(np.ones((2, 2, T, T)))
    w /= w.sum(-1, keepdims=True)
    q = previous_question(2, w, list("abcde"))
    (whole,) = reveal_kinds(q)
    assert not answers_by_key(q)
    np.testing.assert_array_equal(whole.mask, np.tril(np.ones((T, T), dtype=bool)))


def test_model_rounds_in_the_explorer(models):
    head = build_question("head", 3, models.get)
    assert answers_by_key(head)
    row, whole = reveal_kinds(head)
    assert int(np.argmax(row.weights[0, 0, 0])) == head.answer and whole.mask.all()
    for kind in ("previous", "ablation"):
        q = build_question(kind, 3, models.get)
        (whole,) = reveal_kinds(q)
        np.testing.assert_allclose(whole.weights[0, 0], q.reveal["weights"], atol=1e-6)
        assert whole.mask.all() == (kind == "ablation")


def test_rounds_without_a_map_show_none_and_bad_maps_say_so():
    assert reveal_kinds(build_question("shape", 2, lambda task: None)) == []
    q = build_question("attend", 0, lambda task: None)
    broken = replace(q, reveal={**q.reveal, "weights": [[0.5, 0.5]]})
    with pytest.raises(ValueError, match="must be"):
        reveal_kinds(broken)
