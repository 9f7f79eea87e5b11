"""``--pos-init word``: every learned positional table starts at the size of the scaled word embeddings it is
added to, and nothing else in the model moves."""

from __future__ import annotations

import math

import pytest
import torch

from model.__main__ import TRAIN_OPTIONS
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig
from model.training.train import positions_at_word_scale


def entry_size(model, name: str) -> float:
    return float(dict(model.named_parameters())[name].detach().std())


@pytest.mark.parametrize(
    ("model", "words", "tables"),
    [
        (
            Generator(GeneratorConfig(vocab_size=40, dim=64, heads=2, layers=1, ff_dim=64, block_size=256)),
            "tok_emb",
            ["pos_emb"],
        ),
        (
            Translator(
                TranslatorConfig(
                    src_vocab_size=50,
                    tgt_vocab_size=60,
                    dim=64,
                    heads=2,
                    enc_layers=1,
                    dec_layers=1,
                    ff_dim=64,
                    max_len=256,
                )
            ),
            "src_emb",
            ["src_pos", "tgt_pos"],
        ),
    ],
)
def test_positions_start_at_the_scaled_words_size(model, words, tables):
    torch.manual_seed(0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    dim = model.config.dim
    word_size = entry_size(model, f"{words}.weight") * math.sqrt(dim)  # what `embed` adds: tok(ids) * √dim
    assert entry_size(model, f"{tables[0]}.weight") < word_size / 4  # the default start: far smaller
    assert positions_at_word_scale(model) == tables
    for t in tables:
        assert entry_size(model, f"{t}.weight") == pytest.approx(word_size, rel=0.1)
    moved = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert moved == {f"{t}.weight" for t in tables}


def test_train_takes_pos_init_as_an_option():
    assert ("pos-init", str) in TRAIN_OPTIONS
