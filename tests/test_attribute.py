"""Contributions beside attention, each against a brute-force computation of its definition on tiny
models: norms by explicit per-head products, value zeroing by really re-running the whole model with a
value zeroed, gradient × attention against finite differences, rollout by the explicit product; a planted
head with zero values; bad input."""

from __future__ import annotations

import copy
import dataclasses
import json

import numpy as np
import pytest
import torch

import model.nets.attention as attention_module
from fixtures import tiny
from model.analysis.attribute import METHODS, attribute, ranks, spearman
from model.core.checkpoint import Checkpoint, load_checkpoint
from model.core.inference import classify, next_char, translate
from model.nets.translator import Translator

TEXTS = {
    "classifier": "the acting is wonderful but the plot is thin",
    "generator": "ROMEO: But soft",
    "translator": "ein mann fährt fahrrad .",
}
KINDS = {"classifier": ("encoder",), "generator": ("encoder",), "translator": ("encoder", "decoder", "cross")}
INFER = {"classifier": classify, "generator": next_char, "translator": translate}


def double(ck: Checkpoint) -> Checkpoint:
    """``ck`` with a float64 copy of its model: brute force and method then agree to rounding."""
    return dataclasses.replace(ck, model=copy.deepcopy(ck.model).double().eval())


@pytest.fixture(scope="module", params=["classifier", "generator", "translator", "translator-post-norm"])
def case(request, checkpoints):
    """(checkpoint in float64, its run's inputs) for each model, and a post-norm translator."""
    task = request.param.split("-")[0]
    ck = load_checkpoint(checkpoints / task, task=task)
    if request.param.endswith("post-norm"):
        torch.manual_seed(3)
        config = dataclasses.replace(ck.model.config, norm_first=False)
        ck = dataclasses.replace(ck, model=Translator(config).eval())
    result = INFER[task](ck, TEXTS[task])
    inputs = result.inputs if hasattr(result, "inputs") and result.inputs else None
    if inputs is None:  # next_char keeps no ids: the window it read
        from model.core.tokenize import encode_chars

        inputs = {"ids": encode_chars(ck.vocabs["chars"], TEXTS[task])}
    return double(ck), inputs


def blocks_of(ck: Checkpoint, kind: str, model=None):
    return getattr(ck.model if model is None else model, ck.spec.kind(kind).blocks)


def module_of(block, kind: str):
    return {"encoder": "attn", "decoder": "self_attn", "cross": "cross_attn"}[kind]


def forward(ck: Checkpoint, inputs: dict):
    tensors = [torch.tensor([inputs[n]]) for n in ck.spec.inputs]
    return ck.model(*tensors, return_attention=True)


def test_every_method_has_its_shape(case) -> None:
    ck, inputs = case
    for kind in KINDS[ck.task]:
        a = attribute(ck, inputs, kind, 1)
        L, H = len(blocks_of(ck, kind)), ck.model.config.heads
        K = len(a.key_tokens)
        for m in METHODS:
            if m in a.absent:
                continue
            want = (L, H, K) if m in ("attention", "norm", "grad_attention") else (L, K)
            assert a.methods[m].shape == want, m
        assert set(a.methods) | set(a.absent) == set(METHODS)
        # value zeroing is a distribution over the keys the query sees; nothing comes from the others
        vz = a.methods["value_zeroing"]
        assert np.allclose(vz.sum(1), 1.0) and np.all(vz[:, ~a.visible] == 0)


def test_norms_are_the_explicit_per_head_products(case) -> None:
    ck, inputs = case
    for kind in KINDS[ck.task]:
        query = 2
        a = attribute(ck, inputs, kind, query)
        for layer, block in enumerate(blocks_of(ck, kind)):
            mha = getattr(block, module_of(block, kind))
            probe = attention_module.Probe(kind, layer)
            tensors = [torch.tensor([inputs[n]]) for n in ck.spec.inputs]
            with torch.no_grad():
                ck.model(*tensors, probe=probe)
            t = probe.trace
            x = t.x[0] if t.context is None else t.context[0]  # what the values are projected from
            s, H = mha.head_dim, mha.heads
            layer_sum = torch.zeros(x.shape[0], mha.dim, dtype=x.dtype)
            for h in range(H):
                w_v, b_v = mha.to_v.weight[h * s : (h + 1) * s], mha.to_v.bias[h * s : (h + 1) * s]
                w_o = mha.unify.weight[:, h * s : (h + 1) * s]
                for j in range(x.shape[0]):
                    f = (x[j] @ w_v.T + b_v) @ w_o.T  # (x W_V + b_V) W_O, one head, one key
                    weighted = (t.weights[0, h, query, j] * f).detach()
                    assert a.methods["norm"][layer, h, j] == pytest.approx(float(weighted.norm()), abs=1e-9)
                    layer_sum[j] += weighted
            assert np.allclose(a.methods["norm_layer"][layer], layer_sum.norm(dim=-1).numpy(), atol=1e-9)


