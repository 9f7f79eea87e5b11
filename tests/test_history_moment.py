"""The moment a head forms (model.training.history.ProbeHistory.moment), the training steps of each snapshot
and whether a head's block was held fixed: what the Training history page opens on and says."""

from __future__ import annotations

from pathlib import Path

import pytest

from model.training.history import FORMS, ProbeHistory, held_fixed, snapshot_steps


def history(scores: dict[int, float | None], losses: dict[int, float] | None = None) -> ProbeHistory:
    """A history with no maps, only scored snapshots: the induction score (layer 2 · head 1) per snapshot."""
    snaps = {}
    for e, score in scores.items():
        roles = {} if score is None else {"induction": {"score": score, "kind": "encoder", "layer": 2, "head": 1}}
        snaps[e] = {"roles": roles, **({"repeat_loss": losses[e]} if losses else {})}
    return ProbeHistory(Path("."), sorted(scores), {}, {}, [], snaps)


def brute_force(scores: dict[int, float]) -> tuple[int, float]:
    """The snapshot after the largest rise between two consecutive snapshots, by trying every pair."""
    epochs = sorted(scores)
    rises = {b: scores[b] - scores[a] for a, b in zip(epochs, epochs[1:])}
    best = max(rises, key=rises.get)
    return best, rises[best]


@pytest.mark.parametrize(
    "scores",
    [
        {1: 0.02, 2: 0.03, 3: 0.9, 4: 0.92},
        {1: 0.1, 2: 0.5, 3: 0.55, 4: 0.95},  # two rises of about 0.4: either is the moment
        {1: 0.02, 3: 0.04, 7: 0.2, 9: 0.88, 12: 0.9},  # uneven snapshot numbers
    ],
)
def test_the_moment_is_the_largest_rise_between_two_snapshots(scores):
    losses = {e: 4.0 - s for e, s in scores.items()}
    moment = history(scores, losses).moment()
    at, rise = brute_force(scores)
    epochs = sorted(scores)
    assert moment.epoch in {
        e for e in epochs[1:] if scores[e] - scores[epochs[epochs.index(e) - 1]] == pytest.approx(rise)
    }
    assert moment.before_epoch == epochs[epochs.index(moment.epoch) - 1]
    assert (moment.before, moment.after) == (scores[moment.before_epoch], scores[moment.epoch])
    assert (moment.kind, moment.layer, moment.head) == ("encoder", 2, 1)
    assert (moment.loss_before, moment.loss_after) == (losses[moment.before_epoch], losses[moment.epoch])


def test_no_moment_without_a_rise_large_enough():
    assert history({1: 0.1, 2: 0.1 + FORMS * 0.9, 3: 0.4}).moment() is None  # rises of 0.27 and 0.03
    assert history({1: 0.9, 2: 0.1}).moment() is None  # a fall is no moment
    assert history({1: 0.5}).moment() is None and history({}).moment() is None
    assert history({1: None, 2: 0.9}).moment() is None  # a snapshot without the role is not a rise from 0
    assert history({1: 0.0, 2: 0.9}).moment("previous") is None  # no snapshot scored that role
    assert history({1: 0.0, 2: 0.9}).moment().loss_after is None  # no repeat loss recorded: none told


def test_snapshot_steps_come_from_what_training_recorded():
    rows = [{"epoch": 1, "step": 250}, {"epoch": 2, "step": 500}]
    assert snapshot_steps(rows, {}) == {1: 250, 2: 500}
    assert snapshot_steps([], {"history": rows}) == {1: 250, 2: 500}  # config.json's, when history.json has none
    assert snapshot_steps([], {"eval_every": 100, "epochs": 3}) == {1: 100, 2: 200, 3: 300}
    assert snapshot_steps([], {}) == {} and snapshot_steps([{"epoch": 1}], {}) == {}


@pytest.mark.parametrize(
    "training, layer, fixed",
    [
        ({"init_from": "runs/x", "freeze": "pos_emb,blocks.0."}, 0, True),
        ({"init_from": "runs/x", "freeze": "pos_emb,blocks.0."}, 1, False),
        ({"init_from": "runs/x", "freeze": "blocks."}, 1, True),  # every block
        ({"init_from": None, "freeze": "blocks.0."}, 0, False),  # fixed from random: nothing formed there before
        ({"init_from": "runs/x", "freeze": ""}, 0, False),
        ({}, 0, False),
    ],
)
def test_held_fixed_reads_where_training_started_and_what_it_froze(training, layer, fixed):
    assert held_fixed(training, layer) is fixed
