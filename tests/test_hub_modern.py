"""Click-to-explain for rotary, grouped-query decoders (Llama, Qwen2/3, Mistral, Gemma 1–3, Phi-3, OLMo2,
SmolLM3) on tiny random models opened by path: every recomputed weight equals transformers' own eager
attention, inside and outside a sliding window; each query head reads the right key/value head; q and k
before the rotation, turned by the model's angles, give the q and k attention read; Gemma 2's scalar and
soft-capping and the families' q/k norms are the model's; the shared model is left as it was."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch
import transformers

from fixtures.hub_tiny import MODERN, MODERN_CONFIGS, save_modern
from model.__main__ import main
from model.core.explanation import row_steps
from model.hub.explain import explain, forward
from model.hub.load import load
from model.hub.run import run
from viz.explain import explanation_steps

TEXT = "the cat sat on the mat . two dogs play in the snow ."
FAMILIES = list(MODERN_CONFIGS)
PAIRS = [(0, 0), (0, 3), (1, 1), (1, 2)]  # (layer, head): both layers, both key/value groups
ATOL = 1e-5
H, KV, S, W = MODERN["heads"], MODERN["kv_heads"], MODERN["head_dim"], MODERN["window"]


@pytest.fixture(scope="module")
def hubs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("modern")
    return {f: load(str(save_modern(root / f, f))) for f in FAMILIES if hasattr(transformers, MODERN_CONFIGS[f][0])}


def opened(hubs: dict, family: str):
    if family not in hubs:
        pytest.skip(f"transformers {transformers.__version__} does not ship {MODERN_CONFIGS[family][0]}")
    return hubs[family]


@pytest.fixture(scope="module")
def runs(hubs) -> dict:
    """Each family's run on TEXT, its trace, and the model's own eager maps from a direct forward pass."""
    out = {}
    for family, hub in hubs.items():
        r = run(hub, TEXT).result
        with torch.no_grad():
            maps = hub.model(input_ids=torch.tensor([r.inputs["ids"]]), output_attentions=True).attentions
        out[family] = (r, forward(hub, r), torch.stack([m[0] for m in maps]).numpy())
    return out


def turned(x: np.ndarray, theta: np.ndarray, scale: float) -> np.ndarray:
    """RoPE's rotate-half pairing written as complex multiplication: (x_d + i·x_{d+r/2}) · scale · e^{iθ_d}."""
    half = len(theta)
    z = (x[:half] + 1j * x[half : 2 * half]) * scale * np.exp(1j * theta)
    return np.concatenate([z.real, z.imag, x[2 * half :]])


@pytest.mark.parametrize("family", FAMILIES)
def test_opens_as_a_causal_decoder(hubs, family):
    hub = opened(hubs, family)
    assert (hub.shape, hub.head, hub.model_type) == ("decoder", "causal-lm", family)
    assert hub.model.config.num_key_value_heads == KV < hub.model.config.num_attention_heads == H


@pytest.mark.parametrize("family", FAMILIES)
def test_every_recomputed_weight_is_eager_attention(hubs, runs, family):
    hub = opened(hubs, family)
    r, states, eager = runs[family]
    view = r.kinds["decoder"]
    n = len(view.queries)
    assert n > W + 2  # the text reaches past the sliding window
    np.testing.assert_allclose(view.weights, eager, atol=1e-6)  # the map is transformers' eager attention
    for layer, head in PAIRS:
        for i in range(n):
            for j in range(n):
                e = explain(hub, r, "decoder", layer, head, i, j, states=states)
                assert abs(e.weight - eager[layer, head, i, j]) <= ATOL
            np.testing.assert_allclose(e.weights, eager[layer, head, i], atol=ATOL)
            assert (e.weights[~e.mask] == 0).all() and e.weights.sum() == pytest.approx(1.0)
            np.testing.assert_allclose(e.output, e.model_output, atol=ATOL)  # weights @ v is the module's output