def zero_value(mha, key: int) -> None:
    """This (copied) module's value vector of ``key`` zeroed in every head."""
    project = mha.project

    def zeroed(x, context):
        q, k, v = project(x, context)
        v = v.clone()
        v[:, key] = 0
        return q, k, v

    mha.project = zeroed


def block_output(ck: Checkpoint, inputs: dict, kind: str, layer: int, query: int, key: int | None):
    """Layer ``layer``'s output at ``query`` from a whole forward pass of a copy of the model, with ``key``'s
    value vector zeroed in that layer (None: as computed)."""
    twin = copy.deepcopy(ck.model)
    block = blocks_of(ck, kind, twin)[layer]
    if key is not None:
        zero_value(getattr(block, module_of(block, kind)), key)
    seen = []
    block.register_forward_hook(lambda m, args, out: seen.append(out[0][0, query]))  # the test's own copy
    with torch.no_grad():
        forward(dataclasses.replace(ck, model=twin), inputs)
    return seen[0]


def test_value_zeroing_is_a_real_rerun_with_the_value_zeroed(case) -> None:
    ck, inputs = case
    for kind in KINDS[ck.task]:
        query = 1
        a = attribute(ck, inputs, kind, query)
        for layer in range(len(blocks_of(ck, kind))):
            base = block_output(ck, inputs, kind, layer, query, None)
            zeroed = [block_output(ck, inputs, kind, layer, query, j) for j in range(len(a.key_tokens))]
            d = torch.stack([1 - torch.cosine_similarity(o, base, dim=0) for o in zeroed]).clamp(min=0)
            assert np.allclose(a.methods["value_zeroing"][layer], (d / d.sum()).numpy(), atol=1e-7)


def calls_before(ck: Checkpoint, kind: str, layer: int) -> int:
    """Which attention call of a forward pass (in order) computes ``kind``'s ``layer``."""
    if ck.task != "translator":
        return layer
    enc = len(ck.model.encoder)
    return {"encoder": layer, "decoder": enc + 2 * layer, "cross": enc + 2 * layer + 1}[kind]


def page_score(ck: Checkpoint, logits, pick, kind: str, query: int):
    """The score attribute() differentiates, with the chosen classes/words ``pick`` held fixed."""
    if ck.spec.output == "classes":
        return logits[0, pick]
    if ck.spec.output == "next":
        return logits[0, -1, pick[-1]]
    chosen = logits[0].gather(-1, pick[:, None])[:, 0]
    return chosen.sum() if kind == "encoder" else chosen[query]


def nudged_score(ck, inputs, monkeypatch, kind: str, cell: tuple[int, int, int, int], delta: float, pick) -> float:
    """The page's score with attention weight ``cell`` = (layer, head, query, key) moved by ``delta``
    alone (not renormalised) in the pass: a finite difference of it is ∂s/∂a."""
    layer, head, query, key = cell
    real, target, count = attention_module.scaled_dot_product_attention, calls_before(ck, kind, layer), [0]

    def nudged(q, k, v, mask=None, **kw):
        out, w = real(q, k, v, mask, **kw)
        if count[0] == target:
            w = w.clone()
            w[0, head, query, key] += delta
            out = w @ v
        count[0] += 1
        return out, w

    monkeypatch.setattr(attention_module, "scaled_dot_product_attention", nudged)
    try:
        with torch.no_grad():
            return float(page_score(ck, forward(ck, inputs)[0], pick, kind, query))
    finally:
        monkeypatch.setattr(attention_module, "scaled_dot_product_attention", real)


def test_gradient_times_attention_against_finite_differences(case, monkeypatch) -> None:
    ck, inputs = case
    pick = forward(ck, inputs)[0][0].argmax(-1)
    eps = 1e-6
    for kind in KINDS[ck.task]:
        query = 1
        a = attribute(ck, inputs, kind, query)
        for layer, head, key in [(0, 0, 0), (len(a.methods["attention"]) - 1, 1, 1)]:
            cell = (layer, head, query, key)
            up, down = (nudged_score(ck, inputs, monkeypatch, kind, cell, d, pick) for d in (eps, -eps))
            weight = a.methods["attention"][layer, head, key]
            assert a.methods["grad_attention"][layer, head, key] == pytest.approx(
                weight * (up - down) / (2 * eps), abs=1e-6
            )


