"""The moment a head learns its job: scoring kept training snapshots (model.analysis.snapshots), induction on
the text at hand (model.analysis.induction), and the history that carries both to the Training history page."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import save_file

from fixtures.tiny import HISTORY_EPOCHS, make_checkpoints, make_history
from model.analysis.head_scan import our_reader, scan
from model.analysis.induction import induction_here, induction_rows
from model.analysis.snapshots import ROLES, best_roles, repeat_loss, score_snapshots, snapshot_files, write_roles
from model.core.checkpoint import load_checkpoint
from model.training.card import card_line
from model.training.history import load_history, training_curves

LINES = ["To be, or not to be, that is the question:", "Whether 'tis nobler in the mind to suffer", "O Romeo, Romeo!"]


@pytest.mark.parametrize("ids", [[5, 6, 7, 5, 6, 7, 5], [1, 2, 3, 4], [9, 9, 9, 9], [3, 1, 3, 2, 1, 3]])
def test_induction_here_is_its_definition(ids):
    rng = np.random.default_rng(len(ids))
    T = len(ids)
    w = rng.random((2, 3, T, T))
    w = np.tril(w) / np.tril(w).sum(-1, keepdims=True)
    scores, n = induction_here(w, ids)
    rows = []  # brute force: for each query, the most recent earlier j ending its pair (ids[i-1], ids[i]), if j + 1 < i
    for i in range(1, T):
        earlier = [j for j in range(1, i) if ids[j - 1 : j + 1] == ids[i - 1 : i + 1]]
        if earlier and earlier[-1] + 1 < i:
            rows.append((i, earlier[-1] + 1))
    assert n == len(rows)
    assert list(zip(*induction_rows(ids))) == rows
    if rows:
        expected = np.mean([w[:, :, i, k] for i, k in rows], axis=0)
        np.testing.assert_allclose(scores, expected)
    else:
        assert np.isnan(scores).all()


def test_best_roles_takes_the_top_head_of_every_kind():
    rows = [
        {"kind": "encoder", "layer": 0, "head": 0, "previous": 0.2, "first": 0.9, "induction": None},
        {"kind": "encoder", "layer": 1, "head": 2, "previous": 0.95, "first": 0.1, "induction": 0.4},
        {"kind": "decoder", "layer": 0, "head": 1, "previous": 0.5, "first": None, "induction": 0.8},
    ]
    best = best_roles(rows)
    assert best["previous"] == {"score": 0.95, "kind": "encoder", "layer": 1, "head": 2}
    assert best["first"]["layer"] == 0 and best["induction"]["kind"] == "decoder"
    assert "duplicate" not in best


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = make_history(make_checkpoints(tmp_path_factory.mktemp("ck")))
    return root / "generator"


def test_repeat_loss_is_the_loss_on_the_second_copy(tiny):
    ck = load_checkpoint(tiny)
    usable = np.arange(2, len(ck.vocabs["chars"]))
    got = repeat_loss(ck.model, usable, n=6, probes=3)
    losses = []  # brute force, one probe and one position at a time
    for seed in range(3):
        rng = np.random.default_rng(seed)
        r = [int(i) for i in rng.choice(usable, 6, replace=False)]
        ids = [int(rng.choice(usable)), *r, *r]
        logits, _ = ck.model.eval()(torch.tensor([ids[:-1]]))
        for pos in range(1 + 6, 2 * 6):  # predicting r[1:] of the second copy
            losses.append(F.cross_entropy(logits[0, pos], torch.tensor(ids[pos + 1])).item())
    assert got == pytest.approx(float(np.mean(losses)), rel=1e-5)


def test_snapshots_are_scored_with_the_finders_own_pass(tiny, tmp_path):
    ck = load_checkpoint(tiny)
    g = torch.Generator().manual_seed(1)
    states = {}
    for epoch in HISTORY_EPOCHS:
        own = ck.model.state_dict()  # lm_head.weight is tok_emb.weight (tied): saved once, as training does
        state = {
            k: v + 0.05 * epoch * torch.randn(v.shape, generator=g) for k, v in own.items() if k != "lm_head.weight"
        }
        states[epoch] = state
        save_file({k: v.contiguous() for k, v in state.items()}, tmp_path / f"epoch{epoch:03d}.safetensors")
    (tmp_path / "state.json").write_text(
        json.dumps({"history": [{"epoch": e, "val_loss": 3.0 / e, "score": -3.0 / e} for e in HISTORY_EPOCHS]})
    )
    assert list(snapshot_files(tmp_path)) == list(HISTORY_EPOCHS)
    scored = score_snapshots(ck, tmp_path, LINES)
    assert list(scored) == list(HISTORY_EPOCHS)
    last = HISTORY_EPOCHS[-1]
    fresh = load_checkpoint(tiny)  # brute force: the finder itself on the last snapshot's weights
    fresh.model.load_state_dict(states[last], strict=False)
    rows = scan(our_reader(fresh), LINES).rows()
    for role in ROLES:
        top = max((r for r in rows if r[role] is not None), key=lambda r: r[role])
        assert scored[last]["roles"][role] == {
            "score": top[role],
            "kind": top["kind"],
            "layer": top["layer"],
            "head": top["head"],
        }
    assert scored[last]["repeat_loss"] > 0
    write_roles(tiny, scored, tmp_path)
    h = load_history(tiny)
    assert sorted(h.snapshots) == list(HISTORY_EPOCHS)
    curves = h.role_curves()
    assert curves["epoch"] == [float(e) for e in HISTORY_EPOCHS]
    assert curves["previous"][-1] == scored[last]["roles"]["previous"]["score"]
    assert curves["repeat_loss"] == [scored[e]["repeat_loss"] for e in HISTORY_EPOCHS]
    assert h.best_head("induction") == scored[last]["roles"]["induction"]
    # every evaluation's metrics, not only the best model's
    assert training_curves({}, h.metrics)["val_loss"] == [3.0 / e for e in HISTORY_EPOCHS]


def test_score_snapshots_without_snapshots_says_what_to_do(tiny, tmp_path):
    with pytest.raises(FileNotFoundError, match="--keep-snapshots"):
        score_snapshots(load_checkpoint(tiny), tmp_path, LINES)


def test_card_line_reads_the_recorded_recipe_and_run():
    training = {
        "card": "Fine-tuned on Tiny Shakespeare with 30% of windows holding a repeated span.",
        "params": 1817088,
        "device_name": "CPU",
        "history": [{"epoch": 1, "step": 60, "seconds": 44.1}, {"epoch": 25, "step": 1500, "seconds": 2400.0}],
    }
    assert card_line(training) == (
        "Fine-tuned on Tiny Shakespeare with 30% of windows holding a repeated span "
        "(1,500 steps, 40 min on CPU, 1,817,088 parameters)."
    )
    assert card_line({"init_from": "checkpoints/generator"}).startswith("Fine-tuned from checkpoints/generator")
    assert card_line({}) == ""


def test_each_snapshot_is_handed_on_as_it_is_scored(tiny, tmp_path):
    """A scoring run stopped part-way (a device's time limit) keeps what it scored: ``each`` sees the
    epochs scored so far after every snapshot, in order, and its last call holds them all."""
    ck = load_checkpoint(tiny)
    own = {k: v for k, v in ck.model.state_dict().items() if k != "lm_head.weight"}
    for epoch in HISTORY_EPOCHS:
        save_file({k: v.contiguous() for k, v in own.items()}, tmp_path / f"epoch{epoch:03d}.safetensors")
    seen = []
    scored = score_snapshots(ck, tmp_path, LINES, each=lambda so_far: seen.append(dict(so_far)))
    assert [list(s) for s in seen] == [list(HISTORY_EPOCHS[: i + 1]) for i in range(len(HISTORY_EPOCHS))]
    assert seen[-1] == scored