@pytest.mark.parametrize("family", FAMILIES)
def test_each_query_head_reads_its_key_value_head(hubs, runs, family):
    hub = opened(hubs, family)
    r, states, _ = runs[family]
    es = [explain(hub, r, "decoder", 1, head, 6, 2, states=states) for head in range(H)]
    assert [e.kv_head for e in es] == [h // (H // KV) for h in range(H)] and {e.kv_heads for e in es} == {KV}
    np.testing.assert_array_equal(es[0].values, es[1].values)  # one group, one set of keys and values
    np.testing.assert_array_equal(es[2].k, es[3].k)
    assert not np.allclose(es[1].values, es[2].values) and not np.allclose(es[0].q, es[1].q)


def test_llama_values_are_the_key_value_heads_projection(hubs, runs):
    """Independent of the probe: v_proj of the layer's normalised input, sliced at the key/value head."""
    hub = opened(hubs, "llama")
    r, states, _ = runs["llama"]
    block = hub.model.model.layers[1]
    with torch.no_grad():
        h = hub.model(input_ids=torch.tensor([r.inputs["ids"]]), output_hidden_states=True).hidden_states[1][0]
        v = block.self_attn.v_proj(block.input_layernorm(h)).double().numpy()
    for head in range(H):
        kv = head // (H // KV)
        e = explain(hub, r, "decoder", 1, head, 5, 5, states=states)
        np.testing.assert_allclose(e.values, v[:, kv * S : (kv + 1) * S], atol=1e-6)


@pytest.mark.parametrize("family", ["mistral", "gemma2", "gemma3_text"])
def test_keys_outside_the_sliding_window_are_masked(hubs, runs, family):
    hub = opened(hubs, family)
    r, states, eager = runs[family]
    i = len(r.kinds["decoder"].queries) - 1
    out, edge = (explain(hub, r, "decoder", 0, 1, i, j, states=states) for j in (i - W, i - W + 1))
    assert out.sliding_window == W and out.masked and out.mask_reasons[i - W] == "outside the sliding window"
    assert (
        out.weight == 0
        and eager[0, 1, i, i - W] == 0
        and out.mask_reasons[: i - W + 1] == [out.mask_reasons[0]] * (i - W + 1)
    )
    assert not edge.masked and edge.weight > 0 and abs(edge.weight - eager[0, 1, i, i - W + 1]) <= ATOL
    assert out.mask.sum() == W  # the query and the W - 1 keys before it
    assert "Sliding window: a query sees only the 4 latest positions" in explanation_steps(out)[2]
    full = explain(hub, r, "decoder", 1, 1, i, 0, states=states)  # Gemma's layer 1 is global; Mistral slides on
    if family == "mistral":
        assert full.mask_reasons[0] == "outside the sliding window" and full.weight == 0
    else:
        assert full.sliding_window is None and full.mask.all() and full.weight > 0


def test_a_causal_row_hides_the_future(hubs, runs):
    hub = opened(hubs, "llama")
    r, states, _ = runs["llama"]
    e = explain(hub, r, "decoder", 0, 2, 3, 5, states=states)
    assert (
        e.masked
        and e.mask.tolist()[:5] == [True] * 4 + [False]
        and e.mask_reasons[4:] == ["future"] * (len(e.mask) - 4)
    )


def test_gemma2_scales_by_its_scalar_and_caps_its_scores(hubs, runs):
    hub = opened(hubs, "gemma2")
    r, states, eager = runs["gemma2"]
    cfg = hub.model.config
    i = len(r.kinds["decoder"].queries) - 1
    e = explain(hub, r, "decoder", 1, 0, i, 2, states=states)
    assert e.scale == pytest.approx(cfg.query_pre_attn_scalar**-0.5) and cfg.query_pre_attn_scalar**0.5 != S**0.5
    assert "query_pre_attn_scalar" in e.scale_text and e.softcap == cfg.attn_logit_softcapping == 2.0
    capped = 2.0 * np.tanh(e.raw_scores * e.scale / 2.0)
    np.testing.assert_allclose(e.scores, capped, atol=1e-12)
    assert (np.abs(e.scores) < 2.0).all() and e.mask.all()
    # the cap bites here: without it the same numbers do not give the model's row
    K = np.stack([explain(hub, r, "decoder", 1, 0, i, j, states=states).k for j in range(i + 1)])
    plain = row_steps(e.q, K, e.values, e.mask, e.scale, 2)["weights"]
    assert np.abs(plain - eager[1, 0, i]).max() > 1e-3
    steps = explanation_steps(e)
    assert f"Soft-capping: 2 × tanh(score / 2) = {2 * math.tanh(e.score / 2):.4f}" in steps[1]


@pytest.mark.parametrize("family", FAMILIES)
def test_rotating_the_unrotated_query_and_key_gives_what_attention_read(hubs, runs, family):
    hub = opened(hubs, family)
    r, states, _ = runs[family]
    for layer, head in PAIRS:
        e = explain(hub, r, "decoder", layer, head, 7, 3, states=states)
        if family == "smollm3" and layer == 1:  # this layer leaves the rotation out (NoPE)
            assert e.q_unrotated is None and e.query_angles is None and "NoPE" in e.query_from
            continue
        half = len(e.query_angles)
        assert len(e.key_angles) == half == (S // 4 if family == "phi3" else S // 2)  # Phi-3 here turns half a head
        np.testing.assert_allclose(turned(e.q_unrotated, e.query_angles, e.rotary_scale), e.q, atol=ATOL)
        np.testing.assert_allclose(turned(e.k_unrotated, e.key_angles, e.rotary_scale), e.k, atol=ATOL)
        assert not np.allclose(e.q_unrotated, e.q, atol=1e-3)  # position 7 does turn q
        np.testing.assert_array_equal(e.q_unrotated[2 * half :], e.q[2 * half :])
        assert "Rotary position" in explanation_steps(e)[0]
        rope = hub.model.config.rope_parameters
        if rope.get("rope_type", "default") == "default" and "rope_theta" in rope:  # θ_d(p) = p · base^(-2d/r)
            omega = rope["rope_theta"] ** (-np.arange(half) / half)
            for angles, p in ((e.query_angles, 7), (e.key_angles, 3)):
                np.testing.assert_allclose(np.exp(1j * angles), np.exp(1j * p * omega), atol=1e-5)


@pytest.mark.parametrize("family", ["qwen3", "gemma3_text", "olmo2", "llama"])
def test_query_and_key_norms(hubs, runs, family):
    hub = opened(hubs, family)
    r, states, _ = runs[family]
    es = [explain(hub, r, "decoder", 0, head, 4, 1, states=states) for head in range(H)]
    rms = lambda x: float(np.sqrt(np.mean(np.square(x))))  # noqa: E731
    if family == "llama":
        assert es[0].norm is None
    elif family == "olmo2":  # one norm over every head at once (its weights start at 1)
        assert "over all heads together" in es[0].norm
        assert rms(np.concatenate([e.q_unrotated for e in es])) == pytest.approx(1.0, abs=1e-3)
        assert abs(rms(es[0].q_unrotated) - 1.0) > 1e-3
    else:  # each head on its own
        assert (
            "per head" in es[0].norm
            and "Normalisation: q and k are RMS-normalised per head" in explanation_steps(es[0])[0]
        )
        assert all(rms(e.q_unrotated) == pytest.approx(1.0, abs=1e-3) for e in es)
        assert rms(es[0].k_unrotated) == pytest.approx(1.0, abs=1e-3)


def test_explaining_leaves_the_shared_model_as_it_was(hubs):
    hub = opened(hubs, "gemma2")
    r = run(hub, TEXT).result

    def hooks() -> int:
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in hub.model.modules())

    before, weights = hooks(), {k: v.clone() for k, v in hub.model.state_dict().items()}
    explain(hub, r, "decoder", 0, 0, 5, 2)
    assert hub.model.config._attn_implementation == "eager" and hooks() == before
    assert all(torch.equal(v, hub.model.state_dict()[k]) for k, v in weights.items())
    assert np.allclose(run(hub, TEXT).result.kinds["decoder"].weights, r.kinds["decoder"].weights)


def test_concurrent_explanations_keep_their_own_tensors(hubs, runs):
    """Sessions explain in threads at once: each trace records only its own pass."""
    hub = opened(hubs, "qwen3")
    r, _, eager = runs["qwen3"]
    cells = [(layer, head, i, j) for layer in (0, 1) for head in range(H) for i, j in ((8, 3), (5, 5), (9, 0))]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda c: explain(hub, r, "decoder", *c).weight, cells))
    assert np.abs(np.array(got) - np.array([eager[c] for c in cells])).max() <= ATOL


