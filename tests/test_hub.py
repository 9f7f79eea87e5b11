"""Hugging Face models opened by path (tiny random ones from fixtures/hub_tiny.py, no network): the maps
in a RunResult are the model's own ``output_attentions``, generation's per-step maps equal one
teacher-forced pass, and the step-by-step explanation recomputes every weight exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fixtures.hub_tiny import BUILDERS, SIZE
from model.core.explanation import NotExplained
from model.hub.explain import explain, forward
from model.hub.load import load
from model.hub.run import run

TEXT = "the cat sat on the mat ."
SHAPES = {
    "gpt2": ("decoder", "causal-lm", "bytelevel"),
    "bert": ("encoder", "masked-lm", "wordpiece"),
    "distilbert": ("encoder", "classifier", "wordpiece"),
    "marian": ("encoder-decoder", "seq2seq", "metaspace"),
    "bart": ("encoder-decoder", "seq2seq", "metaspace"),
    "t5": ("encoder-decoder", "seq2seq", "metaspace"),
    "marian-spm": ("encoder-decoder", "seq2seq", "metaspace"),
}
EXPLAINED = ["gpt2", "bert", "distilbert", "marian", "bart", "marian-spm"]
GENERATORS = ["gpt2", "marian", "bart", "t5", "marian-spm"]
ATOL = 1e-6  # the same float32 computation on the same CPU, in another order


@pytest.fixture(scope="module")
def hubs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hub")
    return {name: load(str(build(root / name))) for name, build in BUILDERS.items()}


def direct(hub, ids: list[int], tgt: list[int] | None = None):
    """The model's own forward pass, called here without model.hub's code."""
    x = torch.tensor([ids])
    extra = {"decoder_input_ids": torch.tensor([tgt])} if tgt is not None else {}
    with torch.no_grad():
        return hub.model(input_ids=x, output_attentions=True, **extra)


def stacked(maps) -> np.ndarray:
    return torch.stack([m[0] for m in maps]).numpy()


@pytest.mark.parametrize("name", list(SHAPES))
def test_load_describes_the_model(hubs, name):
    hub = hubs[name]
    assert (hub.shape, hub.head, hub.scheme) == SHAPES[name]
    assert hub.model_type == name.removesuffix("-spm")
    assert hub.params == sum(p.numel() for p in hub.model.parameters())  # the meta-device estimate was exact
    assert hub.max_tokens == SIZE["positions"]
    assert not hub.model.training and hub.model.config._attn_implementation == "eager"
    assert hub.device == torch.device("cpu")


@pytest.mark.parametrize("name", ["bert", "distilbert"])
def test_encoder_maps_are_output_attentions(hubs, name):
    hub = hubs[name]
    r = run(hub, TEXT).result
    ids = r.inputs["ids"]
    kind = r.kinds["encoder"]
    np.testing.assert_allclose(kind.weights, stacked(direct(hub, ids).attentions), atol=ATOL)
    assert kind.weights.shape == (SIZE["layers"], SIZE["heads"], len(ids), len(ids))
    np.testing.assert_allclose(kind.weights.sum(-1), 1.0, atol=1e-5)
    assert kind.queries[0] == "[CLS]" and kind.keys[-1] == "[SEP]"
    assert kind.special == [True] + [False] * (len(ids) - 2) + [True]
    assert kind.mask.all() and r.task == "hub" and r.read == len(ids) - 2 and not r.truncated


def test_classifier_predicts_a_label(hubs):
    hub = hubs["distilbert"]
    r = run(hub, TEXT).result
    logits = hub.model(input_ids=torch.tensor([r.inputs["ids"]])).logits[0]
    expected = torch.softmax(logits, -1).tolist()
    assert list(r.probs) == ["NEGATIVE", "POSITIVE"]
    np.testing.assert_allclose(list(r.probs.values()), expected, atol=1e-6)
    assert r.prediction == max(r.probs, key=r.probs.get)


def test_masked_lm_fills_the_mask(hubs):
    hub = hubs["bert"]
    r = run(hub, "the cat sat on the [MASK] .").result
    ids = r.inputs["ids"]
    at = ids.index(hub.tokenizer.mask_token_id)
    logits = direct(hub, ids).logits[0, at]
    best = hub.tokenizer.convert_ids_to_tokens(int(logits.argmax()))
    assert max(r.probs.values()) == pytest.approx(float(torch.softmax(logits, -1).max()), abs=1e-6)
    assert best.removeprefix("##") in r.prediction and "[MASK]" not in r.prediction
    plain = run(hub, TEXT).result
    assert plain.prediction == "" and "[MASK]" in plain.notes["prediction"]


def test_decoder_predicts_the_next_token(hubs):
    hub = hubs["gpt2"]
    r = run(hub, TEXT).result
    ids = r.inputs["ids"]
    out = direct(hub, ids)
    kind = r.kinds["decoder"]
    np.testing.assert_allclose(kind.weights, stacked(out.attentions), atol=ATOL)
    assert np.all(kind.weights[..., ~kind.mask] == 0) and (kind.mask == np.tril(kind.mask)).all()
    probs = torch.softmax(out.logits[0, -1], -1)
    assert list(r.probs.values()) == pytest.approx(probs.topk(5).values.tolist(), abs=1e-6)
    assert r.prediction == next(iter(r.probs))


@pytest.mark.parametrize("name", GENERATORS)
def test_generation_steps_equal_a_teacher_forced_pass(hubs, name):
    hub = hubs[name]
    out = run(hub, TEXT, generate=6)
    r = out.result
    if hub.shape == "decoder":
        fed = r.inputs["ids"]
        ref = direct(hub, fed)
        maps = {"decoder": ref.attentions}
        logits = ref.logits[0]
        first = len(fed) - len(out.steps) + 1  # the prompt's last token predicts the first new one
    else:
        fed = r.inputs["tgt"]
        ref = direct(hub, r.inputs["src"], fed)
        maps = {"encoder": ref.encoder_attentions, "decoder": ref.decoder_attentions, "cross": ref.cross_attentions}
        logits = ref.logits[0]
        first = 1
        assert r.prediction == hub.tokenizer.decode(fed[1:] + [out.steps[-1].id], skip_special_tokens=True)
    assert 1 <= len(out.steps) <= 6
    for kind, expected in maps.items():
        np.testing.assert_allclose(r.kinds[kind].weights, stacked(expected), atol=1e-5, err_msg=kind)
    for s, step in enumerate(out.steps):
        assert step.position == first - 1 + s
        p = torch.softmax(logits[step.position], -1)
        assert step.prob == pytest.approx(float(p[step.id]), abs=1e-5)
        if s < len(out.steps) - 1:  # greedy (the last may be a forced end-of-sequence)
            assert step.id == int(p.argmax())
            assert fed[step.position + 1] == step.id


def test_seq2seq_reads_a_target_teacher_forced(hubs):
    hub = hubs["marian"]
    r = run(hub, "der mann fährt", target="a man rides").result
    fed = r.inputs["tgt"]
    labels = hub.tokenizer(text_target="a man rides")["input_ids"]
    assert fed == [hub.model.config.decoder_start_token_id, *labels[:-1]]
    assert r.notes["reference"] == "a man rides" and r.prediction == "a man rides"
    ref = direct(hub, r.inputs["src"], fed)
    np.testing.assert_allclose(r.kinds["cross"].weights, stacked(ref.cross_attentions), atol=ATOL)
    cross = r.kinds["cross"]
    assert cross.cross and cross.queries == r.kinds["decoder"].queries and cross.keys == r.kinds["encoder"].keys


def test_long_input_is_cut_to_the_model_maximum(hubs):
    long = " ".join(["the cat sat on the mat ."] * 20)
    enc = run(hubs["bert"], long).result
    assert enc.truncated and "cut to 64 tokens" in enc.notes["truncated"] and enc.limit == 64
    assert len(enc.kinds["encoder"].queries) == 64 and enc.kinds["encoder"].keys[-1] == "[SEP]"
    out = run(hubs["gpt2"], long, generate=4)
    full = hubs["gpt2"].tokenizer(long)["input_ids"]
    prompt = 64 - 4  # room for the four new tokens; a decoder keeps the start of the text (issue 33)
    assert out.result.truncated and len(out.steps) == 4
    assert out.result.inputs["ids"][:prompt] == full[:prompt] and len(out.result.inputs["ids"]) == prompt + 3
    short = run(hubs["bert"], long, max_tokens=10).result  # a page's own, lower cap
    assert short.truncated and short.limit == 10 and len(short.kinds["encoder"].keys) == 10
    assert short.kinds["encoder"].keys[-1] == "[SEP]" and "cut to 10 tokens" in short.notes["truncated"]
    assert run(hubs["bert"], TEXT, max_tokens=1000).result.limit == 64  # never above the model's own


@pytest.mark.parametrize("name", EXPLAINED)
def test_explain_recomputes_every_weight(hubs, name):
    hub = hubs[name]
    r = run(hub, TEXT, generate=3).result
    states = forward(hub, r)
    for kind, view in r.kinds.items():
        for layer in range(view.layers):
            for head in range(view.heads):
                for i in range(len(view.queries)):
                    for j in range(len(view.keys)):
                        e = explain(hub, r, kind, layer, head, i, j, states=states)
                        assert e.weight == pytest.approx(e.map_weight, abs=1e-6)
                        np.testing.assert_allclose(e.weights, view.weights[layer, head, i], atol=1e-6)
    e = explain(hub, r, kind, view.layers - 1, 1, len(view.queries) - 1, 0)  # computes its own forward pass
    d = SIZE["dim"] // SIZE["heads"]
    assert e.q.shape == e.k.shape == e.product.shape == (d,)
    assert e.raw_score == pytest.approx(float(e.product.sum()), abs=1e-5)
    assert e.scale == pytest.approx(d**-0.5) and e.scale_text == f"the score is divided by √s = √{d} = {d**0.5:.4g}"
    assert e.score == pytest.approx(e.raw_score * e.scale, abs=1e-6)
    assert e.scores[e.key] == pytest.approx(e.score, abs=1e-6)
    assert np.isneginf(e.scores[~e.mask]).all() and (e.weights[~e.mask] == 0).all()
    # the value side, as for our own models: the head's output is the weighted sum of its value vectors
    np.testing.assert_allclose(e.output, e.weights @ e.values, atol=1e-12)
    assert e.query_token == view.queries[e.query] and e.key_token == view.keys[e.key]


def test_explain_masks_later_tokens_in_a_decoder(hubs):
    hub = hubs["gpt2"]
    r = run(hub, TEXT).result
    e = explain(hub, r, "decoder", 0, 0, 2, 1)
    assert e.mask.tolist() == [True, True, True] + [False] * (len(r.inputs["ids"]) - 3)
    assert e.weights[:3].sum() == pytest.approx(1.0, abs=1e-6)
    assert e.mask_reasons[3:] == ["future"] * (len(r.inputs["ids"]) - 3)


def test_explain_other_architectures_gives_the_weight_and_a_reason(hubs):
    hub = hubs["t5"]
    r = run(hub, TEXT, generate=3).result
    with pytest.raises(NotExplained, match="T5 adds a learned relative-position bias"):
        explain(hub, r, "cross", 1, 0, 1, 2)


def test_explain_rejects_a_cell_outside_the_map(hubs):
    r = run(hubs["bert"], TEXT).result
    with pytest.raises(IndexError, match="no cell"):
        explain(hubs["bert"], r, "encoder", 0, SIZE["heads"], 0, 0)


def test_explain_leaves_no_hooks_on_the_shared_model(hubs):
    hub = hubs["marian"]
    r = run(hub, TEXT).result

    def hooks() -> int:
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in hub.model.modules())

    before = hooks()
    explain(hub, r, "cross", 0, 0, 0, 0)
    explain(hub, r, "encoder", 1, 1, 1, 1)
    assert hooks() == before


def test_marian_sentencepiece_tokenizer(hubs):
    """opus-mt's own tokenizer (sentencepiece files, no fast version): readable tokens, unknown words."""
    hub = hubs["marian-spm"]
    assert type(hub.tokenizer).__name__ == "MarianTokenizer"
    r = run(hub, "der mann fährt", generate=3).result
    enc = r.kinds["encoder"]
    assert enc.keys[-1] == "</s>" and enc.special[-1] and not any(enc.special[:-1])
    assert "".join(enc.keys[:-1]).replace("␣", " ").split() == ["der", "mann", "fährt"]
    assert r.kinds["decoder"].queries[0] == "<pad>"  # opus-mt starts decoding from its pad token
    odd = run(hub, "der mann 漢字").result
    assert odd.unknown == ["<unk>"] and odd.unknown_read == 1


