"""Explaining one attention weight from the model's own tensors: every kind of every model, narrow,
wide and split-scale heads, masked cells, the module's own output, and the translator's decoding steps."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from fixtures import tiny
from model.analysis.explain import explain
from model.core.checkpoint import Checkpoint, load_checkpoint
from model.core.inference import classify, generate, translate
from model.core.tokenize import encode_chars, tokenize
from model.nets.attention import Probe
from model.nets.blocks import AttentionMaps
from model.nets.classifier import Classifier
from model.nets.generator import Generator
from model.nets.translator import Translator

TOL = 1e-6  # recomputed (float64) against the model's float32 weights
KINDS = {"classifier": ("encoder",), "generator": ("encoder",), "translator": ("encoder", "decoder", "cross")}
CAUSAL = {("generator", "encoder"), ("translator", "decoder")}
PAD = 0


def wide_checkpoints(checkpoints, *, split_scale: bool) -> dict[str, Checkpoint]:
    """The tiny checkpoints' vocabularies with wide-head models (and q, k each scaled by s^¼), in memory."""
    configs = {
        "classifier": (Classifier, tiny.CLASSIFIER),
        "generator": (Generator, tiny.GENERATOR),
        "translator": (Translator, tiny.TRANSLATOR),
    }
    out = {}
    for task, (cls, config) in configs.items():
        vocabs = load_checkpoint(checkpoints / task, task=task).vocabs
        sizes = (
            {"vocab_size": len(next(iter(vocabs.values())))}
            if task != "translator"
            else {"src_vocab_size": len(vocabs["src"]), "tgt_vocab_size": len(vocabs["tgt"])}
        )
        torch.manual_seed(1)
        model = cls(dataclasses.replace(config, wide=True, **sizes)).eval()
        for m in model.modules():
            if hasattr(m, "split_scale"):
                m.split_scale = split_scale  # this test's own model: nothing else shares it
        out[task] = Checkpoint(task, model, vocabs)
    return out


@pytest.fixture(scope="module", params=["narrow", "wide", "wide+split_scale"])
def cks(request, checkpoints) -> dict[str, Checkpoint]:
    if request.param == "narrow":
        return {t: load_checkpoint(checkpoints / t, task=t) for t in KINDS}
    return wide_checkpoints(checkpoints, split_scale=request.param.endswith("split_scale"))


def sample_inputs(ck: Checkpoint) -> list[dict[str, list[int]]]:
    """Inputs of each task, one of them padded (classifier, translator)."""
    v = ck.vocabs
    if ck.task == "classifier":
        ids = v["words"].encode(tokenize("the acting is wonderful but the plot is thin", "en"))
        return [{"ids": ids}, {"ids": ids[:5] + [PAD, PAD]}]
    if ck.task == "generator":
        return [{"ids": encode_chars(v["chars"], "ROMEO: But soft, what")}]
    src = v["src"].encode(tokenize("ein mann fährt fahrrad .", "de"), add_sos_eos=True)
    tgt = v["tgt"].encode(tokenize("a man rides a bike .", "en"), add_sos_eos=True)[:-1]
    return [{"src": src, "tgt": tgt}, {"src": src + [PAD, PAD], "tgt": tgt[:4]}]


def forward_maps(ck: Checkpoint, inputs: dict[str, list[int]]) -> AttentionMaps:
    """The map the app shows: an ordinary return_attention pass, no probe."""
    args = [torch.tensor([inputs[n]]) for n in (("src", "tgt") if ck.task == "translator" else ("ids",))]
    with torch.no_grad():
        return ck.model(*args, return_attention=True)[1]


def axes(task: str, kind: str, inputs: dict) -> tuple[list[int], list[int]]:
    if task != "translator":
        return inputs["ids"], inputs["ids"]
    return {"encoder": (inputs["src"],) * 2, "decoder": (inputs["tgt"],) * 2, "cross": (inputs["tgt"], inputs["src"])}[
        kind
    ]


