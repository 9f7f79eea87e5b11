"""AppTest of the Head finder page on tiny random checkpoints with head scores stored beside them (as
``python -m model heads ... --examples --json`` writes them), and on a tiny Hugging Face model scored on
request: the scatter, the top-N finder, the lines by decile with their explorer links, the drawn pattern,
missing scores, and the roles shown on a model page."""

from __future__ import annotations

import json
import re
from functools import partial
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from fixtures.tiny import CLASSIFIER, CLASSIFIER_TEXT, GERMAN, SHAKESPEARE
from model.analysis.head_scan import our_reader, scan
from model.analysis.heads import pattern_scores
from model.core.checkpoint import load_checkpoint
from tests import apptest
from tests.apptest import chart, url

PAGE = apptest.page("heads")
run = partial(apptest.run, PAGE)
pytestmark = pytest.mark.usefixtures("app_env")
TEXTS = {"classifier": CLASSIFIER_TEXT, "generator": SHAKESPEARE, "translator": GERMAN}
HEADS = CLASSIFIER.layers * CLASSIFIER.heads


def lines_of(task: str) -> list[str]:
    return [line for line in TEXTS[task].splitlines() if line.strip()]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """The tiny checkpoints, each with its heads.json over a corpus file of the tiny texts."""
    from fixtures.tiny import make_checkpoints

    root = make_checkpoints(tmp_path_factory.mktemp("checkpoints"))
    for task in TEXTS:
        corpus = root / f"{task}.txt"
        corpus.write_text("\n".join(lines_of(task)) + "\n", encoding="utf-8")
        scores = scan(our_reader(load_checkpoint(root / task)), lines_of(task))
        report = scores.to_json(examples=True, corpus=str(corpus))
        (root / task / "heads.json").write_text(json.dumps(report), encoding="utf-8")
    return root


def stored(checkpoints, task="classifier") -> dict:
    return json.loads((checkpoints / task / "heads.json").read_text(encoding="utf-8"))


def top(at) -> list[dict]:
    """The top-N finder's Markdown table, one dict a row (scores as floats)."""
    [md] = [m.value for m in at.markdown if m.value.startswith("#### Top")]
    head, _, *rows = [line.strip("| ").split(" | ") for line in md.splitlines()[2:]]
    return [{k: float(v) if "." in v else v for k, v in zip(head, row)} for row in rows]


def examples(at) -> list[tuple[str, str, str, str]]:
    """The lines-by-decile Markdown table: (which, score, line, link) per row, each line the link itself."""
    [md] = [m.value for m in at.markdown if "opens it in the explorer" in m.value]
    lines = md.splitlines()
    rows = lines[lines.index("|---|---|---|") + 1 :]
    return [re.match(r"\| (.*?) \| (.*?) \| \[(.*)\]\((.*)\) \|$", r).groups() for r in rows]


def test_default_run_shows_every_head(checkpoints):
    at = run()
    assert not at.exception
    spec = chart(at, "Every head")
    assert sum(len(t["x"]) for t in spec["data"]) == HEADS
    assert "previous" in apptest.axis_titles(spec, "xaxis") and "first" in apptest.axis_titles(spec, "yaxis")
    xs = sorted(x for t in spec["data"] for x in t["x"])
    assert xs == sorted(r["previous"] for r in stored(checkpoints)["heads"])


def test_top_n_ranks_by_the_chosen_metric(checkpoints):
    at = run({"heads_metric": "self", "heads_top": "3"})
    want = sorted(stored(checkpoints)["heads"], key=lambda r: -r["self"])[:3]
    assert [r["self"] for r in top(at)] == pytest.approx([r["self"] for r in want], abs=5e-4)
    assert url(at, "heads_metric") == "self" and url(at, "heads_top") == "3"


def test_without_the_sink_offers_the_nosink_scores():
    at = run({"heads_nosink": "True"})
    assert not at.exception
    assert at.selectbox(key="heads_metric").value == "previous_nosink"
    assert "previous_nosink" in apptest.axis_titles(chart(at, "Every head"), "xaxis")


