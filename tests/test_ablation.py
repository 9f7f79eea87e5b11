"""Head ablation through ``head_mask``: all-ones equals no mask, a switched-off head changes the
output exactly as zeroing its slice of the unifying projection does, the shared model is never
changed, and the translator's three kinds of attention are masked separately."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from fixtures.tiny import CLASSIFIER, GENERATOR, TRANSLATOR, make_checkpoints
from model.analysis.ablation import KINDS, ablate, head_layout, head_masks, model_head_mask
from model.analysis.runs import run, with_weights
from model.core.checkpoint import Checkpoint, load_checkpoint
from model.core.inference import next_char, translate

TEXTS = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "O Romeo, Romeo! wherefore art thou",
    "translator": "zwei hunde spielen im schnee .",
}


@pytest.fixture(scope="module")
def cks(tmp_path_factory) -> dict[str, Checkpoint]:
    root: Path = make_checkpoints(tmp_path_factory.mktemp("checkpoints"))
    return {task: load_checkpoint(root / task, task=task) for task in TEXTS}


def ids(ck: Checkpoint) -> torch.Tensor:
    if ck.task == "generator":
        vocab = ck.vocabs["chars"]
        return torch.tensor([[vocab.id(ch) for ch in TEXTS["generator"]]])
    return torch.tensor([ck.vocabs["words"].encode(TEXTS["classifier"].split())])


def test_layouts(cks):
    assert head_layout(cks["classifier"].model) == {"encoder": (CLASSIFIER.layers, CLASSIFIER.heads)}
    assert head_layout(cks["generator"].model) == {"encoder": (GENERATOR.layers, GENERATOR.heads)}
    t = TRANSLATOR
    assert head_layout(cks["translator"].model) == {
        "encoder": (t.enc_layers, t.heads),
        "decoder": (t.dec_layers, t.heads),
        "cross": (t.dec_layers, t.heads),
    }


def test_head_masks_zero_exactly_the_heads_off():
    layout = {"encoder": (2, 4), "decoder": (3, 4), "cross": (3, 4)}
    masks = head_masks(layout, [("cross", 1, 2), ("encoder", 0, 3), ("cross", 1, 2)])
    assert {k: tuple(m.shape) for k, m in masks.items()} == layout
    assert masks["decoder"].eq(1).all()
    assert masks["encoder"].sum() == 7 and masks["encoder"][0, 3] == 0
    assert masks["cross"].sum() == 11 and masks["cross"][1, 2] == 0


@pytest.mark.parametrize(
    "off, message",
    [
        ([("cross", 0, 0)], "no 'cross' attention"),
        ([("encoder", 2, 0)], "layer 2, head 0 does not exist"),
        ([("encoder", 0, 3)], "heads 0..2"),
        ([("encoder", -1, 0)], "does not exist"),
    ],
)
def test_head_masks_reject_heads_that_do_not_exist(off, message):
    with pytest.raises(ValueError, match=message):
        head_masks({"encoder": (2, 3)}, off)


@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_all_ones_mask_equals_no_mask(cks, task):
    model = cks[task].model
    x = ids(cks[task])
    plain, maps = model(x, return_attention=True)
    masked, masked_maps = model(x, return_attention=True, head_mask=model_head_mask(model, []))
    assert torch.equal(plain, masked)
    assert all(torch.equal(a, b) for a, b in zip(maps.encoder, masked_maps.encoder))


def test_all_ones_mask_equals_no_mask_translator(cks):
    ck = cks["translator"]
    plain = translate(ck, TEXTS["translator"])
    masked = translate(ck, TEXTS["translator"], head_mask=model_head_mask(ck.model, []))
    assert plain.tgt_out == masked.tgt_out
    for kind in KINDS:
        assert all(torch.equal(a, b) for a, b in zip(getattr(plain.attention, kind), getattr(masked.attention, kind)))


@pytest.mark.parametrize("task", ["classifier", "generator"])
@pytest.mark.parametrize("layer, head", [(0, 0), (1, 1)])
def test_head_off_equals_zeroing_its_slice_of_the_unifying_projection(cks, task, layer, head):
    """Independent reference: a copy of the model whose unify weights ignore that head's output."""
    model = cks[task].model
    x = ids(cks[task])
    ref = copy.deepcopy(model)
    attn = ref.blocks[layer].attn
    s = attn.head_dim
    with torch.no_grad():
        attn.unify.weight[:, head * s : (head + 1) * s] = 0.0
    masked, _ = model(x, head_mask=model_head_mask(model, [("encoder", layer, head)]))
    expected, _ = ref(x)
    plain, _ = model(x)
    assert torch.allclose(masked, expected, atol=1e-5)
    assert not torch.allclose(masked, plain, atol=1e-4)


