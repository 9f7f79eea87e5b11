"""A translator whose German source opens without ``<sos>`` (``source_sos`` false): training, translation, the
page's run, the head finder and the history's probes all read the source as the model was trained to, and a
checkpoint saved before the setting existed still reads ``<sos>`` first."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from model.analysis.head_readers import our_reader
from model.analysis.runs import run
from model.core.checkpoint import load_checkpoint
from model.core.inference import source_ids, translate, translate_batch
from model.core.tokenize import EOS, SOS, tokenize, unwrap, wrap
from model.training import recipes
from model.training.train import TrainConfig
from tests.test_cli import data, train  # noqa: F401  (data is a fixture)

SENTENCE = "ein mann schläft ."


def test_wrap_puts_sos_first_unless_told_not_to_and_unwrap_gives_the_words_back():
    words = ["ein", "hund"]
    assert wrap(words) == [SOS, "ein", "hund", EOS]
    assert wrap(words, sos=False) == ["ein", "hund", EOS]
    assert unwrap(wrap(words)) == unwrap(wrap(words, sos=False)) == words
    assert unwrap(wrap(tokenize("<sos> ein <eos>", "de"))) == tokenize("<sos> ein <eos>", "de")  # typed, kept


def test_a_translator_trained_without_sos_reads_its_source_without_it_everywhere(data, tmp_path):  # noqa: F811
    out, work = tmp_path / "out", tmp_path / "work"
    train("translator", data, out, work, "--epochs", "1", "--keep-snapshots", "--set", "source_sos=false")
    ck = load_checkpoint(out, task="translator", device="cpu")
    assert ck.model.config.source_sos is False
    sos_id, eos_id = ck.model.config.sos_id, ck.model.config.eos_id

    # training read each pair's source as words then <eos>; the target still opens with <sos>
    cfg = TrainConfig(task="translator", data_dir=str(data), model={"min_freq": 1, "source_sos": False})
    b = recipes.get("translator").prepare(cfg)
    for src, tgt in b["pairs"]:
        assert src[0] != sos_id and src[-1] == eos_id and sos_id not in src
        assert tgt[0] == sos_id
    probe = recipes.get("translator").probes(b)["p0"]
    assert probe["tokens"][0] != SOS and probe["ids"] == b["src_vocab"].encode(probe["tokens"])

    tokens, ids, _, _ = source_ids(ck, SENTENCE)
    words = tokenize(SENTENCE, "de")
    assert tokens == [*words, EOS] and ids == ck.vocabs["src"].encode(tokens)

    t = translate(ck, SENTENCE)
    assert t.src_tokens == tokens and t.inputs["src"] == ids
    assert t.attention.encoder[0].shape[-1] == len(words) + 1
    with torch.inference_mode():  # the batch path reads the same ids as the page
        alone = ck.model.greedy(torch.tensor([ids]))[0].tolist()
    assert translate_batch(ck.model, ck.vocabs, [SENTENCE]) == [ck.vocabs["tgt"].decode(alone)]

    r = run(ck, SENTENCE)
    assert r.read == len(words) and r.kinds["encoder"].keys == tokens
    maps = our_reader(ck).batch([SENTENCE])  # the head finder reads what the page reads
    assert maps.keys["encoder"] == [len(ids)] and maps.inputs[0]["src"] == ids


def test_a_checkpoint_saved_before_the_setting_reads_sos_first(data, tmp_path):  # noqa: F811
    out, work = tmp_path / "out", tmp_path / "work"
    train("translator", data, out, work, "--epochs", "1")
    config = json.loads((out / "config.json").read_text())
    del config["config"]["source_sos"]
    (out / "config.json").write_text(json.dumps(config))
    ck = load_checkpoint(Path(out), task="translator", device="cpu")
    assert ck.model.config.source_sos is True
    assert translate(ck, SENTENCE).src_tokens == [SOS, *tokenize(SENTENCE, "de"), EOS]