def test_a_head_shows_its_lines_by_decile_with_explorer_links(checkpoints):
    at = run({"heads_head": "encoder-1-2", "heads_metric": "first"})
    row = next(r for r in stored(checkpoints)["heads"] if (r["layer"], r["head"]) == (1, 2))
    table = examples(at)
    assert [float(r[1]) for r in table] == pytest.approx([s for _, s in row["examples"]["first"]], abs=5e-4)
    link = urlsplit(table[0][3])
    query = parse_qs(link.query)
    assert link.path == "classifier"
    assert query["cls_layer"] == ["1"] and query["cls_head"] == ["2"] and query["cls_kind"] == ["encoder"]
    assert query["cls_text"] == [lines_of("classifier")[row["examples"]["first"][0][0]]]


def test_a_metric_that_does_not_apply_says_so():
    at = run({"heads_model": "translator", "heads_head": "cross-0-0", "heads_metric": "previous"})
    assert not at.exception
    assert any("does not apply" in i.value for i in at.info)


def test_drawn_pattern_ranks_heads_by_detect_head(checkpoints):
    at = run({"heads_draw": "True", "heads_size": "3", "heads_measure": "abs"})
    assert not at.exception
    ranked = at.table[-1].value
    s = scan(our_reader(load_checkpoint(checkpoints / "classifier")), lines_of("classifier"))
    want = pattern_scores(s.kinds["encoder"].blocks, np.eye(3, k=-1), measure="abs")
    assert ranked["score"].iloc[0] == pytest.approx(np.nanmax(want), abs=1e-6)
    assert len(ranked) == HEADS


def test_a_pattern_larger_than_every_line_is_a_message(checkpoints):
    corpus = checkpoints / "classifier.txt"
    saved = corpus.read_text(encoding="utf-8")
    corpus.write_text("not bad\nfun\n", encoding="utf-8")  # two short lines: no 8 × 8 block to match
    try:
        at = run({"heads_draw": "True", "heads_size": "8"})
    finally:
        corpus.write_text(saved, encoding="utf-8")
    assert not at.exception
    assert any("no line of the corpus has 8 positions" in w.value for w in at.warning)
    assert any("not the 7 these scores were computed on" in w.value for w in at.warning)


def test_missing_scores_say_which_command_writes_them(checkpoints):
    path = checkpoints / "generator" / "heads.json"
    saved = path.read_text(encoding="utf-8")
    path.unlink()
    try:
        at = run({"heads_model": "generator"})
    finally:
        path.write_text(saved, encoding="utf-8")
    assert not at.exception
    assert "No stored head scores" in at.error[0].value
    assert "python -m model heads generator" in at.code[0].value


def test_a_hub_model_is_scored_on_request(tmp_path):
    from fixtures.hub_tiny import save_gpt2

    folder = save_gpt2(tmp_path / "gpt2")
    at = run({"heads_model": "hub", "heads_hub_id": str(folder), "heads_metric": "induction"})
    assert not at.exception
    assert sum(len(t["x"]) for t in chart(at, "Every head")["data"]) == 4
    assert len(top(at)) == 4
    assert any("repeated random tokens" in i.value for i in at.info)  # induction has no example lines
    at.selectbox(key="heads_metric").set_value("previous").run()
    link = urlsplit(examples(at)[0][3])
    assert link.path == "any_model" and parse_qs(link.query)["hub_id"] == [str(folder)]


def test_a_model_that_cannot_open_is_a_message(tmp_path):
    at = run({"heads_model": "hub", "heads_hub_id": str(tmp_path / "nothing-here")})
    assert not at.exception
    assert at.error


def test_the_classifier_page_marks_the_roles_its_heads_play_here():
    at = apptest.run(apptest.page("classifier"))
    assert not at.exception
    captions = [c.value for c in at.caption if "Head finder roles" in c.value]
    # the tiny random classifier plays no role (every best score near an even spread's): it says so
    assert captions and "no head of this model plays one of them" in captions[0]


