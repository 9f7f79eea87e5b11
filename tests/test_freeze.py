"""``--freeze``: parameters kept as a pretrained model left them while the rest fine-tunes."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from model.__main__ import TRAIN_OPTIONS
from model.nets.classifier import Classifier, ClassifierConfig
from model.training.train import freeze
from tests.test_cli import data, train  # noqa: F401  (data is a fixture)


def test_the_cli_takes_freeze():
    assert ("freeze", str) in TRAIN_OPTIONS


def test_freeze_names_the_parameters_it_stops_and_refuses_an_unknown_prefix():
    model = Classifier(ClassifierConfig(vocab_size=30, dim=16, heads=2, layers=2, ff_dim=32, max_len=12))
    frozen = freeze(model, "pos_emb, blocks.0.")
    want = [n for n, _ in model.named_parameters() if n == "pos_emb.weight" or n.startswith("blocks.0.")]
    assert frozen == want and len(want) > 2
    assert all(p.requires_grad == (n not in want) for n, p in model.named_parameters())
    assert freeze(Classifier(ClassifierConfig(vocab_size=30, dim=16)), "") == []
    with pytest.raises(ValueError, match="'blocks.7.'"):
        freeze(model, "blocks.0.,blocks.7.")


def test_a_fine_tune_keeps_the_frozen_block_as_it_started_and_trains_the_rest(data, tmp_path):  # noqa: F811
    start = tmp_path / "start"
    train("classifier", data, start, tmp_path / "w0", "--epochs", "1")
    out, work = tmp_path / "ft", tmp_path / "w1"
    train(
        "classifier",
        data,
        out,
        work,
        "--init-from",
        str(start),
        "--freeze",
        "blocks.0.",
        "--epochs",
        "2",
        "--keep-snapshots",
    )
    before, after = load_file(str(start / "model.safetensors")), load_file(str(work / "epoch002.safetensors"))
    kept = [k for k in before if k.startswith("blocks.0.")]
    assert kept and all(torch.equal(before[k], after[k]) for k in kept)
    assert not torch.equal(before["head.weight"], after["head.weight"])
    assert not torch.equal(before["blocks.1.attn.to_q.weight"], after["blocks.1.attn.to_q.weight"])