def test_cli_explains_a_sliding_window_model(hubs, capsys):
    hub = opened(hubs, "mistral")
    main(["hub", str(hub.folder), TEXT, "--explain", "decoder,0,3,6,1"])
    out = json.loads(capsys.readouterr().out)["explain"]
    assert out["explained"] and out["recomputed"] == pytest.approx(out["weight"], abs=ATOL)
    assert out["kv_head"] == 1 and out["kv_heads"] == KV and out["sliding_window"] == W and out["weight"] == 0
    assert out["mask_reasons"][1] == "outside the sliding window" and len(out["q_unrotated"]) == S
    main(["hub", str(hub.folder), TEXT, "--explain", "decoder,0,3,6,4"])
    out = json.loads(capsys.readouterr().out)["explain"]
    assert out["explained"] and out["weight"] > 0 and out["recomputed"] == pytest.approx(out["weight"], abs=ATOL)


@pytest.mark.parametrize("family", ["mistral", "gemma2", "gemma3_text"])
def test_generating_keeps_every_key_of_a_sliding_window_model(hubs, family):
    """Greedy generation with maps: each step's row covers every earlier position (a sliding cache would
    drop keys), and the maps equal one teacher-forced pass over what was written."""
    hub = opened(hubs, family)
    out = run(hub, TEXT, generate=4)
    r = out.result
    ids = r.inputs["ids"]
    with torch.no_grad():
        maps = hub.model(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    full = torch.stack([m[0] for m in maps]).numpy()
    shown = r.kinds["decoder"].weights
    assert len(out.steps) == 4 and shown.shape[-1] == len(ids)
    np.testing.assert_allclose(shown, full[..., : shown.shape[-2], :], atol=1e-5)


def test_a_rotary_score_is_not_split_into_token_and_position(hubs, runs):
    """Why this weight: rotary position is a rotation, not an added vector; the panel says so."""
    hub = opened(hubs, "llama")
    result, tr, _ = runs["llama"]
    e = explain(hub, result, "decoder", 0, 1, 5, 2, states=tr)
    assert e.position_split is None and "rotary" in e.position_note and e.q_unrotated is not None
    assert "does not split into token and position terms" in explanation_steps(e)[1]