def test_corpus_lines_are_escaped_in_the_examples():
    import pandas as pd

    from pages.shared.heads import examples_markdown

    nasty = "<b>x</b> | [click](javascript:alert(1)) *y*"
    md = examples_markdown(pd.DataFrame([{"which": "top", "score": 0.5, "line": nasty, "open": "classifier?a=1"}]))
    row = md.splitlines()[2]
    assert "\\<b\\>" in row and "\\|" in row and "\\[click\\]\\(javascript" in row and "\\*y\\*" in row
    assert row.startswith("| top | 0.500 | [") and row.endswith("](classifier?a=1) |")  # the line is the link


def test_a_runs_scores_are_computed_once_and_go_with_the_run(monkeypatch):
    """A page reruns many times on one run; a 1,024-token run takes seconds to score, so its scores are
    kept with it (weakly: they go when the run goes)."""
    import gc
    import weakref

    import pages.shared.heads as page_heads
    from fixtures.long_runs import long_run
    from model.analysis.heads import line_sums
    from model.core.results import RunResult

    calls = []
    monkeypatch.setattr(page_heads, "line_sums", lambda w, cross: calls.append(cross) or line_sums(w, cross=cross))
    (kind,) = long_run(24, layers=2, heads=3)
    result = RunResult(task="hub", kinds={kind.name: kind}, prediction="")
    first = page_heads.run_sums(result)
    assert page_heads.run_sums(result) is first and calls == [False]
    want = line_sums(kind.weights, cross=False)
    assert first[kind.name].keys() - {"induction"} == want.keys()  # + induction here: the cycling tokens repeat
    for metric, (total, count) in want.items():
        np.testing.assert_array_equal(first[kind.name][metric][0], total)
        np.testing.assert_array_equal(first[kind.name][metric][1], count)
    ref = weakref.ref(result)
    assert ref in page_heads._SCORED.keyrefs()
    del result, kind
    gc.collect()
    assert ref() is None and ref not in page_heads._SCORED.keyrefs()  # the scores did not keep the run


def test_a_model_switch_shows_the_new_models_top_head_and_its_words(checkpoints):
    """Issue 43 item 7: after a model switch the head detail is the new model's top head (it stayed on the
    old pick, e.g. encoder · L0 · H2, whose deciles then contradicted the top-5 table); the generator's causal
    attention reads "decoder"; share scores keep their whole axis; points are named; no raw path is shown."""
    at = run()
    at.selectbox(key="heads_head").set_value("encoder-0-2").run()
    at.selectbox(key="heads_model").set_value("generator").run()
    assert not at.exception
    rows = stored(checkpoints, "generator")["heads"]
    best = max(rows, key=lambda r: r["previous"])
    assert at.selectbox(key="heads_head").value == f"decoder-{best['layer']}-{best['head']}"
    assert top(at)[0]["kind"] == "decoder"
    scatter = chart(at, "Every head")
    assert [t["name"] for t in scatter["data"]] == ["decoder"]
    assert scatter["layout"]["xaxis"]["range"] == pytest.approx([-0.04, 1.04])
    named = [label for label in scatter["data"][0]["texttemplate"] if label]
    assert named and all(label.startswith("L") for label in named)
    captions = " ".join(c.value for c in at.caption)
    assert "/" not in captions.split("lines of", 1)[1].split(",", 1)[0]
    # the links still open the model page on the kind as the page stores it
    (_, _, _, link) = examples(at)[0]
    assert parse_qs(urlsplit(link).query)["gen_kind"] == ["encoder"]


def test_corpus_lines_read_without_treebank_escapes():
    from pages.shared.heads import corpus_title, readable

    assert readable("a -lrb- very -rrb- good `` film ''") == "a ( very ) good “ film ”"
    assert corpus_title("model/analysis/corpora/sst2.txt") == "SST-2 movie-review sentences"
    assert corpus_title("/tmp/uploaded.txt") == "uploaded.txt"