def test_rollout_is_the_explicit_product(case) -> None:
    ck, inputs = case
    _, maps = forward(ck, inputs)
    for kind in KINDS[ck.task]:
        a = attribute(ck, inputs, kind, 2)
        if kind == "cross":
            assert "rollout" in a.absent and "rollout" not in a.methods
            continue
        product = None
        for layer, w in enumerate(getattr(maps, kind)):
            step = 0.5 * w[0].mean(0).detach().numpy() + 0.5 * np.eye(w.shape[-1])
            product = step if product is None else step @ product
            assert np.allclose(a.methods["rollout"][layer], product[2], atol=1e-10)


def test_a_head_with_zero_values_gets_attention_but_no_contribution(checkpoints) -> None:
    ck = double(load_checkpoint(checkpoints / "classifier", task="classifier"))
    mha = ck.model.blocks[0].attn
    s = mha.head_dim
    with torch.no_grad():  # head 1 of layer 0 reads nothing: its values are zero whatever it attends to
        mha.to_v.weight[s : 2 * s] = 0
        mha.to_v.bias[s : 2 * s] = 0
        mha.to_q.bias[s : 2 * s] = 5.0  # and it looks hard at one key
        mha.to_k.bias[s : 2 * s] = 0
    inputs = {"ids": ck.vocabs["words"].encode(TEXTS["classifier"].split())}
    a = attribute(ck, inputs, "encoder", 3)
    assert a.methods["attention"][0, 1].max() > 0.2
    assert np.all(a.methods["norm"][0, 1] == 0)
    assert np.allclose(a.methods["grad_attention"][0, 1], 0, atol=1e-12)
    assert np.any(a.methods["norm"][0, 0] > 0)  # the other heads still carry something


def test_spearman_is_the_rank_formula() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=9), rng.normal(size=9)
    d = ranks(x) - ranks(y)
    assert spearman(x, y) == pytest.approx(1 - 6 * (d**2).sum() / (9 * (81 - 1)))
    assert ranks(np.array([3.0, 1.0, 3.0])).tolist() == [2.5, 1.0, 2.5]
    assert spearman(x, x) == pytest.approx(1.0) and spearman(x, -x) == pytest.approx(-1.0)
    assert np.isnan(spearman(np.ones(4), x[:4]))


def test_agreement_and_the_sentence(case) -> None:
    ck, inputs = case
    a = attribute(ck, inputs, KINDS[ck.task][-1], 1)
    assert set(a.agreement) == set(a.methods) - {"attention"}
    assert all(np.isnan(v) or -1 <= v <= 1 for v in a.agreement.values())
    assert "of the attention and" in a.disagreement and "layer" in a.disagreement
    j = a.to_json()
    assert j["tokens"] == a.key_tokens and j["query"] == 1 and set(j["methods"]) == set(METHODS)


def test_bad_input_says_what_to_fix(checkpoints) -> None:
    ck = load_checkpoint(checkpoints / "classifier", task="classifier")
    ids = ck.vocabs["words"].encode("the plot is thin".split())
    with pytest.raises(ValueError, match="outside the input"):
        attribute(ck, {"ids": ids}, "encoder", 4)
    with pytest.raises(ValueError, match="no 'cross'"):
        attribute(ck, {"ids": ids}, "cross", 0)
    padded = attribute(ck, {"ids": [*ids, 0, 0]}, "encoder", 5)  # a padded position: said, the rest shown
    assert any("padding" in n for n in padded.notes)
    assert not padded.visible[4:].any() and np.all(padded.methods["value_zeroing"][:, 4:] == 0)
    assert np.allclose(padded.methods["value_zeroing"].sum(1), 1)


