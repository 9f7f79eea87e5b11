"""Checkpoints round-trip exactly, fail with a CheckpointError that names the file, and never unpickle."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path

import pytest
import torch
from torch import nn

from model.core.checkpoint import CONFIG, WEIGHTS, CheckpointError, default_dir, load_checkpoint, save_checkpoint
from model.core.tokenize import Vocab, char_vocab
from model.nets.classifier import Classifier, ClassifierConfig
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig

WORDS = Vocab.build([["a", "man", "runs", "dogs", "play"]])
GERMAN = Vocab.build([["ein", "mann", "läuft"]])
CHARS = char_vocab("to be or not")


def tiny(task: str) -> tuple[nn.Module, dict[str, Vocab], tuple[torch.Tensor, ...]]:
    """A tiny model of ``task`` with random weights, its vocabularies and an example input."""
    if task == "classifier":
        model = Classifier(ClassifierConfig(vocab_size=len(WORDS), dim=16, heads=2, layers=1, ff_dim=32, max_len=8))
        return model, {"words": WORDS}, (torch.tensor([[4, 5, 6, 0], [7, 8, 0, 0]]),)
    if task == "generator":
        model = Generator(GeneratorConfig(vocab_size=len(CHARS), dim=16, heads=2, layers=1, ff_dim=32, block_size=8))
        return model, {"chars": CHARS}, (torch.tensor([[1, 2, 3, 4, 5]]),)
    model = Translator(
        TranslatorConfig(
            src_vocab_size=len(GERMAN),
            tgt_vocab_size=len(WORDS),
            dim=16,
            heads=2,
            enc_layers=1,
            dec_layers=1,
            ff_dim=32,
            max_len=8,
        )
    )
    return model, {"src": GERMAN, "tgt": WORDS}, (torch.tensor([[2, 4, 5, 3]]), torch.tensor([[2, 6, 7]]))


def saved(task: str, directory: Path) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    model, vocabs, inputs = tiny(task)
    with torch.no_grad():  # perturb everything so that no default initialisation can pass by luck
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    save_checkpoint(directory, task, model, vocabs, training={"steps": 3}, results={"metric": 0.5})
    return model.eval(), inputs


TASKS = ["classifier", "generator", "translator"]


@pytest.mark.parametrize("task", TASKS)
def test_round_trip_gives_identical_outputs(task: str, tmp_path: Path) -> None:
    model, inputs = saved(task, tmp_path)
    ck = load_checkpoint(tmp_path, task=task)
    assert ck.task == task and ck.directory == tmp_path
    assert not ck.model.training
    assert ck.training == {"steps": 3} and ck.results == {"metric": 0.5}
    assert ck.model.config == model.config
    assert {name: v.itos for name, v in ck.vocabs.items()} == {name: v.itos for name, v in tiny(task)[1].items()}
    with torch.no_grad():
        expected, expected_maps = model(*inputs, return_attention=True)
        got, got_maps = ck.model(*inputs, return_attention=True)
    assert torch.equal(got, expected)
    for ours, theirs in zip(
        (got_maps.encoder, got_maps.decoder, got_maps.cross),
        (expected_maps.encoder, expected_maps.decoder, expected_maps.cross),
    ):
        assert len(ours) == len(theirs) and all(torch.equal(a, b) for a, b in zip(ours, theirs))
    for name, tensor in model.state_dict().items():
        assert torch.equal(ck.model.state_dict()[name], tensor), name


@pytest.mark.parametrize("task,tied", [("generator", ("lm_head", "tok_emb")), ("translator", ("out", "tgt_emb"))])
def test_tied_weights_stay_tied(task: str, tied: tuple[str, str], tmp_path: Path) -> None:
    saved(task, tmp_path)
    model = load_checkpoint(tmp_path).model
    head, embedding = (getattr(model, name).weight for name in tied)
    assert head is embedding
    with torch.no_grad():
        embedding[0, 0] += 1.0
    assert head[0, 0] == embedding[0, 0]


def test_files_are_json_and_safetensors(tmp_path: Path) -> None:
    saved("classifier", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [CONFIG, WEIGHTS]  # no temporary files left
    meta = json.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    assert meta["task"] == "classifier" and meta["config"]["dim"] == 16 and meta["vocabs"]["words"] == WORDS.itos
    header_len = int.from_bytes((tmp_path / WEIGHTS).read_bytes()[:8], "little")  # safetensors layout
    header = json.loads((tmp_path / WEIGHTS).read_bytes()[8 : 8 + header_len])
    assert "head.weight" in header


def test_loading_never_unpickles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved("translator", tmp_path)

    def forbidden(*args, **kwargs):
        raise AssertionError("a checkpoint load must not unpickle")

    monkeypatch.setattr(torch, "load", forbidden)
    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    monkeypatch.setattr(pickle, "Unpickler", forbidden)
    load_checkpoint(tmp_path, task="translator")


def test_missing_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(CheckpointError, match=re.escape(str(missing / CONFIG))):
        load_checkpoint(missing)


def test_missing_weights(tmp_path: Path) -> None:
    saved("classifier", tmp_path)
    (tmp_path / WEIGHTS).unlink()
    with pytest.raises(CheckpointError, match=re.escape(f"{tmp_path / WEIGHTS}: missing")):
        load_checkpoint(tmp_path)


@pytest.mark.parametrize("task", TASKS)
def test_truncated_weights(task: str, tmp_path: Path) -> None:
    saved(task, tmp_path)
    weights = tmp_path / WEIGHTS
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(CheckpointError, match=re.escape(str(weights))):
        load_checkpoint(tmp_path)


def test_garbage_weights(tmp_path: Path) -> None:
    saved("classifier", tmp_path)
    (tmp_path / WEIGHTS).write_bytes(b"\x00" * 3)
    with pytest.raises(CheckpointError, match=re.escape(str(tmp_path / WEIGHTS))):
        load_checkpoint(tmp_path)


@pytest.mark.parametrize("task", TASKS)
def test_config_of_another_shape(task: str, tmp_path: Path) -> None:
    saved(task, tmp_path)
    meta = json.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    meta["config"]["dim"] = 32
    (tmp_path / CONFIG).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(CheckpointError, match=re.escape(str(tmp_path / WEIGHTS))) as info:
        load_checkpoint(tmp_path)
    assert str(tmp_path / CONFIG) in str(info.value) and "wrong shape" in str(info.value)


def test_config_with_unknown_field(tmp_path: Path) -> None:
    saved("generator", tmp_path)
    meta = json.loads((tmp_path / CONFIG).read_text(encoding="utf-8"))
    meta["config"]["flux_capacitor"] = 1
    (tmp_path / CONFIG).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(CheckpointError, match=re.escape(str(tmp_path / CONFIG))):
        load_checkpoint(tmp_path)


def test_config_not_json(tmp_path: Path) -> None:
    saved("generator", tmp_path)
    (tmp_path / CONFIG).write_text("{not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match=re.escape(f"{tmp_path / CONFIG}: not valid JSON")):
        load_checkpoint(tmp_path)


def test_wrong_task(tmp_path: Path) -> None:
    saved("generator", tmp_path)
    with pytest.raises(CheckpointError, match=re.escape(str(tmp_path / CONFIG))) as info:
        load_checkpoint(tmp_path, task="translator")
    assert "generator" in str(info.value)


def test_weights_of_another_model(tmp_path: Path) -> None:
    saved("classifier", tmp_path / "a")
    saved("generator", tmp_path / "b")
    (tmp_path / "b" / WEIGHTS).replace(tmp_path / "a" / WEIGHTS)
    with pytest.raises(CheckpointError, match=re.escape(str(tmp_path / "a" / WEIGHTS))):
        load_checkpoint(tmp_path / "a")


def test_default_dir_follows_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    assert default_dir("translator") == tmp_path / "translator"
