"""Reading the training history: a round trip through the files training writes, and a clear
error for every way the files can be missing or disagree."""

import json
import shutil

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from fixtures.tiny import CLASSIFIER, HISTORY_EPOCHS, TRANSLATOR, make_checkpoints, make_history
from model.nets.blocks import AttentionMaps
from model.training.history import HistoryError, MissingHistory, load_history, training_curves
from model.training.train import snapshot_probe


class FakeTask:
    """What ``snapshot_probe`` needs from a task: attention maps of the probes, here given per epoch."""

    def __init__(self, maps):
        self.maps = maps

    def probe_attention(self, model, probes):
        return self.maps


def test_round_trip_with_the_writer_training_uses(tmp_path):
    probes = {"p0": {"tokens": ["<sos>", "ein", "hund", "<eos>"]}, "p1": {"tokens": ["<sos>", "ja", "<eos>"]}}
    saved = {}
    for epoch in (1, 2, 3):
        out_len = 2 + epoch
        maps = {}
        for name, p in probes.items():
            n = len(p["tokens"])
            maps[name] = AttentionMaps(
                encoder=[torch.softmax(torch.randn(1, 2, n, n), -1) for _ in range(2)],
                decoder=[torch.softmax(torch.randn(1, 2, out_len, out_len), -1) for _ in range(3)],
                cross=[torch.softmax(torch.randn(1, 2, out_len, n), -1) for _ in range(3)],
            )
        saved[epoch] = maps
        snapshot_probe(tmp_path, None, probes, FakeTask(maps), epoch)
    h = load_history(tmp_path)
    assert h.epochs == [1, 2, 3]
    assert h.probes == {name: p["tokens"] for name, p in probes.items()}
    assert h.kinds("p0") == ["encoder", "decoder", "cross"]
    assert h.layers("p0", "encoder") == 2 and h.layers("p1", "cross") == 3
    cross = h.attention("p1", "cross", 2)
    assert cross.shape == (3, 2, 4, 3) and cross.dtype == np.float32
    expected = torch.stack([w[0] for w in saved[2]["p1"].cross]).half().float().numpy()
    np.testing.assert_array_equal(cross, expected)
    assert h.attention("p0", "decoder", 3).shape == (3, 2, 5, 5)
    with pytest.raises(KeyError, match="no epoch 9"):
        h.attention("p0", "encoder", 9)
    with pytest.raises(KeyError, match="no probe"):
        h.attention("p7", "encoder", 1)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))


def test_fake_histories_of_the_tiny_checkpoints(tiny):
    cls = load_history(tiny / "classifier")
    assert cls.epochs == list(HISTORY_EPOCHS) and cls.kinds("p0") == ["encoder"]
    assert cls.attention("p2", "encoder", 1).shape == (CLASSIFIER.layers, CLASSIFIER.heads, 9, 9)
    tr = load_history(tiny / "translator")
    assert tr.attention("p0", "cross", 2).shape == (TRANSLATOR.dec_layers, TRANSLATOR.heads, 5, 7)
    assert tr.attention("p0", "cross", 3).shape[2] == 6  # the output length changes between epochs


def copy(tiny, tmp_path, task="classifier"):
    shutil.copytree(tiny / task, tmp_path / task)
    return tmp_path / task


def edit_meta(d, change):
    meta = json.loads((d / "history.json").read_text())
    change(meta)
    (d / "history.json").write_text(json.dumps(meta))


def edit_tensors(d, change):
    tensors = load_file(str(d / "history.safetensors"))
    change(tensors)
    save_file(tensors, str(d / "history.safetensors"))


