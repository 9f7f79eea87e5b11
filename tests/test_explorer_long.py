"""The explorer at a model's full context (issue 33.3): the q8 encoding of the weights (every weight back
within its row's largest / 510, each row's largest exact, masked cells 0), the choice between exact and
q8 by size, the grouped-query and sliding-window fields of a kind and of a Hugging Face run, and the
Any model page reading the model's whole context (the start of a longer text, a clear message for text
far past it)."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
import torch

from fixtures.explorer_runs import classifier_run, generator_run, translator_run
from fixtures.hub_tiny import save_gpt2, save_modern
from fixtures.long_runs import long_run
from model.core.checkpoint import load_checkpoint
from model.core.results import attention_kind, causal
from model.hub.load import load
from model.hub.run import run
from tests import apptest
from viz.explorer import explorer_payload, kind_weights, pack_payload, unpack_payload
from viz.explorer.payload import EXACT_WEIGHTS, LEVELS, dequantise, quantise

ROOT = Path(__file__).resolve().parent.parent


def bound(w: np.ndarray) -> np.ndarray:
    """The q8 error bound of each weight: its row's largest over 2 × 255 (float32 rounding on top)."""
    return w.max(-1, keepdims=True) / (2 * LEVELS) + 1e-7


def window_mask(n: int, window: int) -> np.ndarray:
    q, k = np.indices((n, n))
    return causal(n) & (q - k < window)


def padding_mask(n: int) -> np.ndarray:
    m = np.ones((n, n), dtype=bool)
    m[:, -2:] = False
    return m


def holes_mask(n: int) -> np.ndarray:
    """Visible cells in more than one run per row: the general (boolean-index) path."""
    m = np.ones((n, n), dtype=bool)
    m[:, 1::3] = False
    return m


