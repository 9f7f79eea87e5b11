"""AppTest of the start page, the app's default: what it teaches, a link to every page in teaching
order, and the models' held-out results read from each checkpoint's config.json."""

from __future__ import annotations

import json
import shutil

import pytest

from model.core.checkpoint import CHECKPOINTS_ENV
from pages import PAGES
from tests import apptest
from tests.apptest import charts

APP = str(apptest.ROOT / "app.py")
# the path's cards: every page but the start page, section by section, in the registry's order
ORDER = [p.address for p in PAGES if p.section != "home"]
HOME = {p.address for p in PAGES if p.section == "home"}  # the start page and the lesson, linked above the cards
pytestmark = pytest.mark.usefixtures("app_env")


def with_results(checkpoints, tmp_path, results: dict) -> str:
    """A copy of the tiny checkpoints whose config.json files record ``results`` (task -> dict)."""
    root = tmp_path / "checkpoints"
    shutil.copytree(checkpoints, root)
    for task, values in results.items():
        path = root / task / "config.json"
        meta = json.loads(path.read_text(encoding="utf-8"))
        meta["results"] = values
        path.write_text(json.dumps(meta), encoding="utf-8")
    return str(root)


def test_the_app_opens_on_the_start_page_with_the_path_in_order():
    at = apptest.run(APP)
    assert not at.exception
    assert at.title[0].value == "Attention Explorer"
    links = [link.proto.page for link in at.get("page_link")]
    cards = [p.rsplit("/", 1)[-1].removesuffix(".py") for p in links if p.rsplit("/", 1)[-1] not in HOME]
    assert cards[: len(ORDER)] == ORDER


def test_the_start_page_leads_to_every_way_of_teaching_and_gives_no_answer_away():
    """Issue 43 item 2: the Classroom, the Head finder and Any model are on the start page, "Teaching a room"
    lists the room, a class plan (issue 51: the lesson's steps) links its pages, and the picture is not the lessons' sentence (whose row
    for "is" answers the workshop's and the classroom's first question)."""
    at = apptest.run(APP)
    assert not at.exception
    subheaders = [h.value for h in at.subheader]
    assert "Teaching a room" in subheaders
    pages = [link.proto.page.rsplit("/", 1)[-1].removesuffix(".py") for link in at.get("page_link")]
    assert {"classroom", "heads", "any_model", "workshop"} <= set(pages)
    # issue 51 item 6: the guide is the lesson's path, open on the page (not in a closed section), each step a
    # link with its state; and the lesson itself is the first link
    assert "Teaching a room: the lesson as a 45-minute class" in subheaders
    assert not [e for e in at.expander if e.label.startswith("Teaching a room")]
    stated = {p for p, q in ((link.proto.page, link.proto.query_string) for link in at.get("page_link")) if q}
    assert {"hand", "reshape", "generator", "history", "translator"} <= stated
    first = at.get("page_link")[0].proto
    assert first.page.rsplit("/", 1)[-1] == "lesson" and first.query_string == "lesson_step=1"
    (picture,) = [c for c in charts(at) if "one head" in c["layout"]["title"]["text"]]
    shown = " ".join(map(str, picture["data"][0]["x"]))
    assert "dessert" not in shown and "is" not in picture["data"][0]["x"]
    assert any(e.label.startswith("Glossary") for e in at.expander)


def test_headline_figures_are_read_from_each_checkpoint(checkpoints, tmp_path, monkeypatch):
    results = {
        "classifier": {"dev_accuracy": 0.6173, "epoch": 3, "train_loss": 0.4},
        "generator": {"val_loss": 1.9021, "val_bpc": 2.7441, "seconds": 12.0},
        "translator": {"val_bleu": 12.345, "val_sacrebleu": 11.5},
    }
    monkeypatch.setenv(CHECKPOINTS_ENV, with_results(checkpoints, tmp_path, results))
    at = apptest.run(APP)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {
        "Sentiment classifier · SST-2": "61.7%",
        "Shakespeare generator · Tiny Shakespeare": "1.902",
        "Translator (de → en) · Multi30k": "12.35",
    }
    captions = " ".join(c.value for c in at.caption)
    assert "dev accuracy" in captions and "validation bits per character 2.744" in captions
    assert "0.4" not in captions and "training loss" not in captions  # bookkeeping is not a result


def test_missing_checkpoints_and_results_say_so(checkpoints, tmp_path, monkeypatch):
    root = with_results(checkpoints, tmp_path, {"generator": {}})
    shutil.rmtree(f"{root}/translator")
    monkeypatch.setenv(CHECKPOINTS_ENV, root)
    at = apptest.run(APP)
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Translator (de → en) · Multi30k"] == "not trained yet"
    assert metrics["Shakespeare generator · Tiny Shakespeare"] == "no results recorded"