def test_no_history_is_its_own_error(tmp_path):
    with pytest.raises(MissingHistory, match="no training history"):
        load_history(tmp_path)
    (tmp_path / "history.json").write_text('{"epochs": [], "probes": {}}')
    save_file({}, str(tmp_path / "history.safetensors"))
    with pytest.raises(MissingHistory, match="no epochs yet"):
        load_history(tmp_path)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda d: (d / "history.json").unlink(), "history.json: missing, although history.safetensors exists"),
        (lambda d: (d / "history.safetensors").unlink(), "history.safetensors: missing"),
        (lambda d: (d / "history.json").write_text("{not json"), "not valid JSON"),
        (lambda d: edit_meta(d, lambda m: m.update(epochs=["one"])), '"epochs" must be a list'),
        (lambda d: edit_meta(d, lambda m: m.update(probes=["p0"])), '"probes" must map'),
        (
            lambda d: (d / "history.safetensors").write_bytes((d / "history.safetensors").read_bytes()[:200]),
            "unreadable or truncated",
        ),
        (lambda d: edit_meta(d, lambda m: m["epochs"].append(4)), "p0/encoder/0 has no map for epoch 4"),
        (lambda d: edit_meta(d, lambda m: m["epochs"].remove(3)), "epoch 3, which"),
        (lambda d: edit_meta(d, lambda m: m["probes"].pop("p1")), "probe 'p1', which"),
        (lambda d: edit_meta(d, lambda m: m["probes"].update(p9=["a"])), "lists probe 'p9'"),
        (lambda d: edit_meta(d, lambda m: m["probes"]["p0"].append("extra")), "has 4 tokens"),
        (lambda d: edit_tensors(d, lambda t: t.update({"p0/encoder/x/1": torch.zeros(1)})), "is not named"),
        (lambda d: edit_tensors(d, lambda t: t.update({"p0/attn/0/1": torch.zeros(1)})), "is not named"),
        (lambda d: edit_tensors(d, lambda t: [t.pop(f"p0/encoder/0/{e}") for e in (1, 2, 3)]), "layers [1]"),
        (lambda d: edit_tensors(d, lambda t: t.pop("p0/encoder/1/2")), "no map for epoch 2"),
        (lambda d: edit_tensors(d, lambda t: t.update({"p0/encoder/0/1": torch.zeros(3, 3)})), "shape (3, 3)"),
        (lambda d: edit_tensors(d, lambda t: t.update({"p0/encoder/0/1": torch.zeros(2, 3, 3)})), "differ in shape"),
    ],
)
def test_inconsistent_files_raise_a_clear_error(tiny, tmp_path, damage, message):
    d = copy(tiny, tmp_path)
    damage(d)
    with pytest.raises(HistoryError) as e:
        load_history(d)
    assert not isinstance(e.value, MissingHistory)
    assert message in str(e.value) and str(d) in str(e.value)


def test_translator_cross_keys_must_match_the_probe(tiny, tmp_path):
    d = copy(tiny, tmp_path, "translator")
    edit_meta(d, lambda m: m["probes"]["p0"].pop())
    with pytest.raises(HistoryError, match="p0/encoder at epoch 1 is 7 × 7 but probe 'p0' has 6 tokens"):
        load_history(d)


def test_training_curves():
    training = {
        "history": [
            {"score": 0.5, "dev_accuracy": 0.5, "epoch": 1, "step": 10, "train_loss": 0.7, "seconds": 3.0},
            {"score": 0.6, "dev_accuracy": 0.6, "epoch": 2, "step": 20, "train_loss": 0.6, "seconds": 6.0},
            {"epoch": 3, "train_loss": 0.5, "note": "text is skipped"},
        ]
    }
    curves = training_curves(training)
    assert list(curves) == ["epoch", "dev_accuracy", "train_loss"]
    assert curves["epoch"] == [1, 2, 3] and curves["train_loss"] == [0.7, 0.6, 0.5]
    assert curves["dev_accuracy"][:2] == [0.5, 0.6] and np.isnan(curves["dev_accuracy"][2])
    assert training_curves({}) == {} and training_curves({"history": []}) == {}


def test_history_stamp_changes_when_a_history_file_is_written(tmp_path):
    import os

    from model.training.history import history_stamp

    assert history_stamp(tmp_path) == (0.0, 0.0, 0.0)
    (tmp_path / "history.json").write_text("{}")
    os.utime(tmp_path / "history.json", (1000.0, 1000.0))
    assert history_stamp(tmp_path) == (0.0, 1000.0, 0.0)
