"""Contributions beside attention for Hugging Face models (tiny random ones opened by path), each against
a brute-force computation: value zeroing by re-running the whole model with one value vector zeroed
inside transformers' own eager attention, norms by explicit products of the layer's weights, gradient ×
attention against finite differences; a model without its prediction head; bad input."""

from __future__ import annotations

import copy
import dataclasses
import importlib

import numpy as np
import pytest
import torch

from fixtures import hub_tiny
from model.hub.attribute import attribute
from model.hub.load import load
from model.hub.run import run

MAKERS = {
    "gpt2": hub_tiny.save_gpt2,
    "bert": hub_tiny.save_bert,
    "distilbert": hub_tiny.save_distilbert,
    "marian": hub_tiny.save_marian,
    "llama": lambda folder: hub_tiny.save_modern(folder, "llama"),
}
TEXT = {"bert": "the cat sat on the [MASK] .", "distilbert": "the movie was wonderful and moving ."}


@pytest.fixture(scope="module")
def opened(tmp_path_factory) -> dict:
    """Each family loaded in float64 (brute force and method then agree to rounding) with its run."""
    root = tmp_path_factory.mktemp("hub_attr")
    out = {}
    for name, make in MAKERS.items():
        hub = load(str(make(root / name)))
        hub = dataclasses.replace(hub, model=copy.deepcopy(hub.model).double())
        target = "a man rides a bike ." if hub.shape == "encoder-decoder" else None  # teacher-forced: 5+ rows
        out[name] = (hub, run(hub, TEXT.get(name, "the cat sat on the mat ."), generate=2, target=target).result)
    return out


def eager_module(hub):
    return importlib.import_module(type(hub.model).__module__)


def call_index(hub, result, kind: str, layer: int) -> int:
    """Which attention call of a forward pass, in order, computes ``kind``'s ``layer``."""
    if hub.shape != "encoder-decoder":
        return layer
    enc = result.kinds["encoder"].layers
    return {"encoder": layer, "decoder": enc + 2 * layer, "cross": enc + 2 * layer + 1}[kind]


