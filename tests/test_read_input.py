"""One cutting of a one-input model's text (model.core.inference.read_input): the classifier's first words and
the generator's last characters, read by the run (classify, next_char) and by the head finder's batched reader,
so the reader's ids are the run's by construction."""

from __future__ import annotations

import pytest

from fixtures.tiny import make_checkpoints
from model.analysis.head_readers import our_reader
from model.core.checkpoint import load_checkpoint
from model.core.inference import classify, next_char, read_input

LINES = {
    "classifier": ["not bad", "the acting is wonderful but the plot is thin " * 6, "zzz qqq don't"],
    "generator": ["O", "ROMEO: But soft, what light through yonder window breaks? " * 4, "üñ😀 ROMEO"],
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("ck"))


@pytest.mark.parametrize("task", ["classifier", "generator"])
def test_the_run_and_the_reader_read_the_same_cut(root, task):
    ck = load_checkpoint(root / task, task=task)
    limit = ck.spec.limit(ck.model.config)
    vocab = ck.vocabs["words" if task == "classifier" else "chars"]
    reader = our_reader(ck, max_tokens=1000)  # no cut of the reader's own: the model's limit decides
    got = reader.maps(LINES[task])
    cuts = []
    for b, line in enumerate(LINES[task]):
        kept, cut = read_input(ck, line)
        assert len(kept) <= limit and (len(kept) == limit) >= cut
        if task == "classifier":
            run = classify(ck, line)
            assert (run.tokens, run.truncated) == (kept, cut)
        else:
            run = next_char(ck, line)
            assert (run.chars, run.truncated) == (kept, cut) and "".join(kept) == line[-limit:]
        assert got.inputs[b] == {ck.spec.inputs[0]: vocab.encode(kept)} and got.cut[b] == cut
        cuts.append(cut)
    assert cuts == [False, True, False]


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_hub_reader_reads_the_page_runs_cut(tmp_path, family):
    """The Hub reader's ids are model.hub.run.encode's, the page's run's cutting: a long line keeps its start
    (and a BERT its closing [SEP]), in a batch as in the run."""
    from fixtures import hub_tiny
    from model.hub.load import load
    from model.hub.reader import hub_reader
    from model.hub.run import encode, run

    hub = load(str(getattr(hub_tiny, f"save_{family}")(tmp_path / family)))
    lines = ["the cat sat on the mat .", "two dogs play in the snow while a man in a red coat watches them ."]
    got = hub_reader(hub, 12).maps(lines)
    for b, line in enumerate(lines):
        ids, cut, _ = encode(hub, line, 12)
        assert got.inputs[b] == {"ids": ids} and got.cut[b] == cut == run(hub, line, max_tokens=12).result.truncated
    assert got.cut == [False, True] and len(got.inputs[1]["ids"]) == 12
    if family == "bert":
        assert got.inputs[1]["ids"][-1] == hub.tokenizer.sep_token_id