def test_switching_a_head_off_changes_prediction_and_later_attention_only(cks):
    ck = cks["classifier"]
    a = ablate(ck, TEXTS["classifier"], [("encoder", 0, 1)])
    assert a.off == (("encoder", 0, 1),)
    assert a.before.probs != a.after.probs
    delta = a.delta()["encoder"]
    assert np.abs(delta[0]).max() == 0  # a head's own layer computes the same weights
    assert np.abs(delta[1]).max() > 1e-4  # the layer above reads a different input
    assert np.allclose(a.after.kinds["encoder"].weights[1].sum(-1), 1, atol=1e-6), "ablated rows still sum to 1"
    change = a.change_per_head("encoder")
    assert change.shape == delta.shape[:2] and (change[0] == 0).all()
    assert change[1, 0] == pytest.approx(np.abs(delta[1, 0]).max())
    assert a.off_in("encoder") == {(0, 1)} and a.off_in("cross") == set()


def test_nothing_off_changes_nothing(cks):
    for task, text in TEXTS.items():
        a = ablate(cks[task], text, [])
        assert all(np.abs(d).max() == 0 for d in a.delta().values()), task


def test_generator_next_char(cks):
    ck = cks["generator"]
    before = next_char(ck, TEXTS["generator"])
    assert abs(sum(before.probs.values()) - 1) < 1e-5
    assert before.chars == list(TEXTS["generator"]) and not before.truncated
    long = next_char(ck, "x" * 100 + TEXTS["generator"][-GENERATOR.block_size :])
    assert long.truncated and len(long.chars) == GENERATOR.block_size
    a = ablate(ck, TEXTS["generator"], [("encoder", 1, 0)])
    assert a.before.probs.keys() == a.after.probs.keys()
    assert max(abs(a.before.probs[c] - a.after.probs[c]) for c in a.before.probs) > 1e-6
    with pytest.raises(ValueError, match="empty"):
        next_char(ck, "")


@pytest.mark.parametrize("kind", KINDS)
def test_translator_masks_each_kind_separately(cks, kind):
    ck = cks["translator"]
    a = ablate(ck, TEXTS["translator"], [(kind, 0, 1)])
    delta = a.delta()  # same tokens, so shapes match
    changed = {k: [bool(np.abs(d).max() > 1e-6) for d in delta[k]] for k in KINDS}
    if kind == "encoder":
        # the second encoder layer and every cross-attention (its keys are the encoder output) change;
        # decoder self-attention of layer 0 reads only the English inputs
        assert changed["encoder"] == [False, True]
        assert all(changed["cross"]) and not changed["decoder"][0]
    else:
        assert not any(changed["encoder"])  # the decoder never feeds back into the encoder
        assert not changed[kind][0]  # the ablated layer's own weights stay
        assert changed["decoder"][1] and changed["cross"][1]
    masks = model_head_mask(ck.model, [(kind, 0, 1)])
    assert set(masks) == set(KINDS) and masks[kind][0, 1] == 0 and sum(m.numel() - m.sum() for m in masks.values()) == 1


def test_translator_after_maps_follow_the_unablated_translation(cks):
    ck = cks["translator"]
    off = [("cross", layer, head) for layer in range(TRANSLATOR.dec_layers) for head in range(TRANSLATOR.heads)]
    a = ablate(ck, TEXTS["translator"], off)
    for kind in KINDS:
        assert a.after.kinds[kind].weights.shape == a.before.kinds[kind].weights.shape
    # with every cross head off the decoder cannot read the German at all: the same output for any source
    other = ablate(ck, "ein mann fährt fahrrad .", off)
    assert other.after.prediction == a.after.prediction


def test_the_shared_model_is_bitwise_unchanged(cks):
    for task, text in TEXTS.items():
        ck = cks[task]
        state = {k: v.clone() for k, v in ck.model.state_dict().items()}
        layout = head_layout(ck.model)
        off = [(kind, layers - 1, heads - 1) for kind, (layers, heads) in layout.items()]
        ablate(ck, text, off)
        ablate(ck, text, [])
        after = ck.model.state_dict()
        assert state.keys() == after.keys()
        assert all(torch.equal(state[k], after[k]) for k in state), task
        assert not ck.model.training


def test_with_weights_rejects_different_shapes(cks):
    r = run(cks["classifier"], TEXTS["classifier"])
    w = r.kinds["encoder"].weights
    with pytest.raises(ValueError, match="do not fit"):
        with_weights(r, {"encoder": w[:, :, :-1]})
    assert np.array_equal(with_weights(r, {"encoder": w * 0}).kinds["encoder"].weights, w * 0)
