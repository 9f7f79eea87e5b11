"""The head finder on the model's device (issue 44): a batch of right-padded lines scored at once gives each
line's own scores; a causal map read by row blocks (its upper triangle skipped) gives the general path's
sums; the pass agrees with every line scored alone in float64 (:func:`line_sums`, itself checked against
the definitions in tests/test_heads.py); picks by decile are ``deciles``'s; ``--device`` refuses a device
that is not there; and ``torchrun`` with two (or more) gloo processes prints one process's JSON."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from model.analysis.head_scan import CELLS, plan, scan
from model.analysis.head_tensors import METRICS, decile_picks
from model.analysis.heads import KindTally, deciles, line_sums
from model.hub.reader import hub_reader

ROOT = Path(__file__).resolve().parents[1]


def softmax_rows(L, H, Tq, Tk, *, causal=False, seed=0, sink=0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(L, H, Tq, Tk)) * 2
    logits[..., 0] += sink
    if causal:
        logits = np.where(np.tril(np.ones((Tq, Tk), bool)), logits, -np.inf)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def padded(maps: list[np.ndarray]) -> list[torch.Tensor]:
    """Per-layer ``(B, H, Tq, Tk)`` tensors of several lines' ``(L, H, Tq, Tk)`` maps, zero-padded."""
    Tq, Tk = max(m.shape[-2] for m in maps), max(m.shape[-1] for m in maps)
    out = np.zeros((len(maps), *maps[0].shape[:2], Tq, Tk), dtype=np.float32)
    for b, m in enumerate(maps):
        out[b, :, :, : m.shape[-2], : m.shape[-1]] = m
    t = torch.from_numpy(out)
    return [t[:, layer] for layer in range(t.shape[1])]


@pytest.mark.parametrize("kind", ["causal", "encoder", "cross"])
def test_a_padded_batch_scores_each_line_as_alone(kind, monkeypatch):
    """Lines of 1 to 150 positions in one batch (row blocks of 64: a causal map is read in up to three blocks,
    its upper triangle skipped) against each line added alone and against float64 ``line_sums``."""
    import model.analysis.head_tensors as ht

    monkeypatch.setattr(ht, "CELLS", 4000)  # several row blocks for a bidirectional map too
    causal, cross = kind == "causal", kind == "cross"
    shapes = [(1, 1), (7, 7), (150, 150), (64, 64), (65, 65)] if not cross else [(1, 3), (6, 1), (9, 20), (70, 5)]
    maps = [softmax_rows(2, 3, q, k, causal=causal, seed=i, sink=4.0 * (i % 2)) for i, (q, k) in enumerate(shapes)]
    index = [4, 0, 2, 1, 3] if len(maps) == 5 else [3, 0, 2, 1]  # maps[b] is line index[b]
    batch = KindTally(kind, cross, causal, (2, 3))
    batch.add_batch(padded(maps), [m.shape[-2] for m in maps], [m.shape[-1] for m in maps], index=index)
    alone = KindTally(kind, cross, causal, (2, 3))
    for line in range(len(maps)):
        alone.add_line(maps[index.index(line)])
    want: dict[str, list] = {}
    for w in maps:
        for m, (s, c) in line_sums(w, cross=cross).items():
            total = want.setdefault(m, [0.0, 0.0])
            total[0], total[1] = total[0] + s, total[1] + c
    got, again = batch.scores(), alone.scores()
    for m in METRICS:
        np.testing.assert_allclose(got[m], again[m], rtol=0, atol=1e-6, equal_nan=True, err_msg=m)
        if m in want and not m.startswith(("induction", "duplicate")):
            s, c = want[m]
            np.testing.assert_allclose(got[m], np.where(c > 0, s / np.where(c > 0, c, 1), np.nan), atol=1e-6, err_msg=m)
    for m, values in batch.per_line.items():
        np.testing.assert_allclose(values, alone.per_line[m], rtol=0, atol=1e-6, equal_nan=True, err_msg=m)
    assert len(batch.blocks) == len(alone.blocks) == (0 if cross else len(maps))
    for mine, its in zip(batch.blocks, alone.blocks):
        np.testing.assert_array_equal(mine, its)


def test_decile_picks_are_deciles_for_every_head():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(37, 2, 3)).astype(np.float32)
    values[rng.random(values.shape) < 0.3] = np.nan
    values[:, 1, 2] = np.nan  # a head with no line
    values[5:9, 0, 0] = 0.25  # ties keep the corpus order
    idx, ok = decile_picks(torch.from_numpy(values))
    for layer in range(2):
        for head in range(3):
            want = deciles(values[:, layer, head])
            assert idx[:, layer, head][ok[:, layer, head]].tolist() == want