# ---- q8 encoding ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mask",
    [np.ones((9, 9), bool), causal(9), window_mask(9, 3), padding_mask(9), holes_mask(9), np.ones((4, 11), bool)],
    ids=["full", "causal", "window", "padding", "holes", "cross"],
)
def test_quantise_round_trip_is_within_the_stated_error(mask) -> None:
    rng = np.random.default_rng(0)
    logits = np.where(mask, rng.normal(scale=3.0, size=(3, 4, *mask.shape)), -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w = (w / w.sum(-1, keepdims=True)).astype(np.float32)
    scales, codes = quantise(w, mask)
    assert scales.shape == (3, 4, mask.shape[0]) and codes.dtype == np.uint8
    assert codes.shape == (3, 4, int(mask.sum()))  # masked cells are not sent
    back = dequantise(scales, codes, mask)
    assert np.all(np.abs(back - w) <= bound(w))
    assert np.all(back[..., ~mask] == 0)
    rows = np.arange(mask.shape[0])
    top = w.argmax(-1)
    np.testing.assert_allclose(np.take_along_axis(back, top[..., None], -1)[..., 0], w.max(-1), rtol=1e-6)
    # a row sums to 1 within the error of its visible cells
    assert np.all(np.abs(back.sum(-1) - 1) <= mask.sum(1)[rows] * w.max(-1) / (2 * LEVELS) + 1e-5)


def test_a_row_of_zeros_stays_zeros() -> None:
    w = np.zeros((1, 2, 3, 3), np.float32)
    w[0, 1, 2] = [0.2, 0.3, 0.5]
    scales, codes = quantise(w, np.ones((3, 3), bool))
    back = dequantise(scales, codes, np.ones((3, 3), bool))
    assert np.all(back[0, 0] == 0) and np.all(np.isfinite(back))
    assert np.all(np.abs(back - w) <= bound(w))


@pytest.mark.parametrize(
    "kinds", [translator_run(), classifier_run(), generator_run(n=40)], ids=["translator", "classifier", "generator"]
)
def test_payload_q8_decodes_within_the_error_and_packs(kinds) -> None:
    payload = explorer_payload(kinds, exact=False)
    back = unpack_payload(pack_payload(payload))
    for meta, k in zip(back["kinds"], kinds):
        assert meta["encoding"] == "q8"
        w = kind_weights(back, meta)
        assert w.shape == k.weights.shape and np.all(np.abs(w - k.weights) <= bound(k.weights))
    assert len(payload["weights"]) % 4 == 0  # the browser reads the floats in place


def test_small_runs_go_exactly_and_long_ones_as_a_byte_a_weight() -> None:
    small = explorer_payload(translator_run())
    assert {m["encoding"] for m in small["kinds"]} == {"f4"}
    (kind,) = long_run(300, layers=2, heads=12)  # 2.2 M weights, 1.1 M of them visible
    assert kind.weights.size > EXACT_WEIGHTS
    payload = explorer_payload([kind])
    (meta,) = payload["kinds"]
    visible = int(kind.mask.sum()) * 2 * 12
    assert meta["encoding"] == "q8" and len(payload["weights"]) <= visible + 4 * 2 * 12 * 300 + 3
    assert np.all(np.abs(kind_weights(payload, meta) - kind.weights) <= bound(kind.weights))
    exact = explorer_payload([kind], exact=True)
    np.testing.assert_array_equal(kind_weights(exact, exact["kinds"][0]), kind.weights)
    other = explorer_payload(long_run(300, layers=2, heads=12, seed=1))
    assert other["digest"] != payload["digest"]


def test_grouped_heads_and_the_window_reach_the_browser() -> None:
    (kind,) = long_run(40, layers=4, heads=8, kv_heads=2, window=6)
    (meta,) = explorer_payload([kind])["kinds"]
    assert meta["kv_heads"] == 2 and meta["window"] == {"size": 6, "layers": [0, 2]}
    assert np.all(kind.weights[0][:, ~kind.layer_mask(0)] == 0)  # outside the window: nothing
    assert kind.layer_mask(1) is kind.mask and not kind.layer_mask(0)[30, 20]
    with pytest.raises(ValueError, match="share 3 key/value heads"):
        attention_kind("decoder", kind.weights, kind.queries, kind.keys, kv_heads=3)
    with pytest.raises(ValueError, match="window layers"):
        attention_kind("decoder", kind.weights, kind.queries, kind.keys, window=4, window_layers=[9])


# ---- Hugging Face runs at their full context -----------------------------------------------------


@pytest.fixture(scope="module")
def hubs(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hub-long")
    out = {"gpt2": load(str(save_gpt2(root / "gpt2")))}
    for family in ("llama", "mistral", "gemma2"):
        out[family] = load(str(save_modern(root / family, family)))
    return out


def test_a_decoder_keeps_the_start_of_a_long_text(hubs) -> None:
    hub = hubs["gpt2"]
    long = " ".join(f"word{i}" for i in range(400))
    r = run(hub, long).result
    full = hub.tokenizer(long)["input_ids"]
    assert r.truncated and r.inputs["ids"] == full[: hub.max_tokens]
    assert len(r.kinds["decoder"].queries) == hub.max_tokens  # the whole context is shown


@pytest.mark.parametrize(
    ("family", "kv", "window", "layers"),
    [("llama", 2, 0, ()), ("mistral", 2, 4, (0, 1)), ("gemma2", 2, 4, (0,))],
)
def test_a_run_knows_its_grouped_heads_and_window(hubs, family, kv, window, layers) -> None:
    r = run(hubs[family], "the cat sat on the mat and the dog sat on the log").result
    k = r.kinds["decoder"]
    assert (k.kv_heads, k.window, k.window_layers) == (kv, window, layers)
    for layer in range(k.layers):  # transformers gives no weight where the kind says a key is hidden
        assert np.all(k.weights[layer][:, ~k.layer_mask(layer)] == 0)
        if layer not in layers and k.weights.shape[-1] > window:
            assert np.any(k.weights[layer][:, ~window_mask(k.weights.shape[-1], max(window, 1))] > 0)


# ---- the page --------------------------------------------------------------------------------------

PAGE = apptest.page("any_model")


def explorer_header(at) -> dict:
    (element,) = [e for e in at.get("bidi_component") if e.proto.component_name.endswith("attention_explorer")]
    return unpack_payload(element.proto.bytes)


def test_any_model_reads_the_whole_context_and_says_what_it_cut(hub_env, tmp_path) -> None:
    folder = save_gpt2(tmp_path / "gpt2")
    limit = load(str(folder)).max_tokens
    long = " ".join(f"word{i}" for i in range(300))
    at = apptest.run(PAGE, {"hub_id": str(folder), "hub_text": long})
    assert not at.exception and not at.error
    notes = " ".join(i.value for i in at.info)
    assert f"only its first {limit} tokens are used" in notes
    (meta,) = explorer_header(at)["kinds"]
    assert len(meta["queries"]) == limit and "".join(meta["queries"][:3]) == "word"  # the start, all of it
    assert any(f"reads up to {limit} tokens here" in c.value for c in at.caption)

    far = "x " * (limit * 40)  # far past what the model reads: cut before tokenising, with a message
    at = apptest.run(PAGE, {"hub_id": str(folder), "hub_text": far})
    assert not at.exception and not at.error
    notes = " ".join(i.value for i in at.info)
    assert f"far more than the {limit} tokens" in notes and "first" in notes
    (meta,) = explorer_header(at)["kinds"]
    assert len(meta["queries"]) == limit  # and the rest of the page works

    at = apptest.run(PAGE, {"hub_id": str(folder), "hub_text": "   "})
    assert not at.exception and any("The text is empty" in w.value for w in at.warning)


# ---- our models read their trained context ---------------------------------------------------------


@pytest.mark.parametrize(("task", "field"), [("classifier", "max_len"), ("generator", "block_size")])
def test_our_models_read_the_context_they_were_trained_on(task, field) -> None:
    from model.analysis.runs import run as run_ours

    directory = ROOT / "checkpoints" / task
    if not (directory / "model.safetensors").exists():
        pytest.skip(f"no shipped {task} checkpoint")
    ck = load_checkpoint(directory, device=torch.device("cpu"))
    trained = ck.training["model"][field]  # what it was trained with, from its checkpoint
    assert ck.spec.limit(ck.model.config) == trained == getattr(ck.model.config, field)
    text = ("the film is a joy and " * 40) if task == "classifier" else ("To be, or not to be. " * 20)
    r = run_ours(ck, text)
    (meta,) = explorer_payload(list(r.kinds.values()))["kinds"]
    assert r.truncated and len(meta["queries"]) == trained  # the explorer shows all of it


def test_a_rerun_of_the_same_long_run_reuses_its_encoding() -> None:
    from pages.shared import explorer as shown

    (kind,) = long_run(300, layers=2, heads=12)
    first = explorer_payload([kind], title="a")
    shown._remember([kind], None, first)
    again = explorer_payload([kind], title="b", state={"head": 3}, reuse=shown._encoded([kind], None))
    assert again["weights"] is first["weights"] and again["digest"] == first["digest"]
    assert again["title"] == "b" and again["state"]["head"] == 3
    (other,) = long_run(300, layers=2, heads=12)  # equal but another run: encoded afresh
    assert shown._encoded([other], None) is None
    shown._remember([other], None, explorer_payload([other]))
    key = shown._identity([kind], None)[0]
    assert key in shown._ENCODED
    del kind, first, again
    gc.collect()
    assert key not in shown._ENCODED and len(shown._ENCODED) == 1  # a run let go takes its encoding with it