def full_pass(hub, result, monkeypatch, target: int, change):
    """The model's own forward pass with ``change(query, key, value, weights)`` applied inside the
    ``target``-th call of its eager attention; returns (logits, every layer module's output)."""
    module = eager_module(hub)
    real, count = module.eager_attention_forward, [0]

    def patched(mod, query, key, value, mask, **kw):
        if count[0] == target:
            value, weights_change = change(value)
        else:
            weights_change = None
        out, w = real(mod, query, key, value, mask, **kw)
        if count[0] == target and weights_change is not None:
            w = weights_change(w)
            out = torch.matmul(w, value.repeat_interleave(w.shape[1] // value.shape[1], dim=1)).transpose(1, 2)
        count[0] += 1
        return out, w

    monkeypatch.setattr(module, "eager_attention_forward", patched)
    ins = {k: torch.tensor([v]) for k, v in result.inputs.items()}
    try:
        with torch.no_grad():
            if hub.shape == "encoder-decoder":
                out = hub.model(input_ids=ins["src"], decoder_input_ids=ins["tgt"], output_hidden_states=True)
            else:
                out = hub.model(input_ids=ins["ids"], output_hidden_states=True)
    finally:
        monkeypatch.setattr(module, "eager_attention_forward", real)
    return out


def layer_output(hub, out, kind: str, layer: int, query: int) -> torch.Tensor:
    hidden = (
        out.hidden_states
        if hub.shape != "encoder-decoder"
        else (out.encoder_hidden_states if kind == "encoder" else out.decoder_hidden_states)
    )
    return hidden[layer + 1][0, query]


@pytest.mark.parametrize("name", list(MAKERS))
def test_value_zeroing_is_a_real_rerun(opened, name, monkeypatch) -> None:
    hub, result = opened[name]
    query = 2
    for kind in result.kinds:
        a = attribute(hub, result, kind, query)
        assert "value_zeroing" in a.methods, a.absent
        for layer in range(result.kinds[kind].layers - 1):  # the last hidden state may be after a final norm
            target = call_index(hub, result, kind, layer)

            def zero(key):
                def change(value):
                    value = value.clone()
                    value[:, :, key] = 0  # every key/value head
                    return value, None

                return change

            base = layer_output(hub, full_pass(hub, result, monkeypatch, -1, None), kind, layer, query)
            outs = [
                layer_output(hub, full_pass(hub, result, monkeypatch, target, zero(j)), kind, layer, query)
                for j in range(len(a.key_tokens))
            ]
            d = torch.stack([1 - torch.cosine_similarity(o, base, dim=0) for o in outs]).clamp(min=0)
            assert np.allclose(a.methods["value_zeroing"][layer], (d / d.sum()).numpy(), atol=1e-7), (kind, layer)


@pytest.mark.parametrize("name", ["gpt2", "bert", "llama", "marian"])
def test_gradient_times_attention_against_finite_differences(opened, name, monkeypatch) -> None:
    hub, result = opened[name]
    # Llama's eager softmax runs in float32 even in a float64 model: its rounding (~1e-8 on a weight)
    # swamps a small step, so it takes a larger one and a tolerance of 2 %; the others are float64 throughout
    query, (eps, rel) = 1, ((1e-2, 2e-2) if name == "llama" else (1e-6, 1e-6))
    for kind in result.kinds:
        a = attribute(hub, result, kind, query)
        plain = full_pass(hub, result, monkeypatch, -1, None).logits[0]
        for layer, head, key in [(0, 0, 0), (result.kinds[kind].layers - 1, 1, 1)]:
            target = call_index(hub, result, kind, layer)

            def nudge(delta, head=head, key=key):
                def change(value):
                    def weights_change(w):
                        w = w.clone()
                        w[0, head, query, key] += delta  # the weight alone, not renormalised: ∂s/∂a
                        return w

                    return value, weights_change

                return change

            scores = []
            for delta in (eps, -eps):
                logits = full_pass(hub, result, monkeypatch, target, nudge(delta)).logits[0]
                scores.append(float(page_score(hub, result, plain, logits, kind, query)))
            grad = (scores[0] - scores[1]) / (2 * eps)
            want = a.methods["attention"][layer, head, key] * grad
            assert a.methods["grad_attention"][layer, head, key] == pytest.approx(want, rel=rel, abs=1e-7), (
                kind,
                layer,
            )


def page_score(hub, result, plain, logits, kind: str, query: int):
    """The score attribute() differentiates, with the choice (argmax) of the unperturbed pass held fixed."""
    if hub.spec.output == "next":
        return logits[-1, plain[-1].argmax()]
    if hub.spec.output == "masked":
        m = result.inputs["ids"].index(hub.tokenizer.mask_token_id)
        return logits[m, plain[m].argmax()]
    chosen = logits.gather(-1, plain.argmax(-1)[:, None])[:, 0]
    return chosen.sum() if kind == "encoder" else chosen[query]


@torch.no_grad()
def explicit_norms(hub, name: str, out, layer: int, query: int) -> tuple[np.ndarray, np.ndarray]:
    """‖a · (x W_V + b_V) W_O‖ per head and ‖Σ_h …‖ for one layer, from the layer's own weights."""
    x = out.hidden_states[layer][0]
    if name == "bert":
        att = hub.model.base_model.encoder.layer[layer].attention
        v = x @ att.self.value.weight.T + att.self.value.bias
        w_o = att.output.dense.weight.T  # (heads · s, dim)
    else:
        block = hub.model.base_model.h[layer]
        x = block.ln_1(x)  # GPT-2 normalises before attention: the values read the normalised input
        E = x.shape[-1]
        v = x @ block.attn.c_attn.weight[:, 2 * E :] + block.attn.c_attn.bias[2 * E :]
        w_o = block.attn.c_proj.weight  # Conv1D: (in, out)
    H = out.attentions[layer].shape[1]
    s = v.shape[-1] // H
    per_head, total = [], 0
    for h in range(H):
        f = v[:, h * s : (h + 1) * s] @ w_o[h * s : (h + 1) * s]  # one head's f(x_j) for every key
        weighted = out.attentions[layer][0, h, query][:, None] * f
        per_head.append(weighted.norm(dim=-1).numpy())
        total = total + weighted
    return np.stack(per_head), total.norm(dim=-1).numpy()


def test_norms_are_explicit_products_for_bert_and_gpt2(opened) -> None:
    for name in ("bert", "gpt2"):
        hub, result = opened[name]
        query = 2
        a = attribute(hub, result, next(iter(result.kinds)), query)
        with torch.no_grad():
            out = hub.model(
                input_ids=torch.tensor([result.inputs["ids"]]), output_hidden_states=True, output_attentions=True
            )
        for layer in range(len(out.attentions)):
            per_head, whole = explicit_norms(hub, name, out, layer, query)
            assert np.allclose(a.methods["norm"][layer], per_head, atol=1e-9)
            assert np.allclose(a.methods["norm_layer"][layer], whole, atol=1e-9)


def test_no_prediction_head_means_no_gradient_with_the_reason(tmp_path) -> None:
    hub = load(str(hub_tiny.save_bert_base(tmp_path / "base")))
    result = run(hub, "the cat sat on the mat .").result
    a = attribute(hub, result, "encoder", 1)
    assert "grad_attention" not in a.methods and "head" in a.absent["grad_attention"]
    assert {"attention", "norm", "norm_layer", "value_zeroing", "rollout"} <= set(a.methods)
    assert a.to_json()["methods"]["grad_attention"] is None


def test_bad_input_and_a_masked_lm_without_a_mask(opened) -> None:
    hub, result = opened["bert"]
    with pytest.raises(ValueError, match="outside the input"):
        attribute(hub, result, "encoder", len(result.kinds["encoder"].queries))
    with pytest.raises(ValueError, match="no 'cross'"):
        attribute(hub, result, "cross", 0)
    plain = run(hub, "the cat sat on the mat .").result
    a = attribute(hub, plain, "encoder", 1)
    assert "[MASK]" in a.absent["grad_attention"]


def test_the_shared_model_is_left_as_it_was(opened) -> None:
    hub, result = opened["gpt2"]
    before = {k: v.clone() for k, v in hub.model.state_dict().items()}
    attribute(hub, result, "decoder", 1)
    assert hub.model.config._attn_implementation == "eager"
    assert all(torch.equal(before[k], v) for k, v in hub.model.state_dict().items())
    assert all(p.grad is None for p in hub.model.parameters())


def test_captum_gradient_times_activation_on_the_attention_weights_agrees(opened) -> None:
    """Captum's LayerGradientXActivation on each GPT-2 attention module's second output (its weights) is
    a ⊙ ∂s/∂a computed by a maintained library, through its own hooks on this test's model. (Inseq 0.7.1
    is not checked: its value zeroing looks for a local named ``value`` and tuple layer outputs, which
    transformers 5 no longer has.)"""
    attr = pytest.importorskip("captum.attr", reason="captum is not installed (requirements-dev.txt pins it)")
    hub, result = opened["gpt2"]
    ids = torch.tensor([result.inputs["ids"]])
    query = len(result.inputs["ids"]) - 2
    a = attribute(hub, result, "decoder", query)
    c = int(hub.model(input_ids=ids).logits[0, -1].argmax())
    for layer, block in enumerate(hub.model.base_model.h):
        theirs = attr.LayerGradientXActivation(lambda x: hub.model(input_ids=x).logits[:, -1, c], block.attn)
        weights_part = theirs.attribute(ids)[1][0, :, query].detach().numpy()
        assert np.allclose(a.methods["grad_attention"][layer], weights_part, atol=1e-9)
    assert np.abs(a.methods["grad_attention"]).max() > 1e-6  # a comparison of something, not of zeros


@pytest.mark.parametrize("name", ["gpt2", "bert", "distilbert"])
def test_layer_0_scores_split_into_token_and_position_terms(opened, name) -> None:
    """Why this weight, for Hugging Face models with learned absolute positions: the five terms sum to the
    score to 1e-6 (float64); later layers and a family without the split say why."""
    from model.hub.explain import explain

    hub, result = opened[name]
    kind = next(iter(result.kinds))
    for head, i, j in [(0, 3, 1), (1, 4, 4)]:
        e = explain(hub, result, kind, 0, head, i, j)
        assert set(e.position_split) == {"token·token", "token·position", "position·token", "position·position", "bias"}
        assert sum(e.position_split.values()) == pytest.approx(e.score, abs=1e-6)
    assert explain(hub, result, kind, 1, 0, 3, 1).position_split is None


@torch.no_grad()
def explicit_source_share(hub, result, layer: int) -> np.ndarray:
    """ALTI's L1 formula written out for one decoder layer of Marian: the cross-attention's input (the
    residual) and each source word's Σ_h a · (m_j W_V + b_V) W_O, from the model's own modules."""
    twin = copy.deepcopy(hub.model)
    seen = {}
    cross = twin.model.decoder.layers[layer].encoder_attn
    cross.register_forward_pre_hook(
        lambda m, a, k: seen.__setitem__("in", (a[0] if a else k["hidden_states"])[0]), with_kwargs=True
    )
    cross.register_forward_hook(lambda m, a, out: seen.__setitem__("out", out[0][0]))
    src, tgt = (torch.tensor([result.inputs[n]]) for n in ("src", "tgt"))
    out = twin(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
    memory = out.encoder_last_hidden_state[0]
    a = out.cross_attentions[layer][0]
    H, s = a.shape[0], cross.head_dim
    v = memory @ cross.v_proj.weight.T + cross.v_proj.bias
    shares = []
    for i in range(a.shape[1]):
        r = seen["in"][i]
        parts = [r] + [
            sum(
                a[h, i, j] * (v[j, h * s : (h + 1) * s] @ cross.out_proj.weight[:, h * s : (h + 1) * s].T)
                for h in range(H)
            )
            for j in range(len(memory))
        ]
        y = r + seen["out"][i]
        assert torch.allclose(sum(parts) + cross.out_proj.bias, y, atol=1e-9)  # the parts are the whole output
        c = torch.stack([(y.abs().sum() - (y - p).abs().sum()).clamp(min=0) for p in parts])
        shares.append(float(c[1:].sum() / c.sum()))
    return np.array(shares)


def test_marian_source_share_is_alti_over_the_cross_attention_sublayer(opened) -> None:
    hub, result = opened["marian"]
    a = attribute(hub, result, "cross", 1)
    assert a.source_share.shape == (2, len(result.kinds["cross"].queries))
    for layer in range(2):
        assert np.allclose(a.source_share[layer], explicit_source_share(hub, result, layer), atol=1e-9)
    assert attribute(hub, result, "encoder", 1).source_share is None


@pytest.mark.parametrize("family", list(hub_tiny.MODERN_CONFIGS))
def test_value_zeroing_of_every_modern_family_is_a_real_rerun(tmp_path, family, monkeypatch) -> None:
    """Rotary, grouped-query, sliding-window and soft-capped decoders: every layer (the last one too, read by
    a hook on this test's own model, since its hidden state comes after the final norm)."""
    import transformers

    if not hasattr(transformers, hub_tiny.MODERN_CONFIGS[family][0]):
        pytest.skip(f"transformers {transformers.__version__} lacks {hub_tiny.MODERN_CONFIGS[family][0]}")
    hub = load(str(hub_tiny.save_modern(tmp_path / family, family)))
    hub = dataclasses.replace(hub, model=copy.deepcopy(hub.model).double())
    result = run(hub, "the cat sat on the mat . two dogs play").result
    query = 5
    a = attribute(hub, result, "decoder", query)
    assert "value_zeroing" in a.methods, a.absent
    for layer, block in enumerate(hub.model.model.layers):
        seen = []
        handle = block.register_forward_hook(
            lambda m, args, out, seen=seen: seen.append((out[0] if isinstance(out, tuple) else out)[0, query])
        )
        try:

            def zero(key):
                def change(value):
                    value = value.clone()
                    value[:, :, key] = 0
                    return value, None

                return change

            full_pass(hub, result, monkeypatch, -1, None)
            for j in range(len(a.key_tokens)):
                full_pass(hub, result, monkeypatch, layer, zero(j))
        finally:
            handle.remove()
        base, outs = seen[0], seen[1:]
        d = torch.stack([1 - torch.cosine_similarity(o, base, dim=0) for o in outs]).clamp(min=0)
        assert np.allclose(a.methods["value_zeroing"][layer], (d / d.sum()).numpy(), atol=1e-7), layer