def cells(n_q: int, n_k: int) -> set[tuple[int, int]]:
    """Corners, the first row's last key (masked where causal), a middle cell and the padded keys."""
    return {(0, 0), (n_q - 1, n_k - 1), (0, n_k - 1), (n_q // 2, max(0, n_k // 2 - 1)), (n_q - 1, 0)}


def test_every_kind_weight_mask_and_output(cks) -> None:
    for task, ck in cks.items():
        for inputs in sample_inputs(ck):
            maps = forward_maps(ck, inputs)
            for kind in KINDS[task]:
                q_ids, k_ids = axes(task, kind, inputs)
                for layer, w in enumerate(getattr(maps, kind)):
                    for head in range(w.size(1)):
                        for i, j in cells(len(q_ids), len(k_ids)) | {
                            (1, k) for k in range(len(k_ids)) if k_ids[k] == PAD
                        }:
                            e = explain(ck, inputs, kind, layer, head, i, j)
                            check_cell(e, float(w[0, head, i, j]), task, kind, i, j, k_ids)
                            check_row(e, w[0, head, i].numpy())


def check_cell(e, map_weight: float, task: str, kind: str, i: int, j: int, k_ids: list[int]) -> None:
    where = (task, kind, e.layer, e.head, i, j)
    assert abs(e.weight - map_weight) <= TOL, where
    assert e.map_weight == map_weight, where  # the probed pass computed the same map
    future = (task, kind) in CAUSAL and j > i
    padding = k_ids[j] == PAD and task != "generator"
    assert e.masked == (future or padding), where
    assert e.mask_reasons[j] == ("future" if future else "padding" if padding else ""), where
    if e.masked:
        assert e.weight == 0.0 and e.scores[j] == -np.inf
    assert e.raw_score == pytest.approx(float(e.product.sum()), abs=1e-12)
    assert e.score == pytest.approx(e.raw_score / np.sqrt(e.head_dim), abs=1e-12)
    assert e.head_dim == (e.dim if e.wide else e.dim // e.heads)
    np.testing.assert_allclose(e.output, e.model_output, atol=TOL, rtol=0)


def check_row(e, map_row: np.ndarray) -> None:
    assert e.weights.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(e.weights, map_row, atol=TOL, rtol=0)
    assert (e.weights[~e.mask] == 0).all() and np.isneginf(e.scores[~e.mask]).all()


def attention_module(model, kind: str, layer: int):
    if isinstance(model, Translator):
        block = (model.encoder if kind == "encoder" else model.decoder)[layer]
        return {
            "encoder": block.attn if kind == "encoder" else None,
            "decoder": getattr(block, "self_attn", None),
            "cross": getattr(block, "cross_attn", None),
        }[kind]
    return model.blocks[layer].attn


def test_vectors_come_from_the_module_and_heads_unify_to_its_output(cks) -> None:
    """q_i and k_j are the head's slices of W_q x_i and W_k c_j; the heads' outputs, concatenated and put
    through unify, equal the attention module's own forward output (its fused path) for that query."""
    for task, ck in cks.items():
        inputs = sample_inputs(ck)[-1]
        for kind in KINDS[task]:
            q_ids, k_ids = axes(task, kind, inputs)
            i, j = len(q_ids) - 1, 0
            for layer in range(len(getattr(forward_maps(ck, inputs), kind))):
                attn = attention_module(ck.model, kind, layer)
                es = [explain(ck, inputs, kind, layer, h, i, j) for h in range(attn.heads)]
                s = attn.head_dim
                assert all(e.split_scale == attn.split_scale and ("s^¼" in e.scale_text) == e.split_scale for e in es)
                for h, e in enumerate(es):
                    rows = slice(h * s, (h + 1) * s)
                    x, c = torch.tensor(e.query_input).float(), torch.tensor(e.key_input).float()
                    np.testing.assert_allclose(
                        e.q, (attn.to_q.weight[rows] @ x + attn.to_q.bias[rows]).detach(), atol=1e-5
                    )
                    np.testing.assert_allclose(
                        e.k, (attn.to_k.weight[rows] @ c + attn.to_k.bias[rows]).detach(), atol=1e-5
                    )
                probe = Probe(kind, layer)
                args = [torch.tensor([inputs[n]]) for n in (("src", "tgt") if task == "translator" else ("ids",))]
                with torch.no_grad():
                    ck.model(*args, probe=probe)
                    t = probe.trace
                    out, _ = attn(t.x, None if kind != "cross" else t.context, t.mask)
                    unified = attn.unify(torch.tensor(np.concatenate([e.output for e in es])).float())
                torch.testing.assert_close(unified, out[0, i], atol=1e-5, rtol=0)
                assert es[0].concat_shape == (len(q_ids), attn.heads * s) and es[0].unify_shape == (
                    attn.heads * s,
                    es[0].dim,
                )


def test_a_probe_changes_nothing(cks) -> None:
    """Asking for one layer's internals leaves the logits and maps of the pass as they were."""
    ck = cks["translator"]
    inputs = sample_inputs(ck)[1]
    src, tgt = torch.tensor([inputs["src"]]), torch.tensor([inputs["tgt"]])
    with torch.no_grad():
        plain, maps = ck.model(src, tgt, return_attention=True)
        fast, _ = ck.model(src, tgt)
        for kind in KINDS["translator"]:
            probed, probed_maps = ck.model(src, tgt, return_attention=True, probe=Probe(kind, 1))
            assert torch.equal(probed, plain)
            assert all(torch.equal(a, b) for a, b in zip(getattr(maps, kind), getattr(probed_maps, kind)))
            probed_fast, none = ck.model(src, tgt, probe=Probe(kind, 1))  # the probed layer alone is unfused
            assert none is None
            torch.testing.assert_close(probed_fast, fast, atol=1e-5, rtol=0)


@pytest.mark.parametrize("kind", ["decoder", "cross"])
def test_decoding_step_probe_equals_the_teacher_forced_row(cks, kind: str) -> None:
    """The decoder is causal: step t of cached decoding computes row t of the teacher-forced pass,
    with the same query, keys, values, weights and per-head output."""
    model = cks["translator"].model
    inputs = sample_inputs(cks["translator"])[0]
    src, tgt = torch.tensor([inputs["src"]]), torch.tensor([inputs["tgt"]])
    for layer in range(len(model.decoder)):
        forced = Probe(kind, layer)
        with torch.no_grad():
            model(src, tgt, probe=forced)
            memory, _ = model.encode(src)
            cache = model.new_cache()
            for t in range(tgt.size(1)):
                step = Probe(kind, layer)
                model.decode_step(tgt[:, : t + 1], memory, src, cache, probe=step)
                f, s = forced.trace, step.trace
                keys = t + 1 if kind == "decoder" else src.size(1)
                for name in ("q", "weights", "heads"):
                    want = getattr(f, name)[:, :, t : t + 1]
                    want = want[..., :keys] if name == "weights" else want
                    torch.testing.assert_close(getattr(s, name), want, atol=TOL, rtol=0)
                torch.testing.assert_close(s.k, f.k[:, :, :keys], atol=TOL, rtol=0)
                torch.testing.assert_close(s.v, f.v[:, :, :keys], atol=TOL, rtol=0)
                assert (s.context is None) == (kind == "decoder" and t > 0)  # cached positions keep only k, v


def test_translation_explained_from_its_own_inputs(cks) -> None:
    """translate() records its inputs; each explained row equals the maps it showed: kept from the greedy
    decoding steps, or from the teacher-forced pass of beam search and of a reference."""
    ck = cks["translator"]
    runs = [
        translate(ck, "ein mann fährt fahrrad ."),
        translate(ck, "zwei hunde spielen im schnee .", beam_size=3),
        translate(ck, "ein junge springt", reference="a boy jumps into the water ."),
    ]
    for result in runs:
        assert len(result.inputs["tgt"]) == len(result.tgt_in) and len(result.inputs["src"]) == len(result.src_tokens)
        for kind in KINDS["translator"]:
            maps = getattr(result.attention, kind)
            for layer in range(len(maps)):
                for head in {0, maps[layer].size(1) - 1}:
                    for i in range(maps[layer].size(2)):
                        e = explain(ck, result.inputs, kind, layer, head, i, 0)
                        np.testing.assert_allclose(e.weights, maps[layer][0, head, i].numpy(), atol=TOL, rtol=0)
                        assert e.query_tokens == (result.src_tokens if kind == "encoder" else result.tgt_in)


def test_classification_and_generation_record_their_inputs(cks) -> None:
    c = classify(cks["classifier"], "the acting is wonderful")
    g = generate(cks["generator"], "ROMEO: But", length=8, seed=0)
    for ck, result in ((cks["classifier"], c), (cks["generator"], g)):
        w = result.attention.encoder[1]
        e = explain(ck, result.inputs, "encoder", 1, 0, w.size(2) - 1, 1)
        assert e.weight == pytest.approx(float(w[0, 0, -1, 1]), abs=TOL)
    assert e.query_tokens == g.chars


@pytest.mark.parametrize(
    "task,inputs,args,match",
    [
        ("classifier", {"ids": [5, 6]}, ("cross", 0, 0, 0, 0), "no 'cross' attention"),
        ("classifier", {"ids": [5, 6]}, ("encoder", 9, 0, 0, 0), "layer 9 does not exist"),
        ("classifier", {"ids": [5, 6]}, ("encoder", 0, 7, 0, 0), "head 7 does not exist"),
        ("classifier", {"ids": [5, 6]}, ("encoder", 0, 0, 2, 0), "query 2 is outside"),
        ("classifier", {"ids": [5, 6]}, ("encoder", 0, 0, 0, -1), "key -1 is outside"),
        ("classifier", {"ids": []}, ("encoder", 0, 0, 0, 0), "empty"),
        ("classifier", {"src": [5]}, ("encoder", 0, 0, 0, 0), "needs inputs"),
        ("classifier", {"ids": [5, 10**6]}, ("encoder", 0, 0, 0, 0), "outside the vocabulary"),
        ("generator", {"ids": [1] * 49}, ("encoder", 0, 0, 0, 0), "at most 48"),
        ("translator", {"src": [2, 5, 3]}, ("cross", 0, 0, 0, 0), "'src', 'tgt'"),
        ("translator", {"src": [2, 5, 3], "tgt": [2, 4]}, ("cross", 0, 0, 0, 3), "key 3 is outside the 3"),
        ("translator", {"src": [2, 5, 3], "tgt": [2, 4]}, ("decoder", 0, 0, 2, 0), "query 2 is outside the 2"),
    ],
)
def test_bad_arguments_say_what_to_fix(checkpoints, task, inputs, args, match) -> None:
    ck = load_checkpoint(checkpoints / task, task=task)
    with pytest.raises(ValueError, match=match):
        explain(ck, inputs, *args)


def test_training_mode_is_refused(checkpoints) -> None:
    ck = load_checkpoint(checkpoints / "classifier", task="classifier")
    ck.model.train()  # this test's own copy
    with pytest.raises(ValueError, match="eval mode"):
        explain(ck, {"ids": [5, 6]}, "encoder", 0, 0, 0, 0)


def test_a_switched_off_head_explains_a_zero_output(checkpoints) -> None:
    """With the run's head mask, the weight is unchanged (ablation acts after the softmax) and the
    head's output, scaled by the mask, matches the module's (zero)."""
    ck = load_checkpoint(checkpoints / "translator", task="translator")
    inputs = sample_inputs(ck)[0]
    off = {"cross": torch.ones(tiny.TRANSLATOR.dec_layers, tiny.TRANSLATOR.heads)}
    off["cross"][1, 2] = 0.0  # layer 1 only: the layers below, and so this layer's input, are unchanged
    plain = explain(ck, inputs, "cross", 1, 2, 2, 1)
    masked = explain(ck, inputs, "cross", 1, 2, 2, 1, head_mask=off)
    assert masked.head_factor == 0.0 and masked.weight == pytest.approx(plain.weight, abs=TOL)
    assert not masked.output.any() and not masked.model_output.any()


# ------------------------------------------------------------------------------------------- panel


@pytest.fixture(scope="module")
def masked_cell(checkpoints):
    """A decoder cell whose key is in the query's future: masked."""
    ck = load_checkpoint(checkpoints / "translator", task="translator")
    return explain(ck, sample_inputs(ck)[0], "decoder", 1, 2, 1, 3)


def test_vector_figure_shows_q_k_and_their_product(masked_cell) -> None:
    from viz.explain import vector_figure

    e = masked_cell
    (trace,) = vector_figure(e).data
    assert trace.type == "heatmap" and list(trace.y) == ["q_i (query)", "k_j (key)", "q_i × k_j"]
    assert len(trace.x) == e.head_dim
    np.testing.assert_allclose(np.array(trace.customdata), np.stack([e.q, e.k, e.product]), atol=1e-6)
    assert f"{e.raw_score:.4f}" in vector_figure(e).layout.title.text


def test_row_figure_highlights_the_key_and_marks_masked_ones(masked_cell) -> None:
    from viz.explain import CHOSEN, MASKED, OTHER, row_figure

    e = masked_cell
    scores, weights = row_figure(e).data
    assert list(weights.x) == [f"{j}:{t}".replace("<", "&lt;").replace(">", "&gt;") for j, t in enumerate(e.key_tokens)]
    np.testing.assert_allclose(weights.y, e.weights)
    colors = list(weights.marker.color)
    assert colors[e.key] == CHOSEN and colors[0] == OTHER
    assert all(colors[j] == MASKED for j in range(len(colors)) if j != e.key and not e.mask[j])
    assert scores.text[e.key] == "masked" and scores.customdata[e.key] == "masked (future)"
    assert scores.text[0] == f"{e.scores[0]:.3f}"
    fig = row_figure(e)
    assert "this key is masked" in fig.layout.title.text
    assert fig.layout.shapes[0].x0 == e.key - 0.5 and fig.layout.shapes[0].xref == "x2"  # the key's column


def test_output_figure_sums_the_weighted_values(masked_cell) -> None:
    from viz.explain import output_figure

    e = masked_cell
    fig = output_figure(e)
    z = np.array(fig.data[0].z, dtype=float)
    assert z.shape == (len(e.key_tokens) + 1, e.head_dim)
    np.testing.assert_allclose(z[:-1].sum(axis=0), z[-1], atol=1e-4)
    np.testing.assert_allclose(z[-1], e.output, atol=1e-5)
    assert fig.layout.shapes[0].y0 == e.key - 0.5
    (t, hs), (_, dim) = e.concat_shape, e.unify_shape
    assert f"({t} × {hs})" in fig.layout.title.text and f"combines the heads ({hs} → {dim})" in fig.layout.title.text


def test_frame_holds_every_number_and_round_trips_as_csv(masked_cell) -> None:
    import io

    import pandas as pd

    from viz.explain import explanation_frame

    e = masked_cell
    frame = explanation_frame(e)
    s, n = e.head_dim, len(e.key_tokens)
    assert len(frame) == 5 * s + 6 + n * (4 + s)
    back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    pick = lambda q: back[back.quantity == q]  # noqa: E731
    assert pick("weight").value.item() == e.weight == 0.0
    np.testing.assert_allclose(pick("q_i").value, e.q)
    np.testing.assert_allclose(pick("row_weight").value, e.weights)
    assert np.isneginf(pick("row_score").value.iloc[e.key]) and pick("row_mask_visible").value.iloc[e.key] == 0
    assert (back.key_token == e.key_token).all() and (back.kind == "decoder").all()


def test_steps_and_titles_keep_user_text_literal(masked_cell) -> None:
    from viz.explain import explanation_steps, row_figure, vector_figure

    tokens = ["<b>x</b>", *masked_cell.key_tokens[1:]]
    tokens[3] = "<i>y"  # the (masked) key
    e = dataclasses.replace(masked_cell, key_tokens=tokens)
    assert "&lt;i&gt;y" in vector_figure(e).layout.title.text and "<i>" not in vector_figure(e).layout.title.text
    assert row_figure(e).data[1].x[0] == "0:&lt;b&gt;x&lt;/b&gt;"
    steps = explanation_steps(e)
    assert len(steps) == 5 and "3:<i>y (future)" in steps[2] and "is masked" in steps[2]


def float64_checkpoints(checkpoints) -> dict[str, Checkpoint]:
    """The tiny checkpoints with float64 copies of their models, and a post-norm translator."""
    out = {}
    for task in KINDS:
        ck = load_checkpoint(checkpoints / task, task=task)
        out[task] = dataclasses.replace(ck, model=ck.model.double().eval())
    torch.manual_seed(2)
    post = Translator(dataclasses.replace(out["translator"].model.config, norm_first=False)).double().eval()
    out["translator-post-norm"] = dataclasses.replace(out["translator"], model=post)
    return out


def test_the_layer_0_score_splits_into_token_and_position_terms(checkpoints) -> None:
    """The terms sum to the score (1e-6), and with the position embeddings zeroed only token·token and the
    bias remain: the split is exact, not a fit."""
    for name, ck in float64_checkpoints(checkpoints).items():
        for inputs in sample_inputs(ck)[:1]:
            for kind in KINDS[ck.task]:
                n_q, n_k = (len(ids) for ids in axes(ck.task, kind, inputs))
                for head, i, j in [(0, n_q - 1, 0), (1, min(2, n_q - 1), min(1, n_k - 1))]:
                    e = explain(ck, inputs, kind, 0, head, i, j)
                    if kind == "cross":
                        assert e.position_split is None and "two different stacks" in e.position_note
                        continue
                    assert sum(e.position_split.values()) == pytest.approx(e.score, abs=1e-6), (name, kind)
                    later = explain(ck, inputs, kind, 1, head, i, j)
                    assert later.position_split is None and "layer 0" in later.position_note
    still = float64_checkpoints(checkpoints)["classifier"]  # freshly loaded: this test's own model
    with torch.no_grad():
        still.model.pos_emb.weight.zero_()
    e = explain(still, sample_inputs(still)[0], "encoder", 0, 0, 2, 1)
    assert e.position_split["token·position"] == e.position_split["position·token"] == 0.0
    assert e.position_split["position·position"] == 0.0
    assert e.position_split["token·token"] + e.position_split["bias"] == pytest.approx(e.score, abs=1e-9)


def test_the_deciding_dimensions_are_the_largest_products(cks) -> None:
    ck = cks["classifier"]
    e = explain(ck, sample_inputs(ck)[0], "encoder", 1, 1, 2, 0)
    top = e.deciding_dimensions(4)
    sizes = [abs(v) for _, v, _ in top]
    assert sizes == sorted(sizes, reverse=True) and top[0][0] == int(np.argmax(np.abs(e.product)))
    assert all(e.product[d] == v for d, v, _ in top)
    assert sum(share for *_, share in e.deciding_dimensions(e.head_dim)) == pytest.approx(1.0)
    from viz.explain import explanation_steps

    assert f"d{top[0][0]} (" in explanation_steps(e)[1]


def test_the_split_figure_draws_the_five_terms(checkpoints) -> None:
    from viz.explain import split_figure

    ck = load_checkpoint(checkpoints / "classifier", task="classifier")
    e = explain(ck, sample_inputs(ck)[0], "encoder", 0, 1, 2, 1)
    bars = split_figure(e).data[0]
    assert list(bars.x) == list(e.position_split) and sum(bars.y) == pytest.approx(e.score, abs=1e-5)
    with pytest.raises(ValueError, match="layer 0"):
        split_figure(explain(ck, sample_inputs(ck)[0], "encoder", 1, 1, 2, 1))
