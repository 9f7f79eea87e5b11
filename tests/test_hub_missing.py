"""A Hugging Face checkpoint without its prediction weights (a base ``BertModel``, or a model whose
head tensors were deleted from its safetensors) opens attention-only and predicts nothing, with maps
equal to the complete model's; one missing weights its attention is computed from is refused; a
complete one (tied weights included) still predicts."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from safetensors import safe_open
from transformers import BertModel

from fixtures.hub_tiny import (
    drop_weights,
    save_bert,
    save_bert_base,
    save_distilbert,
    save_gpt2,
    save_marian_untied,
    save_t5,
)
from model.hub.errors import HubError
from model.hub.load import load
from model.hub.run import TOP, run

TEXT = "the cat sat on the mat ."
MASKED = "the cat sat on the [MASK] ."
# family: (builder, the head's tensors in the file, the head the complete model opens with)
HEADS = {
    "bert": (save_bert, r"^cls\.", "masked-lm"),
    "gpt2": (lambda folder: save_gpt2(folder, tie_word_embeddings=False), r"^lm_head\.", "causal-lm"),
    "distilbert": (save_distilbert, r"^(pre_)?classifier\.", "classifier"),
    "marian": (save_marian_untied, r"^lm_head\.", "seq2seq"),
}
# family: (builder, a weight its attention is computed from, as the file names it); T5 keeps its encoder
# and decoder on the full model, without a base-model attribute
ATTENTION = {
    "bert": (save_bert, "bert.encoder.layer.0.attention.self.query.weight"),
    "gpt2": (save_gpt2, "transformer.h.1.attn.c_attn.weight"),
    "distilbert": (save_distilbert, "distilbert.transformer.layer.0.attention.k_lin.weight"),
    "marian": (save_marian_untied, "model.decoder.layers.0.encoder_attn.v_proj.weight"),
    "t5": (save_t5, "encoder.block.0.layer.0.SelfAttention.q.weight"),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, tuple]:
    """family: (the complete model, the one without its head tensors, the names deleted)."""
    root = tmp_path_factory.mktemp("missing")
    out = {}
    for name, (build, pattern, _) in HEADS.items():
        headless = build(root / f"{name}-headless")
        gone = drop_weights(headless, pattern)
        out[name] = (load(str(build(root / name))), load(str(headless)), gone)
    return out


def same_maps(a, b) -> None:
    assert a.kinds.keys() == b.kinds.keys()
    for name in a.kinds:
        assert a.kinds[name].queries == b.kinds[name].queries
        np.testing.assert_array_equal(a.kinds[name].weights, b.kinds[name].weights)


def test_a_base_bert_opens_attention_only(tmp_path):
    folder = save_bert_base(tmp_path / "base")
    hub = load(str(folder))
    assert (hub.shape, hub.head, hub.spec.output, hub.missing_head) == ("encoder", "base", "", "masked-lm")
    assert hub.missing and all(k.startswith("cls.predictions.") for k in hub.missing)
    assert "masked-language-model head" in hub.missing_note and hub.missing[0] in hub.missing_note
    r = run(hub, MASKED).result
    assert r.prediction == "" and r.probs == {} and "prediction" not in r.notes  # not even "put [MASK] in"
    with torch.no_grad():  # the maps are those of the checkpoint's own class, opened directly
        own = BertModel.from_pretrained(folder, attn_implementation="eager")(
            input_ids=torch.tensor([r.inputs["ids"]]), output_attentions=True
        ).attentions
    np.testing.assert_allclose(r.kinds["encoder"].weights, torch.stack([m[0] for m in own]).numpy(), atol=1e-6)


@pytest.mark.parametrize("name", list(HEADS))
def test_deleted_head_tensors_open_attention_only(models, name):
    complete, hub, gone = models[name]
    assert (hub.head, hub.spec.output, hub.missing_head) == ("base", "", HEADS[name][2])
    assert set(gone) <= set(hub.missing) and all(re.search(HEADS[name][1], k) for k in hub.missing)
    assert hub.missing_note and complete.missing == () and complete.missing_note == ""
    text = MASKED if name == "bert" else TEXT
    out = run(hub, text, generate=3)
    r = out.result
    assert r.prediction == "" and r.probs == {} and out.steps == []
    # what it shows are the complete model's maps: only the head differs between the two files
    reference = run(complete, text, target=text if name == "marian" else None).result
    same_maps(r, reference)


def test_a_headless_encoder_decoder_reads_the_text_or_the_target(models):
    _, hub, _ = models["marian"]
    r = run(hub, TEXT).result
    assert r.inputs["tgt"][0] == hub.model.config.decoder_start_token_id
    assert "writes nothing" in r.notes["prediction"] and "reference" not in r.notes
    given = run(hub, TEXT, target="a man rides a bike .").result
    assert given.prediction == "" and given.notes["reference"] == "a man rides a bike ."
    assert given.inputs["tgt"] != r.inputs["tgt"] and "prediction" not in given.notes


@pytest.mark.parametrize("name", list(HEADS))
def test_complete_models_still_predict(models, name):
    """Their predictions are their heads' own: the probabilities of the model's logits, called directly."""
    hub = models[name][0]
    assert (hub.head, hub.missing, hub.missing_head) == (HEADS[name][2], (), "")
    out = run(hub, MASKED if name == "bert" else TEXT, generate=3 if name == "marian" else 0)
    r = out.result
    with torch.no_grad():
        if name == "marian":  # each generated token's probability, from one teacher-forced pass
            logits = hub.model(
                input_ids=torch.tensor([r.inputs["src"]]), decoder_input_ids=torch.tensor([r.inputs["tgt"]])
            ).logits[0]
            assert out.steps and r.prediction == hub.tokenizer.decode(
                [s.id for s in out.steps], skip_special_tokens=True
            )
            probs = torch.softmax(logits, -1)
            np.testing.assert_allclose(
                [s.prob for s in out.steps], [float(probs[s.position, s.id]) for s in out.steps], atol=1e-5
            )
            return
        logits = hub.model(input_ids=torch.tensor([r.inputs["ids"]])).logits[0]
    if name == "distilbert":
        np.testing.assert_allclose(list(r.probs.values()), torch.softmax(logits, -1).tolist(), atol=1e-6)
        return
    row = logits[r.inputs["ids"].index(hub.tokenizer.mask_token_id)] if name == "bert" else logits[-1]
    expected = torch.softmax(row, -1).topk(TOP).values.tolist()
    assert len(r.probs) == TOP and r.prediction
    np.testing.assert_allclose(list(r.probs.values()), expected, atol=1e-6)


def test_tied_weights_are_not_missing(tmp_path):
    """BERT's decoder is tied to its word embeddings and GPT-2's output layer to its token embeddings:
    neither is in the file, and neither model lacks it."""
    for build, tied in ((save_bert, "cls.predictions.decoder.weight"), (save_gpt2, "lm_head.weight")):
        folder = build(tmp_path / tied)
        with safe_open(folder / "model.safetensors", "pt") as f:
            assert tied not in f.keys()
        hub = load(str(folder))
        assert hub.missing == () and hub.head != "base"


@pytest.mark.parametrize("name", list(ATTENTION))
def test_a_missing_attention_weight_is_refused(tmp_path, name):
    build, weight = ATTENTION[name]
    folder = build(tmp_path / name)
    drop_weights(folder, "^" + re.escape(weight) + "$")
    with pytest.raises(HubError, match=re.escape(weight)) as err:
        load(str(folder))
    assert "attention is computed from" in str(err.value) and "random" in str(err.value)


def test_many_missing_weights_are_named_a_few_at_a_time(tmp_path):
    folder = save_bert(tmp_path / "bert")
    gone = drop_weights(folder, r"^bert\.encoder\.layer\.0\.attention\.")
    assert len(gone) > 3
    with pytest.raises(HubError, match=rf"lacks {len(gone)} of .* and {len(gone) - 3} more"):
        load(str(folder))
