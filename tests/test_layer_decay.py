"""``--layer-decay`` (discriminative fine-tuning rates by depth) and ``attn_dropout`` (the dropout on the
attention weights, apart from the model's other dropout)."""

from __future__ import annotations

import pytest
import torch

from model.__main__ import TRAIN_OPTIONS
from model.nets.classifier import Classifier, ClassifierConfig
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig
from model.training.train import param_groups


def tiny_classifier(**kw) -> Classifier:
    torch.manual_seed(0)
    return Classifier(ClassifierConfig(vocab_size=30, dim=16, heads=2, layers=3, ff_dim=32, max_len=12, **kw))


def test_the_cli_takes_layer_decay():
    assert ("layer-decay", float) in TRAIN_OPTIONS


def test_every_parameter_is_in_exactly_one_group_with_its_depths_rate():
    model = tiny_classifier()
    groups = param_groups(model, 0.05, 0.5)
    ids = [id(p) for g in groups for p in g["params"]]
    assert sorted(ids) == sorted(id(p) for p in model.parameters())
    scale = {id(p): g["lr_scale"] for g in groups for p in g["params"]}
    decay = {id(p): g["weight_decay"] for g in groups for p in g["params"]}
    for name, p in model.named_parameters():
        if name.startswith("blocks."):
            want = 0.5 ** (3 - int(name.split(".")[1]))  # block 2 of 3: 0.5, block 0: 0.125
        elif name.startswith(("tok_emb", "pos_emb")):
            want = 0.5**4
        else:  # final norm and the classification head
            want = 1.0
        assert scale[id(p)] == want, name
        assert decay[id(p)] == (0.05 if p.dim() >= 2 else 0.0), name


def test_no_layer_decay_is_one_rate_for_all():
    assert {g["lr_scale"] for g in param_groups(tiny_classifier(), 0.01)} == {1.0}


def test_a_model_without_numbered_blocks_refuses_a_layer_decay():
    t = Translator(TranslatorConfig(src_vocab_size=20, tgt_vocab_size=20, dim=16, heads=2, enc_layers=1, dec_layers=1))
    with pytest.raises(ValueError, match="blocks"):
        param_groups(t, 0.0, 0.5)
    assert {g["lr_scale"] for g in param_groups(t, 0.0)} == {1.0}


def test_one_adam_step_moves_each_depth_by_at_most_its_own_rate():
    """Adam's first step moves every weight by lr * scale (its update is sign(g) with bias correction);
    so the embeddings, at 0.5**4 of the rate, move 16 times less than the head."""
    model = tiny_classifier(dropout=0.0)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    groups = param_groups(model, 0.0, 0.5)
    opt = torch.optim.AdamW(groups, lr=1e-2)
    for g in opt.param_groups:
        g["lr"] = 1e-2 * g["lr_scale"]
    ids = torch.randint(4, 30, (4, 10))
    logits, _ = model(ids)
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1, 0, 1])).backward()
    opt.step()
    scale = {id(p): g["lr_scale"] for g in groups for p in g["params"]}
    moved = {}
    for n, p in model.named_parameters():
        step = (p.detach() - before[n]).abs().max().item()
        assert step <= 1e-2 * scale[id(p)] * 1.001, n
        moved[n] = step
    assert moved["head.weight"] > 0.9e-2
    assert 0.9e-2 / 16 < moved["tok_emb.weight"] <= 1.001e-2 / 16


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: tiny_classifier(**kw),
        lambda **kw: Generator(
            GeneratorConfig(vocab_size=20, dim=16, heads=2, layers=2, ff_dim=16, block_size=8, **kw)
        ),
        lambda **kw: Translator(
            TranslatorConfig(src_vocab_size=20, tgt_vocab_size=20, dim=16, heads=2, enc_layers=1, dec_layers=1, **kw)
        ),
    ],
)
def test_attention_dropout_defaults_to_the_dropout_and_can_be_set_apart(make):
    def rates(model):
        return {m.dropout for m in model.modules() if type(m).__name__ == "MultiHeadAttention"}

    def others(model):
        return {m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)}

    assert rates(make(dropout=0.2)) == {0.2}
    model = make(dropout=0.2, attn_dropout=0.0)
    assert rates(model) == {0.0}
    assert others(model) == {0.2}


def test_without_attention_dropout_training_mode_leaves_the_weights_whole():
    """With attn_dropout 0 a model in training mode gives the attention weights it gives in eval mode
    (the other dropouts off too): no weight is zeroed or rescaled."""
    model = tiny_classifier(dropout=0.0, attn_dropout=0.0)
    ids = torch.randint(4, 30, (2, 9))
    model.train()
    _, train_maps = model(ids, return_attention=True)
    model.eval()
    _, eval_maps = model(ids, return_attention=True)
    for a, b in zip(train_maps.encoder, eval_maps.encoder, strict=True):
        torch.testing.assert_close(a, b)
    noisy = tiny_classifier(dropout=0.0, attn_dropout=0.5).train()
    torch.manual_seed(1)
    _, maps = noisy(ids, return_attention=True)
    assert any((m == 0).any() for m in maps.encoder)