def test_the_pass_agrees_with_each_line_scored_alone_in_float64(tmp_path):
    """The whole pass (lines batched by token count, float32 maps, logs in float32 summed in float64) against
    each line's own map from ``read`` scored by float64 ``line_sums``, pooled: within 1e-6."""
    from fixtures.hub_tiny import ENGLISH, save_gpt2
    from model.hub.load import load

    hub = load(str(save_gpt2(tmp_path / "gpt2")))
    lines = [" ".join(ENGLISH[i:] + ENGLISH[:i]) for i in range(len(ENGLISH))] + ENGLISH
    reader = hub_reader(hub, 40)
    got = scan(reader, lines, probes=0, cells=3 * 4 * 40 * 40).kinds["decoder"]
    want: dict[str, list] = {}
    for r, _ in reader.read(lines):
        for m, (s, c) in line_sums(r.kinds["decoder"].weights, cross=False).items():
            total = want.setdefault(m, [0.0, 0.0])
            total[0], total[1] = total[0] + s, total[1] + c
    scores = got.scores()
    for m, (s, c) in want.items():
        np.testing.assert_allclose(scores[m], s / c, rtol=0, atol=1e-6, err_msg=m)


def test_batches_follow_the_length_and_stay_within_the_budget(tmp_path):
    from fixtures.hub_tiny import ENGLISH, save_gpt2
    from model.hub.load import load

    reader = hub_reader(load(str(save_gpt2(tmp_path / "gpt2"))), 64)
    lines = [" ".join(ENGLISH[: 1 + i % 6]) for i in range(40)]
    n = [reader.length(line) for line in lines]
    budget = 4 * 10 * 64**2
    batches = plan(reader, lines, budget)
    assert sorted(i for b in batches for i in b) == list(range(len(lines)))
    flat = [n[i] for b in batches for i in b]
    assert flat == sorted(flat)
    for b in batches:
        assert len(b) == 1 or len(b) * reader.cells * max(n[i] for i in b) ** 2 <= budget
    assert len(batches) > 1 and CELLS["cpu"] > budget


# --- the command line: devices, processes -----------------------------------------------------------------


def cli(*args, env=None, timeout=300, torchrun: int = 0):
    launch = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={torchrun}"]
    return subprocess.run(
        [*(launch if torchrun else [sys.executable]), "-m", "model", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
        timeout=timeout,
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("command", ["heads", "attribute"])
def test_a_device_that_is_not_there_is_named_with_those_that_are(command):
    args = ["classifier", "--device", "cuda"] + (["not bad", "--query", "1"] if command == "attribute" else [])
    out = cli(command, *args)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "error: --device cuda: there is no CUDA device here; this machine has cpu" in out.stderr


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    from fixtures.tiny import make_checkpoints

    return make_checkpoints(tmp_path_factory.mktemp("ck"))


def test_two_gloo_processes_print_what_one_prints(tiny_root, tmp_path):
    """The translator (encoder, decoder and cross-attention; 8 lines a batch, so 3 batches over 2 processes)
    with its examples: the same JSON, plus ``processes``."""
    from fixtures.tiny import GERMAN

    corpus = tmp_path / "de.txt"
    corpus.write_text("\n".join([line for line in GERMAN.splitlines() if line.strip()] * 3) + "\n", encoding="utf-8")
    env = {"ATTENTION_CHECKPOINTS": str(tiny_root)}
    args = ("heads", "translator", "--corpus", str(corpus), "--max-tokens", "10", "--examples", "--device", "cpu")
    one, two = cli(*args, env=env), cli(*args, env=env, torchrun=2)
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr
    alone, together = json.loads(one.stdout), json.loads(two.stdout)  # only rank 0 prints: one JSON object
    assert together.pop("processes") == 2 and "processes" not in alone
    assert together == alone
    assert alone["sequences"] == 18 and {h["kind"] for h in alone["heads"]} == {"encoder", "decoder", "cross"}


def test_more_processes_than_lines(tmp_path):
    from fixtures.hub_tiny import save_gpt2

    folder = save_gpt2(tmp_path / "gpt2")
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat .\na man rides a bike .\n")
    args = ("heads", str(folder), "--corpus", str(corpus), "--examples")
    one, three = cli(*args), cli(*args, torchrun=3)
    assert three.returncode == 0, three.stderr
    together = json.loads(three.stdout)
    assert together.pop("processes") == 3 and together == json.loads(one.stdout)


def test_an_unreachable_rendezvous_says_so_within_the_timeout(tmp_path):
    from fixtures.hub_tiny import save_gpt2

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    folder = save_gpt2(tmp_path / "gpt2")
    t = time.monotonic()
    out = cli("heads", str(folder), "--join-timeout", "2", env=env, timeout=120)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"could not reach the rendezvous at 127.0.0.1:{port} within 2 s" in out.stderr
    assert time.monotonic() - t < 100  # the process's start-up and the 2 s, not a hang
