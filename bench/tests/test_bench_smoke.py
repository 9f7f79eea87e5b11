"""The benchmark scripts' pure helpers: statistics, generated inputs and markers, the cross-talk check,
the thread recommendation, process memory, and the torch.nn.Transformer baseline of bench/throughput.py
(built at tiny sizes, it must compute exactly what our translator computes). No browser, no timing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
import torch

from bench._server import percentile, read_checkpoint_meta, summary
from bench.load import check_markers
from bench.memory import descendants, parent_of, tree_memory_mb
from bench.page_latency import (
    INPUT_TOKENS,
    MARKER_PATTERN,
    PAGES,
    letters,
    make_input,
    marker,
    page_url,
    word_pool,
)
from bench.throughput import (
    attention_inputs,
    attention_pair,
    build_pair,
    check_same,
    make_batch,
    optimizer,
    parse_shapes,
    run_attention,
    train_step,
)
from fixtures.server import ROOT
from fixtures.tiny import make_checkpoints
from model.core.tokenize import tokenize
from model.nets.translator import TranslatorConfig

TINY = TranslatorConfig(src_vocab_size=40, tgt_vocab_size=30, dim=16, heads=4, enc_layers=2, dec_layers=3, ff_dim=24)


# ---------------------------------------------------------------------------------------- statistics


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37])
@pytest.mark.parametrize("q", [0, 5, 50, 90, 95, 100])
def test_percentile_matches_numpy(n: int, q: float) -> None:
    values = np.random.default_rng(n).normal(size=n).tolist()
    assert percentile(values, q) == pytest.approx(np.percentile(values, q))


def test_percentile_rejects_nothing_and_bad_q() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_summary() -> None:
    s = summary([3.0, 1.0, 2.0, 11.0])  # p95: 3 + 0.85 * (11 - 3)
    assert s == {"n": 4, "median": 2.5, "p95": 9.8, "min": 1.0, "max": 11.0}
    assert summary([]) == {"n": 0, "median": None, "p95": None, "min": None, "max": None}


# ---------------------------------------------------------------------------- inputs and markers


def test_markers_are_unique_letters_only_and_one_token() -> None:
    marks = {marker(s, c) for s in range(25) for c in range(12)}
    assert len(marks) == 25 * 12
    assert letters(305) == "daf"
    for m in marks:
        assert re.fullmatch(MARKER_PATTERN, m)
        assert tokenize(m, "en") == [m] and tokenize(m, "de") == [m]


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("ckpt"))


@pytest.mark.parametrize("page,lang", [("classifier", "en"), ("translator", "de")])
def test_word_level_inputs_have_20_tokens_marker_first(tiny_root, page: str, lang: str) -> None:
    pool = word_pool(page, read_checkpoint_meta(PAGES[page].task, tiny_root))
    text = make_input(page, pool, seed=3, mark=marker(1, 2))
    tokens = tokenize(text, lang)
    assert len(tokens) == INPUT_TOKENS
    assert tokens[0] == marker(1, 2)
    assert make_input(page, pool, 3, marker(1, 2)) == text != make_input(page, pool, 4, marker(1, 2))


def test_hand_and_generator_inputs(tiny_root) -> None:
    hand = make_input("hand", word_pool("hand", None), 0, marker(0, 1))
    assert len(hand.split()) == INPUT_TOKENS and hand.split()[0] == marker(0, 1)
    chars = read_checkpoint_meta("generator", tiny_root)["vocabs"]["chars"]
    prompt = make_input("generator", word_pool("generator", {"vocabs": {"chars": chars}}), 0, None)
    assert len(prompt) == INPUT_TOKENS and set(prompt) <= set(chars) and prompt.strip()


def test_page_urls() -> None:
    assert page_url("http://h:1", "start") == "http://h:1/"  # the default page lives at the root
    assert page_url("http://h:1", "hand") == "http://h:1/hand"
    assert page_url("http://h:1", "classifier") == "http://h:1/classifier"


def test_check_markers() -> None:
    own = marker(3, 4)
    assert check_markers(f"['0:{own}', '1:the']", "some page text", 3, 4) == []
    assert "not in the heatmap" in check_markers("['0:the']", "", 3, 4)[0]
    assert any("cross-talk" in p for p in check_markers(f"{own} {marker(5, 4)}", "", 3, 4))
    assert any("cross-talk" in p for p in check_markers(own, f"warning: {marker(13, 0)}", 3, 4))
    assert any("stale" in p for p in check_markers(f"{own} {marker(3, 1)}", "", 3, 4))


# -------------------------------------------------------------------------------------------- memory


def test_process_memory_of_a_tree() -> None:
    assert parent_of(os.getpid()) == os.getppid()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in descendants(os.getpid())
        mem = tree_memory_mb(os.getpid())
        assert mem["processes"] >= 2
        assert 0 < mem["server_rss_mb"] <= mem["rss_mb"] <= mem["peak_rss_mb"]
    finally:
        child.kill()
        child.wait()


# --------------------------------------------------------------------------- the throughput baseline


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("tie", [True, False])
def test_torch_transformer_baseline_computes_the_same_function(norm_first: bool, tie: bool) -> None:
    config = replace(TINY, norm_first=norm_first, tie_embeddings=tie)
    ours, theirs = build_pair(config)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    src, tgt = make_batch(config, batch_tokens=60, src_len=9, tgt_len=7)
    assert (src == config.pad_id).any() and (tgt == config.pad_id).any()  # the masks matter
    assert check_same(ours, theirs, src, tgt) < 1e-5
    assert ours.training and theirs.training  # check_same restores training mode


def test_train_step_runs_for_both_models() -> None:
    ours, theirs = build_pair(TINY)
    src, tgt = make_batch(TINY, batch_tokens=40, src_len=8, tgt_len=6)
    training = {"label_smoothing": 0.1, "grad_clip": 1.0, "weight_decay": 0.01, "lr": 1e-3}
    for model in (ours, theirs):
        before = model.out.bias.detach().clone()
        n = train_step(model, optimizer(model, training), src, tgt, training)
        assert n == int((tgt[:, 1:] != TINY.pad_id).sum())
        assert not torch.equal(before, model.out.bias)


def test_attention_modules_return_the_same_per_head_weights() -> None:
    ours, theirs = attention_pair(16, 4)
    x, pad = attention_inputs(3, 7, 16)
    w_ours, w_theirs = run_attention(ours, theirs, x, pad)
    assert w_ours.shape == w_theirs.shape == (3, 4, 7, 7)
    torch.testing.assert_close(w_ours, w_theirs, atol=1e-6, rtol=1e-5)


def test_parse_shapes() -> None:
    assert parse_shapes("1x20, 166x15") == [(1, 20), (166, 15)]
    with pytest.raises(Exception, match="BATCHxLENGTH"):
        parse_shapes("20")


def test_floor_app_draws_one_heatmap_of_its_input() -> None:
    """bench/floor_app.py, the page-latency floor: one text box, one heatmap over its words."""
    import json

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "bench" / "floor_app.py"), default_timeout=60).run()
    assert not at.exception
    at.text_input(key="floor_text").input("a b <b>c</b>").run()
    [chart] = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    assert spec["data"][0]["x"] == ["0:a", "1:b", "2:&lt;b&gt;c&lt;/b&gt;"]
    assert all(abs(sum(row) - 1) < 1e-3 for row in spec["data"][0]["z"])


def test_floor_pages_serves_the_same_floor_at_a_page_path() -> None:
    """bench/floor_pages.py: a start page at "/" and the floor app as the page "floor"."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "bench" / "floor_pages.py"), default_timeout=60).run()
    assert not at.exception and "/floor" in at.markdown[0].value
    at.switch_page("floor_app.py").run()
    assert not at.exception
    assert at.text_input(key="floor_text").value and len(at.get("plotly_chart")) == 1


