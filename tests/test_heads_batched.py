"""Our classifier and generator in the head finder read a batch of lines in one right-padded pass
(``our_reader``'s ``maps``, issue 44): every line's maps, counts, cut flag and ids are those of the page's own
run of that line (``runs_maps`` of ``read``), whatever the other lines of its batch; a line with nothing to
read fails as its run does; the scan's scores are the per-line path's; the translator keeps the per-line path."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from fixtures.tiny import make_checkpoints
from model.analysis.head_readers import our_reader, runs_maps
from model.analysis.head_scan import plan, scan
from model.analysis.head_tensors import METRICS
from model.core.checkpoint import load_checkpoint

LINES = {
    "classifier": [
        "not bad",
        "the acting is wonderful but the plot is thin " * 6,  # past every cut, and past the model's 16 words
        "zzz qqq ünïcödé 😀 don't , can't",  # unknown words; contractions split in two
        "a",
        "İstanbul naïve café ﬁne שלום \u200b e\u0301",  # dotted capital, ligature, right-to-left, zero-width, combining
        "<pad> <unk> the <sos>",  # what looks like a special token
        "I LOVED every minute of it!!!",
    ],
    "generator": [
        "O",
        "ROMEO: But soft, what light through yonder window breaks? " * 4,  # past every cut and the 48-character block
        "üñ😀\u0301 é Ω ROMEO",  # characters the vocabulary lacks
        "ab",
        "\u200b\u202e RTL \ufeff שלום",
        "It is the east, and Juliet is the sun.",
    ],
}
NOTHING = {"classifier": " \t ", "generator": ""}  # a line that reads no token
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA"))]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("ck"))


def per_line(reader):
    """The reader as it was before it batched: each line through the page's run, lines ordered by characters."""
    return replace(reader, maps=None, length=len, cells=0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("max_tokens", [3, 12, 128])
@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_a_batch_gives_each_line_its_own_run(root, task, max_tokens, device):
    reader = our_reader(load_checkpoint(root / task, task=task, device=device), max_tokens)
    lines = LINES[task]
    got = reader.maps(lines)
    want = runs_maps(reader.read(lines), reader.device)
    assert (got.queries, got.keys, got.cut, got.read, got.unknown) == (
        want.queries,
        want.keys,
        want.cut,
        want.read,
        want.unknown,
    )
    assert got.inputs == want.inputs and set(got.kinds) == set(want.kinds) == {"encoder"}
    assert any(got.cut) and any(got.unknown) and len(set(got.read)) > 2  # cut, unknown and mixed lengths
    for mine, its in zip(got.kinds["encoder"], want.kinds["encoder"], strict=True):
        assert mine.device == its.device and mine.dtype == its.dtype == torch.float32
        np.testing.assert_allclose(mine.cpu().numpy(), its.cpu().numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_each_line_reads_the_same_in_any_batch(root, task):
    """Padding keys and rows after a line's end change nothing of its own rows: alone or beside longer lines."""
    reader = our_reader(load_checkpoint(root / task, task=task), 128)
    lines = LINES[task]
    together = reader.maps(lines)
    for b, line in enumerate(lines):
        alone = reader.maps([line])
        n = alone.queries["encoder"][0]
        assert together.queries["encoder"][b] == n
        for mine, its in zip(together.kinds["encoder"], alone.kinds["encoder"]):
            np.testing.assert_allclose(mine[b, :, :n, :n].numpy(), its[0].numpy(), rtol=0, atol=1e-6)
            assert not mine[b, :, n:].any() and not mine[b, :, :, n:].any()  # padding holds no weight


@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_a_line_with_nothing_to_read_fails_as_its_run_does(root, task):
    reader = our_reader(load_checkpoint(root / task, task=task))
    lines = [*LINES[task][:2], NOTHING[task]]
    with pytest.raises(ValueError) as batched:
        reader.maps(lines)
    with pytest.raises(ValueError) as alone:
        runs_maps(reader.read(lines), reader.device)
    assert str(batched.value) == str(alone.value)
    assert reader.length(NOTHING[task]) == 0


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_the_scan_scores_what_the_per_line_path_scores(root, task, small):
    """The whole pass, induction probes included, in batches of many lines (or of a few, ``small``)."""
    reader = our_reader(load_checkpoint(root / task, task=task), 20)
    lines = LINES[task] * 3
    cells = reader.cells * 8**2 if small else None  # a long line alone, short ones a few together
    got = scan(reader, lines, cells=cells)
    want = scan(per_line(reader), lines)
    assert got.notes == want.notes and got.notes  # the long lines were cut, and said so
    if small:
        assert len(plan(reader, lines, cells)) > 3
    mine, its = got.kinds["encoder"], want.kinds["encoder"]
    for m in METRICS:
        np.testing.assert_allclose(mine.scores()[m], its.scores()[m], rtol=0, atol=1e-6, equal_nan=True, err_msg=m)
    for m, values in mine.per_line.items():
        np.testing.assert_allclose(values, its.per_line[m], rtol=0, atol=1e-6, equal_nan=True, err_msg=m)
    for a, b in zip(mine.blocks, its.blocks, strict=True):
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=0, atol=1e-3, equal_nan=True)


def test_lines_are_planned_by_tokens_and_the_translator_reads_each_line(root):
    ck = load_checkpoint(root / "classifier", task="classifier")
    reader = our_reader(ck, 128)
    lines = LINES["classifier"]
    n = [len(r.inputs["ids"]) for r, _ in reader.read(lines)]
    assert [reader.length(line) for line in lines] == n
    assert reader.cells == ck.model.config.layers * ck.model.config.heads
    order = [i for b in plan(reader, lines) for i in b]
    assert [n[i] for i in order] == sorted(n)
    translator = our_reader(load_checkpoint(root / "translator", task="translator"))
    assert translator.maps is None and translator.cells == 0