@pytest.mark.parametrize("name", ["gpt2", "bert", "marian", "t5"])
def test_a_hub_models_description_matches_its_run(hubs, name):
    hub = hubs[name]
    r = run(hub, TEXT, generate=2).result
    spec = hub.spec
    assert tuple(r.kinds) == spec.kind_names and tuple(r.inputs) == spec.inputs and spec.limit(None) == r.limit
    for k in spec.kinds:
        view = r.kinds[k.name]
        assert (view.title, view.query_axis, view.key_axis) == (k.title, k.query_axis, k.key_axis)
        assert view.weights.shape[-2:] == (len(r.inputs[k.query_input]), len(r.inputs[k.key_input]))
        assert not k.causal or not np.triu(r.kinds[k.name].mask, 1).any()


def test_encoder_decoder_axes_name_the_languages_the_id_says():
    from model.core.specs import hub_spec
    from model.hub.load import languages

    assert languages("Helsinki-NLP/opus-mt-de-en") == ("German (source)", "English (output)")
    assert languages("./my-model") == ("source", "output")
    spec = hub_spec("Helsinki-NLP/opus-mt-de-en", "encoder-decoder", "seq2seq", 512, *languages("opus-mt-de-en"))
    assert [(k.query_axis, k.key_axis) for k in spec.kinds] == [
        ("query = German (source)", "key = German (source)"),
        ("query = English (output)", "key = English (output) so far"),
        ("query = English (output)", "key = German (source)"),
    ]