def test_decoding_benchmark_runs_on_a_tiny_translator(tiny_root) -> None:
    """bench/decoding.py end to end on a random-weight checkpoint: its four decodings agree and the kept
    attention equals the teacher-forced pass (the numbers themselves say nothing at this size)."""
    import json

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.decoding",
            "--sentences",
            "2",
            "--words",
            "5",
            "--repeats",
            "1",
            "--checkpoint",
            str(tiny_root / "translator"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout)
    assert result["identical_outputs"] == "2/2"
    assert result["attention_max_abs_difference"] < 1e-5
    assert result["ms_greedy_keeping_attention_median"] > 0


def test_figures_benchmark_builds_every_family() -> None:
    """bench/figures.py end to end with one repeat: every figure family builds and goes through what
    st.plotly_chart does with it (the milliseconds themselves are not checked)."""
    import json

    out = subprocess.run(
        [sys.executable, "-m", "bench.figures", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures = json.loads(out.stdout)["figures"]
    assert {"heatmap 20x20", "grid 3x8 (translator)", "causal step, the open tab's 20x20 (generator)"} <= set(figures)
    assert all(f["build_ms"] > 0 and f["streamlit_ms"] > 0 for f in figures.values())


def test_the_roles_benchmark_scores_a_run_held_as_the_page_holds_it(monkeypatch) -> None:
    import model.analysis.heads as heads
    import model.core.triangle as triangle
    from bench.roles import measure

    monkeypatch.setattr(heads, "CHUNK", heads.CHUNK)  # --whole changes it: put it back
    monkeypatch.setattr(triangle, "PACK_FROM_BYTES", 0)  # this short run stands for a long one
    for whole in (False, True):
        got = measure(32, whole)
        assert got["held_as"] == "CausalMaps" and got["seconds"] >= 0 and got["peak_growth_mb"] >= 0


def test_the_head_finder_device_benchmark_times_both_in_one_run() -> None:
    """bench/heads_device.py end to end on the tiny GPT-2: the scan and the forward passes of the same lines
    are both timed, and the ratio is theirs (the numbers say nothing at this size)."""
    import json

    out = subprocess.run(
        [sys.executable, "-m", "bench.heads_device", "--size", "tiny", "--sizes", "3x32,5x16", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(out.stdout)
    assert [(s["lines"], s["max_tokens"]) for s in result["sizes"]] == [(3, 32), (5, 16)]
    for s in result["sizes"]:
        assert s["forward_s"] > 0 and s["scan_s"] > 0 and s["target_ratio"] == 1.2
        # one round: its ratio (of the unrounded times; the printed seconds are rounded to 1 ms, which at this
        # size is most of a forward pass) is the median
        assert s["ratio"] == s["rounds"][0]["ratio"] > 0


def test_the_hub_users_benchmark_plays_three_learners_on_two_models() -> None:
    """bench/hub_users.py end to end on the fixtures' tiny models: three sessions, two models kept, the third
    learner's model the first one's (the memory figures say nothing at this size)."""
    import json

    out = subprocess.run(
        [sys.executable, "-m", "bench.hub_users", "--size", "tiny", "--threads", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(out.stdout)
    steps = result["steps"]
    assert len(steps) >= 4 and all(s["rss_mb"] > 0 for s in steps)
    assert sorted(steps[-1]["kept"]) == ["bert", "gpt2"]
