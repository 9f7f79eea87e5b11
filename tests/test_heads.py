"""The head finder (model.analysis.heads, model.analysis.head_scan, ``python -m model heads``): each score
against a loop over its definition, a model built so that known heads are exactly previous-token,
first-token and induction heads (they must rank first), TransformerLens's ``detect_head`` where it
installs, bad corpora, and the stored scores of the shipped models."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from model.analysis.head_scan import (
    CorpusError,
    HeadScores,
    corpus_lines,
    default_corpus,
    our_reader,
    read_corpus,
    scan,
)
from model.analysis.heads import (
    EMPTY,
    METRICS,
    KindTally,
    applies,
    deciles,
    detect_score,
    line_sums,
    pattern_scores,
    probe_sums,
)
from model.analysis.profiles import spearman
from model.core.triangle import CausalMaps
from model.hub.reader import hub_reader

ROOT = Path(__file__).resolve().parents[1]


def random_map(L, H, Tq, Tk, *, causal=False, seed=0, sink=0.0):
    """Softmax rows (causal when asked), with ``sink`` extra logit on key 0."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(L, H, Tq, Tk)) * 2
    logits[..., 0] += sink
    if causal:
        logits = np.where(np.tril(np.ones((Tq, Tk), bool)), logits, -np.inf)
    e = np.exp(logits - logits.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def brute_rows(a, *, cross, nosink):
    """metric -> list of per-row values of one head's (Tq, Tk) map ``a``, straight from the definitions."""
    Tq, Tk = a.shape
    rows = []  # (original query index, renormalised row over original key indices)
    for i in range(Tq):
        if nosink and not cross and i == 0:
            continue
        row = {j: a[i, j] for j in range(Tk)}
        if nosink:
            row.pop(0)
            mass = sum(row.values())
            if mass <= EMPTY:
                continue
            row = {j: v / mass for j, v in row.items()}
        rows.append((i, row))
    first_key = 1 if nosink else 0
    first_row = 0 if cross else first_key + 1
    out = {
        "first": [r[first_key] for i, r in rows if i >= first_row],
        "entropy": [-sum(v * math.log2(v) for v in r.values() if v > 0) for _, r in rows],
    }
    if not cross:
        out["previous"] = [r[i - 1] for i, r in rows if i - 1 >= first_key]
        out["self"] = [r[i] for i, r in rows]
        out["distance"] = [sum(v * abs(i - j) for j, v in r.items()) for i, r in rows]
    return out


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sink", [0.0, 8.0])
def test_row_metrics_equal_a_loop_over_their_definitions(cross, causal, sink):
    if cross and causal:
        pytest.skip("cross-attention is never causal here")
    Tq, Tk = (5, 7) if cross else (6, 6)
    w = random_map(2, 3, Tq, Tk, causal=causal, seed=int(sink) + causal, sink=sink)
    if sink:
        w[0, 0, 3] = 0.0
        w[0, 0, 3, 0] = 1.0  # one row wholly on the sink: it cannot be renormalised and must not count
    got = line_sums(w, cross=cross)
    for layer in range(2):
        for head in range(3):
            for nosink in (False, True):
                for name, values in brute_rows(w[layer, head], cross=cross, nosink=nosink).items():
                    key = name + ("_nosink" if nosink else "")
                    s, c = got[key][0][layer, head], got[key][1][layer, head]
                    assert c == len(values) > 0, key
                    assert s / c == pytest.approx(np.mean(values), abs=1e-12), key


@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("chunk", [1, 2 * 36, 3 * 36])
def test_a_long_line_is_scored_a_block_of_heads_at_a_time(monkeypatch, cross, chunk):
    """At 1,024 tokens a whole 12 × 12 map is 1.2 GB as float64: it is scored in blocks of heads (one head;
    two heads of three, the last block short; a whole layer), and the sums are those of the whole map, bit for
    bit; a causal run's triangle gives them too."""
    import model.analysis.heads as heads

    w = random_map(2, 3, 6, 6, causal=not cross, seed=11, sink=4.0).astype(np.float32)  # as runs hold them
    whole = line_sums(w, cross=cross)
    monkeypatch.setattr(heads, "CHUNK", chunk)
    sources = [w] if cross else [w, CausalMaps.from_dense(w)]
    for source in sources:
        got = line_sums(source, cross=cross)
        assert got.keys() == whole.keys()
        for metric in whole:
            np.testing.assert_array_equal(got[metric][0], whole[metric][0], err_msg=metric)
            np.testing.assert_array_equal(got[metric][1], whole[metric][1], err_msg=metric)


def test_cross_metrics_reuse_the_profiles_and_pool_over_steps():
    w = random_map(1, 2, 6, 5, seed=3)
    got = line_sums(w, cross=True)
    for head in range(2):
        strongest = w[0, head].argmax(-1)
        assert got["monotonic"][0][0, head] == pytest.approx(spearman(range(6), strongest))
        assert got["forward"][0][0, head] / got["forward"][1][0, head] == pytest.approx(
            np.mean(np.diff(strongest) >= 0)
        )
        assert got["monotonic_nosink"][0][0, head] == pytest.approx(spearman(range(6), w[0, head, :, 1:].argmax(-1)))


def test_probe_metrics_equal_a_loop():
    start, n = 2, 4
    T = start + 2 * n
    w = random_map(2, 2, T, T, causal=True, seed=5)
    got = probe_sums(w, start, n)
    for layer in range(2):
        for head in range(2):
            a = w[layer, head]
            second = range(start + n, start + 2 * n)
            ind = [a[i, i - n + 1] for i in second]
            dup = [a[i, i - n] for i in second]
            ind_ns = [a[i, i - n + 1] / (1 - a[i, 0]) for i in second]
            dup_ns = [a[i, i - n] / (1 - a[i, 0]) for i in second]
            for key, ref in (
                ("induction", ind),
                ("duplicate", dup),
                ("induction_nosink", ind_ns),
                ("duplicate_nosink", dup_ns),
            ):
                s, c = got[key][0][layer, head], got[key][1][layer, head]
                assert c == n and s / c == pytest.approx(np.mean(ref), abs=1e-12), key
    with pytest.raises(ValueError, match="start >= 1"):
        probe_sums(w, 0, n)


def test_pooling_weighs_every_row_and_keeps_only_scores():
    """Two lines of different lengths: the pooled score is the mean over all their rows, not of the two means."""
    t = KindTally("encoder", cross=False, causal=True, shape=(1, 2))
    a, b = random_map(1, 2, 3, 3, causal=True, seed=1), random_map(1, 2, 7, 7, causal=True, seed=2)
    t.add_line(a)
    t.add_line(b)
    rows = [a[0, 1, i, i] for i in range(3)] + [b[0, 1, i, i] for i in range(7)]
    assert t.scores()["self"][0, 1] == pytest.approx(np.mean(rows))
    assert t.per_line["self"][0][0, 1] == pytest.approx(np.mean(rows[:3]), abs=1e-6)
    assert np.isnan(t.scores()["induction"]).all()  # no probe was added: not applicable yet, never 0
    assert np.isnan(t.scores()["monotonic"]).all()
    assert len(t.blocks) == 2 and np.isnan(t.blocks[0][0, 0, 3, 0])


def test_every_metric_has_an_entry_for_every_line():
    """A one-token line has no row once the sink is dropped: its entry is NaN, and later lines keep their index."""
    t = KindTally("encoder", cross=False, causal=False, shape=(1, 1))
    for T in (3, 1, 4):
        t.add_line(random_map(1, 1, T, T, seed=T))
    assert all(len(v) == 3 for v in t.per_line.values())
    assert np.isnan(t.per_line["self_nosink"][1]).all() and np.isfinite(t.per_line["self_nosink"][2]).all()
    assert t.per_line["self"][1][0, 0] == pytest.approx(1.0)


def test_applies():
    assert applies("previous_nosink", cross=False, causal=False)
    assert not applies("previous", cross=True, causal=False)
    assert not applies("induction", cross=False, causal=False)
    assert applies("induction", cross=False, causal=True)
    assert applies("monotonic", cross=True, causal=False) and not applies("monotonic", cross=False, causal=True)
    assert applies("entropy", cross=True, causal=False)


def brute_detect(A, P, measure, exclude_bos, exclude_current):
    """TransformerLens's compute_head_attention_similarity_score, as a loop (without its rounding)."""
    n = len(P)
    if measure == "mul":
        num = den = 0.0
        for i in range(n):
            for j in range(n):
                a = 0.0 if (exclude_bos and j == 0) or (exclude_current and i == j) else A[i][j]
                num += a * P[i][j]
                den += a
        return num / den
    total = sum(
        abs(A[i][j] - P[i][j])
        for i in range(n)
        for j in range(n)
        if not ((exclude_bos and j == 0) or (exclude_current and i == j))
    )
    return 1 - total / (n * n) * n


@pytest.mark.parametrize("measure", ["mul", "abs"])
@pytest.mark.parametrize("bos,current", [(False, False), (True, False), (False, True), (True, True)])
def test_detect_score_equals_a_loop(measure, bos, current):
    A = random_map(2, 3, 5, 5, causal=True, seed=7)
    P = np.tril(np.random.default_rng(1).integers(0, 2, (5, 5))).astype(float)
    got = detect_score(A, P, measure=measure, exclude_bos=bos, exclude_current=current)
    for layer in range(2):
        for head in range(3):
            assert got[layer, head] == pytest.approx(brute_detect(A[layer, head], P, measure, bos, current), abs=1e-12)


def test_pattern_scores_average_the_lines_long_enough():
    t = KindTally("encoder", cross=False, causal=True, shape=(1, 1))
    lines = [random_map(1, 1, T, T, causal=True, seed=T) for T in (2, 4, 6)]
    for w in lines:
        t.add_line(w)
    P = np.eye(3)
    want = np.mean([detect_score(w[..., :3, :3], P) for w in lines[1:]], axis=0)
    assert pattern_scores(t.blocks, P) == pytest.approx(want, abs=1e-3)  # blocks are float16
    with pytest.raises(ValueError, match="no line"):
        pattern_scores(t.blocks[:1], P)


def test_deciles():
    v = np.array([0.5, np.nan, 0.9, 0.1, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 0.0, 1.0])
    picks = deciles(v)
    assert picks[0] == 11 and 1 not in picks
    assert [v[i] for i in picks[1:]] == sorted((v[i] for i in picks[1:]), reverse=True)
    assert deciles(np.array([np.nan])) == []


# --- corpora --------------------------------------------------------------------------------------------


def test_bad_corpora_say_what_to_fix(tmp_path):
    with pytest.raises(CorpusError, match="empty"):
        corpus_lines(b"\n  \n")
    with pytest.raises(CorpusError, match="binary"):
        corpus_lines(b"abc\x00def")
    with pytest.raises(CorpusError, match="UTF-8"):
        corpus_lines(b"\xff\xfe\xfa text")
    with pytest.raises(CorpusError, match="not a file"):
        read_corpus(tmp_path / "missing.txt")
    assert corpus_lines("a\n\n b \n") == ["a", "b"]


def test_shipped_corpora_are_small_samples():
    for name in ("sst2.txt", "shakespeare.txt", "multi30k_de.txt", "english.txt"):
        lines = read_corpus(ROOT / "model" / "analysis" / "corpora" / name)
        assert len(lines) == 200
        assert (ROOT / "model" / "analysis" / "corpora" / name).stat().st_size < 50_000


def test_default_corpora_follow_the_model_and_its_language():
    from model.core.specs import SPECS, hub_spec

    assert default_corpus(SPECS["generator"]).name == "shakespeare.txt"
    marian = hub_spec("opus-mt-de-en", "encoder-decoder", "seq2seq", 512, "German (source)", "English (output)")
    assert default_corpus(marian).name == "multi30k_de.txt"
    assert default_corpus(hub_spec("gpt2", "decoder", "causal-lm", 1024)).name == "english.txt"


# --- a model whose heads are known ------------------------------------------------------------------------


def save_known_heads(folder: Path) -> Path:
    """A 2-layer, 2-head GPT-2 whose weights make layer 0 head 0 a previous-token head, layer 0 head 1 a
    first-token head and layer 1 head 0 an induction head (layer 1 head 1 is uniform).

    The residual stream is [token (64) | previous token (64) | position (8)], every part zero-mean and of
    unit norm, so each LayerNorm only scales by a constant. Positions are (cos θp, sin θp) plus a marker of
    position 0; the previous-token head's query is its position rotated back by θ; the first-token head
    looks for the marker; the previous-token head copies the token into the "previous token" part, and the
    induction head matches a query's token with a key's previous token (Olsson et al. 2022's circuit).
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    from fixtures.hub_tiny import _save, gpt2_tokenizer

    tok = gpt2_tokenizer()
    V, P, D, dh = len(tok), 64, 136, 68
    theta = 0.045
    rng = np.random.default_rng(0)
    e = rng.normal(size=(V, 64))
    e -= e.mean(1, keepdims=True)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    p = np.arange(P)
    m = (p == 0).astype(float)
    c, s = np.cos(theta * p), np.sin(theta * p)
    pos = 0.5 * np.stack([c, s, -c, -s, m, -m, 1 - m, -(1 - m)], 1)
    cfg = GPT2Config(
        vocab_size=V, n_positions=P, n_embd=D, n_layer=2, n_head=2, n_inner=4, eos_token_id=0, bos_token_id=0
    )
    model = GPT2LMHeadModel(cfg)
    sd = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}
    for k in sd:
        if k.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            sd[k] += 1
    sd["transformer.wte.weight"][:, :64] = torch.tensor(e)
    sd["transformer.wpe.weight"][:, 128:] = torch.tensor(pos)
    # layer 0: c_attn is x @ W + b, W (D, 3D): q = [:, :D], k = [:, D:2D], v = [:, 2D:]
    W, b = sd["transformer.h.0.attn.c_attn.weight"], sd["transformer.h.0.attn.c_attn.bias"]
    A = 3e4
    W[128, 0], W[129, 0] = A * math.cos(theta), A * math.sin(theta)  # q0 = A·(cos θ(p-1), sin θ(p-1))
    W[128, 1], W[129, 1] = -A * math.sin(theta), A * math.cos(theta)
    W[128, D + 0], W[129, D + 1] = 1.0, 1.0  # k0 = (cos, sin)
    b[dh] = 1000.0  # head 1: a constant query ...
    W[132, D + dh] = 1.0  # ... against the position-0 marker
    ln0 = math.sqrt(D / 2)  # layer 0's LayerNorm multiplies by this (|x|² = 2 over D dims)
    for i in range(64):
        W[i, 2 * D + i] = 1.0  # head 0's value: the token part ...
        sd["transformer.h.0.attn.c_proj.weight"][i, 64 + i] = 1.0 / ln0  # ... written into "previous token"
    W1 = sd["transformer.h.1.attn.c_attn.weight"]
    for i in range(64):
        W1[i, i] = 50.0  # induction query: the token part
        W1[64 + i, D + i] = 1.0  # key: the previous-token part
    sd["lm_head.weight"] = sd["transformer.wte.weight"]  # tied: loading zeros there would zero the embeddings
    model.load_state_dict(sd)
    return _save(folder, model, tok)


@pytest.fixture(scope="module")
def known_folder(tmp_path_factory) -> Path:
    return save_known_heads(tmp_path_factory.mktemp("known") / "gpt2-known")


@pytest.fixture(scope="module")
def known(known_folder):
    from model.hub.load import load

    return load(str(known_folder))


@pytest.fixture(scope="module")
def known_scores(known) -> HeadScores:
    from fixtures.hub_tiny import ENGLISH

    return scan(hub_reader(known, 32), ENGLISH * 3)


@pytest.mark.parametrize(
    "metric,layer,head,floor",
    [("previous", 0, 0, 0.99), ("first", 0, 1, 0.99), ("induction", 1, 0, 0.9), ("previous_nosink", 0, 0, 0.99)],
)
def test_the_known_head_ranks_first(known_scores, metric, layer, head, floor):
    rows = known_scores.rows()
    ranked = sorted(rows, key=lambda r: -(r[metric] if r[metric] is not None else -1))
    assert (ranked[0]["layer"], ranked[0]["head"]) == (layer, head)
    assert ranked[0][metric] >= floor
    assert ranked[1][metric] < 0.6


def test_known_scores_shape_and_nulls(known_scores):
    rows = known_scores.rows(examples=True)
    assert len(rows) == 4 and {r["kind"] for r in rows} == {"decoder"}
    assert all(r["monotonic"] is None and r["forward_nosink"] is None for r in rows)
    assert all(r["induction"] is not None for r in rows)
    first_head = next(r for r in rows if (r["layer"], r["head"]) == (0, 1))
    assert first_head["first_nosink"] is None  # every row was wholly on the sink: nothing left to renormalise
    ex = first_head["examples"]["first"]
    assert ex[0][1] == max(v for _, v in ex)
    assert len(ex) == 11


def test_pattern_search_finds_the_previous_token_head(known_scores):
    blocks = known_scores.kinds["decoder"].blocks
    prev = np.eye(5, k=-1)
    for measure in ("mul", "abs"):
        s = pattern_scores(blocks, prev, measure=measure)
        assert np.unravel_index(np.nanargmax(s), s.shape) == (0, 0)


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_batch_of_lines_gives_each_line_its_own_maps(tmp_path, family):
    """The Hub reader pads a batch on the right; each line's map, cut back, is the page's run of that line."""
    from fixtures import hub_tiny
    from model.hub.load import load
    from model.hub.run import run

    hub = load(str(getattr(hub_tiny, f"save_{family}")(tmp_path / family)))
    # the long line does not repeat itself, so its start and its end are different cuts
    lines = ["the cat sat on the mat .", "a man", "two dogs play in the snow while a man in a red coat watches them ."]
    got = hub_reader(hub, 16).read(lines)
    for line, (r, cut) in zip(lines, got):
        want = run(hub, line, max_tokens=16).result
        assert cut == want.truncated and (r.read, r.unknown_read) == (want.read, want.unknown_read)
        [(name, kind)] = want.kinds.items()
        np.testing.assert_allclose(r.kinds[name].weights, kind.weights, atol=1e-5)
    assert [cut for _, cut in got] == [False, False, True]


def test_lines_read_shortest_first_keep_their_own_scores(known):
    """The scan reads lines by length; each line's scores and block come back under its own index."""
    lines = ["a man rides a bike in the park .", "two dogs", "the cat sat on the mat ."]
    together = scan(hub_reader(known, 32), lines).kinds["decoder"]
    for i, line in enumerate(lines):
        alone = scan(hub_reader(known, 32), [line], probes=0).kinds["decoder"]
        for m, values in alone.per_line.items():
            np.testing.assert_allclose(together.per_line[m][i], values[0], atol=1e-6, equal_nan=True)
        np.testing.assert_array_equal(together.blocks[i], alone.blocks[0])


# --- TransformerLens --------------------------------------------------------------------------------------


def _transformer_lens():
    """``transformer_lens.head_detector`` and ``TransformerBridge`` (TransformerLens 4: ``HookedTransformer``
    is gone), or a skip that says why (requirements-dev.txt pins transformer-lens for these tests)."""
    try:
        from transformer_lens import head_detector
        from transformer_lens.model_bridge import TransformerBridge
    except Exception as err:  # it needs datasets, wandb and more beside the pinned torch and transformers
        pytest.skip(f"transformer_lens does not import beside torch 2.13.0 here ({type(err).__name__}: {err})")
    return head_detector, TransformerBridge


@pytest.mark.parametrize("measure", ["mul", "abs"])
def test_detect_score_matches_transformer_lens(known, measure):
    """TransformerLens's own score function on transformers' maps of a GPT-2-shaped model (the tests
    below run TransformerLens's own model on the same weights)."""
    score = _transformer_lens()[0].compute_head_attention_similarity_score
    from model.hub.run import run

    w = run(known, "the cat sat on the mat . a man rides a bike").result.kinds["decoder"].weights
    n = w.shape[-1]
    for P in (np.eye(n, k=-1), np.tril(np.ones((n, n)))):
        for bos in (False, True):
            ours = detect_score(w, P, measure=measure, exclude_bos=bos)
            for layer in range(2):
                for head in range(2):
                    theirs = score(
                        torch.tensor(w[layer, head]),
                        torch.tensor(P, dtype=torch.float32),
                        exclude_bos=bos,
                        exclude_current_token=False,
                        error_measure=measure,
                    )
                    if math.isnan(theirs):  # all of a head's weight was excluded: 0 / 0 in both
                        assert np.isnan(ours[layer, head])
                    else:
                        assert ours[layer, head] == pytest.approx(theirs, abs=5e-4 if measure == "abs" else 1e-5)


TL_TEXT = "the cat sat on the mat . a man rides a bike the cat sat on the mat . a man rides a bike"
TL_HEADS = ("previous_token_head", "duplicate_token_head", "induction_head")
TL_ABS = 5e-4 + 1e-6  # TransformerLens rounds abs's error to 3 decimals; we do not


def tl_pattern(name: str, ids) -> np.ndarray:
    """TransformerLens's named detection patterns, written out from their definitions: previous = the key
    just before the query; duplicate = an earlier key with the query's token; induction = a key just after
    an earlier copy of the query's token (key ``j <= i`` with ``ids[j - 1] == ids[i]``)."""
    ids = np.asarray(ids)
    n = len(ids)
    i, j = np.indices((n, n))
    same = ids[:, None] == ids[None, :]
    if name == "previous_token_head":
        return (j == i - 1).astype(float)
    if name == "duplicate_token_head":
        return (same & (j < i)).astype(float)
    after = np.zeros((n, n), dtype=bool)
    after[:, 1:] = same[:, :-1]
    return (after & (j <= i)).astype(float)


def _tl_maps(bridge, tokens) -> np.ndarray:
    _, cache = bridge.run_with_cache(tokens, remove_batch_dim=True)
    return np.stack([cache["pattern", layer, "attn"].numpy() for layer in range(bridge.cfg.n_layers)])


@pytest.fixture(scope="module", params=[False, True], ids=["hf-weights", "compatibility-mode"])
def tl_bridge(request, known_folder):
    """TransformerLens 4 running the known heads' own folder offline: ``boot_transformers`` on the path,
    as it is (raw weights) or after ``enable_compatibility_mode()`` (HookedTransformer's weight
    processing: LayerNorm folded, writing weights centred)."""
    _, TransformerBridge = _transformer_lens()
    bridge = TransformerBridge.boot_transformers(str(known_folder), device="cpu")
    if request.param:
        bridge.enable_compatibility_mode(disable_warnings=True)
    return bridge


@pytest.mark.parametrize("name", TL_HEADS)
def test_transformer_lens_detect_head_on_its_own_run_matches_ours(known, tl_bridge, name):
    """TransformerLens end to end: its model runs the known heads' weights, its ``detect_head`` builds the
    named pattern from the tokens and scores its own attention; we score our run's maps (model.hub.run)
    with ``detect_score`` against the same pattern written from its definition. A string given to
    ``detect_head`` gets a BOS prepended (``to_tokens``), so our run reads the BOS too; the token ids and
    both models' attention are checked equal first, so the scores cannot agree by comparing nothing."""
    hd, _ = _transformer_lens()
    from model.hub.run import run

    tokens = tl_bridge.to_tokens(TL_TEXT)
    result = run(known, known.tokenizer.bos_token + TL_TEXT).result
    ids, w = result.inputs["ids"], result.kinds["decoder"].weights
    assert tokens[0].tolist() == ids and ids[0] == known.tokenizer.bos_token_id
    # compatibility mode folds LayerNorm into the weights: float32 logits of order 1e3 then round
    # differently, which moves a tied pair of weights by 1.5e-5
    compat = getattr(tl_bridge, "compatibility_mode", False)
    np.testing.assert_allclose(_tl_maps(tl_bridge, tokens), w, rtol=0, atol=1e-4 if compat else 1e-5)
    P = tl_pattern(name, ids)
    np.testing.assert_array_equal(getattr(hd, f"get_{name}_detection_pattern")(tokens.cpu()).numpy(), P)
    assert P.sum() > 0
    for measure in ("mul", "abs"):
        for bos in (False, True):
            for current in (False, True):
                options = dict(exclude_bos=bos, exclude_current_token=current, error_measure=measure)
                theirs = hd.detect_head(tl_bridge, TL_TEXT, name, **options).numpy()
                given = hd.detect_head(tl_bridge, TL_TEXT, torch.tensor(P, dtype=torch.float32), **options).numpy()
                np.testing.assert_array_equal(given, theirs)
                ours = detect_score(w, P, measure=measure, exclude_bos=bos, exclude_current=current)
                np.testing.assert_allclose(ours, theirs, rtol=0, atol=TL_ABS if measure == "abs" else 1e-5)
    best = {"previous_token_head": (0, 0), "induction_head": (1, 0)}.get(name)
    if best:  # the heads built to do it lead TransformerLens's ranking too
        theirs = hd.detect_head(tl_bridge, TL_TEXT, name).numpy()
        assert np.unravel_index(np.argmax(theirs), theirs.shape) == best


@pytest.mark.parametrize("measure", ["mul", "abs"])
def test_the_drawn_pattern_ranking_is_transformer_lens_detect_head_averaged(known, known_folder, measure):
    """The head finder's drawn-pattern ranking (``pattern_scores`` over a scan's blocks) is TransformerLens's
    ``detect_head`` on each line cut to the pattern's size, read without a BOS as the finder reads it,
    averaged over the lines. The blocks are kept as float16, hence 1e-3 (TransformerLens keeps float32)."""
    hd, TransformerBridge = _transformer_lens()
    from fixtures.hub_tiny import ENGLISH

    bridge = TransformerBridge.boot_transformers(str(known_folder), device="cpu")
    bridge.cfg.default_prepend_bos = False
    n = 5
    patterns = [np.eye(n, k=-1), np.tril(np.ones((n, n))) * (np.arange(n) % 2 == 0)]
    blocks = scan(hub_reader(known, 32), ENGLISH, probes=0).kinds["decoder"].blocks
    tok = known.tokenizer
    for bos in (False, True):
        theirs = {k: [] for k in range(len(patterns))}
        for line in ENGLISH:
            ids = tok(line)["input_ids"][:n]
            cut = tok.decode(ids)
            tokens = bridge.to_tokens(cut)
            assert tokens[0].tolist() == ids
            np.testing.assert_allclose(_tl_maps(bridge, tokens), blocks[len(theirs[0])][..., :n, :n], atol=1e-3)
            for k, P in enumerate(patterns):
                theirs[k].append(
                    hd.detect_head(
                        bridge, cut, torch.tensor(P, dtype=torch.float32), exclude_bos=bos, error_measure=measure
                    ).numpy()
                )
        for k, P in enumerate(patterns):
            ours = pattern_scores(blocks, P, measure=measure, exclude_bos=bos)
            np.testing.assert_allclose(
                ours, np.mean(theirs[k], axis=0), rtol=0, atol=1e-3 + TL_ABS * (measure == "abs")
            )


# --- our models and the command line ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory):
    from fixtures.tiny import make_checkpoints

    return make_checkpoints(tmp_path_factory.mktemp("ck"))


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_our_models_are_scored_with_nulls_where_a_metric_does_not_apply(tiny_root, task):
    from fixtures.tiny import CLASSIFIER_TEXT, ENGLISH, GERMAN, SHAKESPEARE
    from model.core.checkpoint import load_checkpoint

    ck = load_checkpoint(tiny_root / task, task=task)
    text = {"classifier": CLASSIFIER_TEXT, "generator": SHAKESPEARE, "translator": GERMAN}[task]
    lines = [line for line in text.splitlines() if line.strip()]
    s = scan(our_reader(ck, 20), lines)
    rows = s.rows()
    kinds = {k.name: k for k in ck.spec.kinds}
    assert {r["kind"] for r in rows} == set(kinds)
    for r in rows:
        k = kinds[r["kind"]]
        for m in METRICS:
            assert (r[m] is None) == (not applies(m, cross=k.cross, causal=k.causal)), (r["kind"], m)
    if task == "classifier":
        english = scan(our_reader(ck, 20), [line for line in ENGLISH.splitlines() if line.strip()])
        assert any("unknown" in n for n in english.notes)
    assert s.to_json()["sequences"] == len(lines)


def test_a_long_line_is_cut_and_said(tiny_root):
    from model.core.checkpoint import load_checkpoint

    ck = load_checkpoint(tiny_root / "classifier", task="classifier")
    s = scan(our_reader(ck, 4), ["the acting is wonderful but the plot is thin", "not bad"])
    assert s.notes and "1 of 2 lines" in s.notes[0]
    assert s.kinds["encoder"].blocks[0].shape[-1] == 8 and np.isnan(s.kinds["encoder"].blocks[0][0, 0, 4, 0])


def cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "model", "heads", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_cli_prints_the_heads_and_refuses_bad_corpora(tiny_root, tmp_path):
    env = {"ATTENTION_CHECKPOINTS": str(tiny_root)}
    corpus = tmp_path / "c.txt"
    corpus.write_text("ein mann fährt fahrrad .\nzwei hunde spielen im schnee .\n", encoding="utf-8")
    out = cli("translator", "--corpus", str(corpus), "--max-tokens", "10", "--json", env=env)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["source"] == "translator" and report["sequences"] == 2
    assert len(report["heads"]) == 2 * 4 + 3 * 4 + 3 * 4
    cross = next(h for h in report["heads"] if h["kind"] == "cross")
    assert cross["previous"] is None and cross["first"] is not None
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01\x02")
    (tmp_path / "empty.txt").write_text("\n")
    for bad, says in (("bin.txt", "binary"), ("empty.txt", "empty"), ("none.txt", "not a file")):
        out = cli("classifier", "--corpus", str(tmp_path / bad), "--json", env=env)
        assert out.returncode != 0 and "error:" in out.stderr and says in out.stderr


def test_cli_on_a_hub_folder(tmp_path):
    from fixtures.hub_tiny import save_gpt2

    folder = save_gpt2(tmp_path / "gpt2")
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat .\na man rides a bike .\n")
    out = cli(str(folder), "--corpus", str(corpus), "--json", "--examples")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert len(report["heads"]) == 4 and report["heads"][0]["induction"] is not None
    assert report["heads"][0]["examples"]["previous"][0][0] in (0, 1)


# --- the stored scores of the shipped models --------------------------------------------------------------


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_stored_scores_match_the_model_and_a_recomputation(task):
    from model.core.checkpoint import default_dir, load_checkpoint

    path = ROOT / "checkpoints" / task / "heads.json"
    if not (ROOT / "checkpoints" / task / "model.safetensors").exists():
        pytest.skip(f"no shipped {task} checkpoint")
    stored = json.loads(path.read_text(encoding="utf-8"))
    ck = load_checkpoint(default_dir(task), task=task)
    shapes = {}
    for r in stored["heads"]:
        shapes.setdefault(r["kind"], set()).add((r["layer"], r["head"]))
    for k in ck.spec.kinds:
        blocks = getattr(ck.model, k.blocks)
        L, H = len(blocks), ck.model.config.heads
        assert shapes[k.name] == {(layer, h) for layer in range(L) for h in range(H)}
    assert set(stored["heads"][0]) >= {"kind", "layer", "head", *METRICS, "examples"}
    lines = read_corpus(ROOT / stored["corpus"])
    assert stored["sequences"] == len(lines)
    if task != "translator":  # the translator decodes every line: minutes here, so its shape is checked only
        again = scan(our_reader(ck, stored["max_tokens"]), lines).rows()
        for old, new in zip(stored["heads"], again):
            for m in METRICS:
                assert (old[m] is None) == (new[m] is None)
                if new[m] is not None:
                    assert old[m] == pytest.approx(new[m], abs=1e-4), (old["layer"], old["head"], m)
