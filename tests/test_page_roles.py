"""Heads worth naming, on the pages: the Training history page follows each role's head through the scored
snapshots, and each model page names only heads that its checkpoint's heads.json ranks first for a role."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from fixtures.tiny import HISTORY_EPOCHS, make_checkpoints, make_history
from model.analysis.head_scan import CORPORA, our_reader, read_corpus, scan
from model.analysis.heads import PLAYS
from model.analysis.role_links import ROLES, top_heads, written_twice
from model.core.checkpoint import load_checkpoint
from tests import apptest
from tests.apptest import run_on
from tests.test_viz_profiles_history import read_svg

pytestmark = pytest.mark.usefixtures("app_env")
ROLES_SEEN = {"previous": "previous-token", "first": "first-token (sink)", "self": "self", "induction": "induction"}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    root = make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))
    # the generator's snapshots scored: induction forms at the last epoch, in layer 1 head 1
    meta_path = root / "generator" / "history.json"
    meta = json.loads(meta_path.read_text())
    meta["snapshots"] = {
        str(e): {
            "roles": {
                "previous": {"score": 0.3 * e, "kind": "encoder", "layer": 0, "head": 1},
                "duplicate": {"score": 0.02, "kind": "encoder", "layer": 0, "head": 0},  # no such head
                "induction": {
                    "score": 0.05 if e < HISTORY_EPOCHS[-1] else 0.85,
                    "kind": "encoder",
                    "layer": 1,
                    "head": 1,
                },
            },
            "repeat_loss": 4.0 if e < HISTORY_EPOCHS[-1] else 0.4,
        }
        for e in HISTORY_EPOCHS
    }
    meta_path.write_text(json.dumps(meta))
    # heads.json as `python -m model heads generator --examples --json` writes it, on the shipped corpus
    ck = load_checkpoint(root / "generator")
    corpus = CORPORA / "shakespeare.txt"
    report = scan(our_reader(ck), read_corpus(corpus)[:40]).to_json(
        examples=True, corpus=str(corpus.relative_to(apptest.ROOT))
    )
    report["sequences"] = 200  # the corpus file's line count: the page reads every line of it
    # a tiny random model plays no role (every score near an even spread): give two heads a role to play, so
    # that the page has heads to name and roles to leave out (those below PLAYS)
    for row in report["heads"]:
        if (row["layer"], row["head"]) == (0, 1):
            row["previous"] = 0.9
        if (row["layer"], row["head"]) == (1, 1):
            row["induction"] = 0.85
    report_lines = read_corpus(corpus)
    assert len(report_lines) == 200
    # the role links `python -m bench.roles --links --write` stores: the tiny model reaches no target, so each
    # top head's link is written as if it did (an input of the corpus, the induction one written twice); then
    # a link whose head no longer tops its role, and one under its target, which the page must not show
    links = []
    for top in top_heads(report):
        text = written_twice(report_lines[3], 128) if top["metric"] == "induction" else report_lines[7]
        links.append({**top, "role": ROLES[top["metric"]], "input": text, "score": 0.9, "target": 0.5})
    stale = {**links[0], "metric": "self", "role": ROLES["self"], "layer": 1, "head": 0}
    weak = {**links[0], "score": 0.2, "input": report_lines[9]}
    report["links"] = [weak, *links, stale]
    (root / "generator" / "heads.json").write_text(json.dumps(report))
    return root


def test_history_shows_each_roles_best_head_per_snapshot_and_follows_it(checkpoints):
    at = run_on(checkpoints, apptest.page("history"), {"hist_task": "generator"})
    assert not at.exception
    (svg,) = [m.value for m in at.markdown if m.value.startswith("<svg") and "best head per snapshot" in m.value]
    shown = read_svg(svg)
    assert [v for _, v in shown["series"]["induction"]["points"]] == pytest.approx([0.05, 0.05, 0.85])
    assert shown["series"]["loss on a repeated sequence (nats)"]["panel"] != shown["series"]["induction"]["panel"]
    assert not [b for b in at.button if b.key == "hist_follow_duplicate"]  # its best head does not play it
    button = at.button(key="hist_follow_induction")
    assert "L1 H1" in button.label
    button.click().run()
    assert not at.exception
    assert at.selectbox(key="hist_lh").value == (1, 1)
    assert at.selectbox(key="hist_probe").value == "p2"  # the probe whose text repeats


def test_model_page_links_only_stored_links_of_the_heads_heads_json_ranks_first(checkpoints):
    """Issue 51: a role link is one stored beside the scores (chosen where the head reaches its target); the
    page shows it only while it names the role's top head and reaches the target, and it opens the explorer
    on that head with the window covering the whole input (a repeat is never cut off)."""
    at = run_on(checkpoints, apptest.page("generator"))
    assert not at.exception
    report = json.loads((checkpoints / "generator" / "heads.json").read_text())
    (links,) = [m.value for m in at.markdown if m.value.startswith("**See each role at work**")]
    found = re.findall(r"\[([^\]:]+): L(\d+) H(\d+)\]\(([^)]+)\)", links)
    played = {role for m, role in ROLES_SEEN.items() if max(r.get(m) or 0 for r in report["heads"]) >= PLAYS}
    assert {"previous-token", "induction"} <= played < set(ROLES_SEEN.values())  # some roles no head plays
    assert [role for role, *_ in found] == [link["role"] for link in report["links"][1:-1]]  # not weak, not stale
    assert {role for role, *_ in found} <= played
    for role, layer, head, link in found:
        metric = next(m for m, r in ROLES_SEEN.items() if r == role)
        top = max((r for r in report["heads"] if r.get(metric) is not None), key=lambda r: r[metric])
        assert (int(layer), int(head)) == (top["layer"], top["head"]), role
        query = parse_qs(urlsplit(link).query)
        assert query["gen_layer"] == [layer] and query["gen_head"] == [head]
        text = query["gen_prompt"][0]
        assert query["gen_chars"] == [str(len(text))]  # the explorer shows every character of it
        if metric == "induction":  # a phrase written twice
            half = text[: len(text) // 2]
            assert text == f"{half} {half}"
    # the caption of roles on this input names the same heads, each with its score's scale and its target
    (caption,) = [c.value for c in at.caption if "Head finder roles on this input" in c.value]
    for role in set(ROLES_SEEN.values()) - played:
        assert f"{role}:" not in caption  # no head named for a role no head plays
    for role, layer, head, _ in found:
        if f" {role}: " in caption:
            part = next(p for p in caption.split("): ", 1)[1].split(" · ") if f" {role}: " in p)
            assert f"{role}: L{layer} H{head} — " in part and "(0–1) here" in part and "here, target 0." in part


def test_a_page_without_heads_json_names_no_head(checkpoints, tmp_path, monkeypatch):
    from model.core.checkpoint import CHECKPOINTS_ENV

    bare = make_checkpoints(tmp_path / "bare")
    monkeypatch.setenv(CHECKPOINTS_ENV, str(bare))
    at = apptest.run(apptest.page("generator"))
    assert not at.exception
    assert not [m for m in at.markdown if m.value.startswith("**See each role at work**")]