def test_the_command_line_prints_the_issue_shape(checkpoints, monkeypatch, capsys) -> None:
    from model.__main__ import main
    from model.core.checkpoint import CHECKPOINTS_ENV

    monkeypatch.setenv(CHECKPOINTS_ENV, str(checkpoints))
    main(["attribute", "translator", TEXTS["translator"], "--query", "2", "--kind", "cross", "--json"])
    out = json.loads(capsys.readouterr().out)
    L, H = tiny.TRANSLATOR.dec_layers, tiny.TRANSLATOR.heads
    K = len(out["tokens"])
    assert out["query"] == 2 and out["tokens"][0] == "<sos>" and set(out["methods"]) == set(METHODS)
    assert np.array(out["methods"]["attention"]).shape == (L, H, K)
    assert np.array(out["methods"]["value_zeroing"]).shape == (L, K)
    assert out["methods"]["rollout"] is None and "rollout" in out["absent"]
    assert "disagreement" in out and set(out["agreement"]) == {"norm", "norm_layer", "value_zeroing", "grad_attention"}
    main(["attribute", "generator", TEXTS["generator"], "--query", "3"])
    assert "Spearman" in capsys.readouterr().out
    with pytest.raises(SystemExit, match="outside the input"):
        main(["attribute", "classifier", "the plot is thin", "--query", "9", "--json"])
    with pytest.raises(SystemExit, match="no 'cross'"):
        main(["attribute", "classifier", "the plot is thin", "--query", "1", "--kind", "cross"])


def test_the_command_line_opens_a_hub_folder(tmp_path, capsys) -> None:
    from fixtures.hub_tiny import save_gpt2
    from model.__main__ import main

    folder = save_gpt2(tmp_path / "gpt2")
    main(["attribute", str(folder), "the cat sat on the mat", "--query", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "decoder" and out["query"] == 3
    assert np.array(out["methods"]["grad_attention"]).shape[:2] == (2, 2)
    assert np.array(out["methods"]["rollout"]).shape == (2, len(out["tokens"]))


def test_the_benchmark_runs_on_tiny_models(checkpoints) -> None:
    """bench/attribute.py end to end without the browser floor: every kind of every model and a tiny Hub
    model, each with its timings."""
    import os
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.attribute",
            "--runs",
            "1",
            "--no-floor",
            "--hub-size",
            "tiny",
            "--hub-tokens",
            "16",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ATTENTION_CHECKPOINTS": str(checkpoints)},
    )
    result = json.loads(out.stdout)
    assert set(result["ours"]) == {
        "classifier/encoder",
        "generator/encoder",
        "translator/encoder",
        "translator/decoder",
        "translator/cross",
    }
    assert all(v["ms"]["n"] == 1 for v in result["ours"].values())
    assert result["hub"]["tokens"] == 16 and result["hub"]["ms"]["median"] > 0


def test_source_share_is_alti_over_the_cross_attention_sublayer(case) -> None:
    """Per decoder layer and output word: the residual entering cross-attention and each source word's
    weighted transformed value, taken from the model's own modules (hooks on a copy), ALTI's L1 formula
    written out; and the parts really add up to the sublayer's output."""
    ck, inputs = case
    if ck.task != "translator":
        assert attribute(ck, inputs, "encoder", 1).source_share is None
        return
    a = attribute(ck, inputs, "cross", 1)
    twin = copy.deepcopy(ck.model)
    seen: dict = {}
    for l, block in enumerate(twin.decoder):
        block.register_forward_pre_hook(lambda m, args, l=l: seen.__setitem__(("in", l), args[0][0]))
        block.self_attn.register_forward_hook(lambda m, args, out, l=l: seen.__setitem__(("self", l), out[0][0]))
        block.cross_attn.register_forward_hook(lambda m, args, out, l=l: seen.__setitem__(("cross", l), out[0][0]))
    check_source_share(ck, inputs, a, twin, seen)


@torch.no_grad()
def check_source_share(ck, inputs, a, twin, seen) -> None:
    _, maps = forward(dataclasses.replace(ck, model=twin), inputs)
    memory, _ = twin.encode(torch.tensor([inputs["src"]]))
    for l, block in enumerate(twin.decoder):
        x1 = seen[("in", l)] + seen[("self", l)]
        r = x1 if block.norm_first else block.norm1(x1)
        mha, H = block.cross_attn, ck.model.config.heads
        s = mha.head_dim
        v = memory[0] @ mha.to_v.weight.T + mha.to_v.bias
        for i in range(len(inputs["tgt"])):
            parts = [r[i]]
            for j in range(len(inputs["src"])):
                t = sum(
                    maps.cross[l][0, h, i, j] * (v[j, h * s : (h + 1) * s] @ mha.unify.weight[:, h * s : (h + 1) * s].T)
                    for h in range(H)
                )
                parts.append(t)
            y = r[i] + seen[("cross", l)][i]
            assert torch.allclose(sum(parts) + mha.unify.bias, y, atol=1e-9)  # the parts are the whole
            c = torch.stack([(y.abs().sum() - (y - p).abs().sum()).clamp(min=0) for p in parts])
            assert a.source_share[l, i] == pytest.approx(float(c[1:].sum() / c.sum()), abs=1e-9)
