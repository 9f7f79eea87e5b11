"""Words a learner reads, from issue 43's screenshot review at 1440 and 390 px: no file of the repository
named on a page, a change of probability said in words, a head finder scatter whose names stay apart and
whose axes do not stretch a tiny spread, and a classroom question that ends in one full stop."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from fixtures.tiny import make_checkpoints, make_history
from model.lessons.questions import build_question
from tests import apptest
from tests.apptest import run_on
from tests.test_page_classroom import ask, fresh_store, start_room, texts  # noqa: F401 - fresh_store: autouse
from viz.heads import axis_range, head_scatter

pytestmark = pytest.mark.usefixtures("app_env")
# a point's name ("L0 H2", 34 × 19 px) as a share of the scatter's axes on a 390-px phone (about 250 × 290 px)
NAME_BOX = (0.14, 0.065)
# a path into the checkout: a folder, a slash, a file with its extension ("docs/RESULTS.md")
REPO_PATH = re.compile(r"\b[\w.-]+/[\w./-]*\.(md|py|json|txt|safetensors)\b")


# a card's words in the shape ``python -m model train --card`` records (model.training.card.CARD_PARTS)
CARD = "Learned from: three made-up sentences.\nGood at: nothing yet.\nBad at: everything: its weights are random."


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    """The tiny checkpoints with a training record and a card's words, so the model pages show their card."""
    root = make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))
    for task in ("classifier", "generator", "translator"):
        config = root / task / "config.json"
        meta = json.loads(config.read_text(encoding="utf-8"))
        meta["training"]["card"] = CARD
        config.write_text(json.dumps(meta), encoding="utf-8")
    return root


def page_text(at) -> str:
    """What the page writes, links' addresses left out (a link is followed, not read)."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success")
    shown = " ".join(str(e.value) for kind in kinds for e in getattr(at, kind))
    return re.sub(r"\]\([^)]*\)", "]", shown)


def in_order(node):
    """Every element under ``node``, in the order the page shows them."""
    yield node
    for child in getattr(node, "children", {}).values():
        yield from in_order(child)


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_the_model_card_is_closed_under_the_explorer_and_links_the_training_history(checkpoints, task):
    """Before: "How it was trained: … on one NVIDIA H200 … (a model soup) … (3.5 min on CPU, 1,493,858
    parameters)" in a caption above the input; and before that "Details: docs/RESULTS.md"."""
    at = run_on(checkpoints, apptest.page(task))
    assert not at.exception
    shown = list(in_order(at.main))
    [card] = [e for e in shown if getattr(e, "type", None) == "expander" and e.label.startswith("About this model")]
    assert not card.proto.expanded  # closed until a learner opens it
    explorer = next(i for i, e in enumerate(shown) if getattr(e, "type", None) == "bidi_component")
    first_input = next(i for i, e in enumerate(shown) if getattr(e, "type", None) in ("text_input", "text_area"))
    assert first_input < explorer < shown.index(card)  # the input, the explorer, then how the model was made
    texts = [e.value for e in in_order(card) if getattr(e, "type", None) in ("markdown", "caption")]
    headings = [re.match(r"\*\*([^*]+)\.\*\*", t).group(1) for t in texts if t.startswith("**")]
    assert headings[0] == "What it learned from" and "How big it is" in headings
    assert headings[-2:] == ["What it is good at", "What it gets wrong"]
    assert texts[0].endswith(r"Three made\-up sentences\.") and not any("**How it was trained:**" in t for t in texts)
    assert not REPO_PATH.search(page_text(at))
    [(title, address)] = re.findall(r"\[([^]]+)\]\(([^)]+)\)", texts[-1])
    assert title == "Training history" and urlsplit(address).path == "history"
    assert parse_qs(urlsplit(address).query) == {"hist_task": [task]}


def signless(text: str) -> bool:
    """Whether a change is said in words: no "pp", no hyphen-minus before a number."""
    return " pp" not in text and not re.search(r"-\d", text)


def test_a_change_of_probability_reads_in_words(checkpoints):
    """Before: "-16.1 pp" (pairs' metric) and "P(positive) moved by -88.8 pp" (ablation's caption)."""
    pairs = run_on(checkpoints, apptest.page("pairs"))
    change = pairs.metric[2]
    assert re.fullmatch(r"\d+\.\d points (higher|lower)|unchanged", change.value) and signless(change.label)
    assert "percentage points" in change.proto.help
    ablation = run_on(checkpoints, apptest.page("ablation"))
    [moved] = [c.value for c in ablation.caption if "switched off, P(" in c.value]
    assert re.search(r"is (\d+\.\d percentage points (higher|lower)|unchanged)\.$", moved) and signless(moved)


def test_points_say_which_way_and_never_minus_zero():
    from pages.shared.text import points

    assert points(-0.161) == "16.1 percentage points lower"
    assert points(0.015, unit="points") == "1.5 points higher"
    assert points(-0.0001) == points(0.0) == "unchanged"


def crowd(n: int = 8, low: float = 0.046, high: float = 0.053) -> list[dict]:
    """``n`` heads whose scores all lie within a hair of each other (issue 43 item 7: 0.046 to 0.053)."""
    step = (high - low) / (n - 1)
    return [
        {"kind": "encoder", "layer": i // 4, "head": i % 4, "previous": low + i * step, "first": high - i * step}
        for i in range(n)
    ]


def named_points(spec: dict) -> list[tuple[float, float]]:
    """Where the scatter's named points are."""
    return [(px, py) for t in spec["data"] for px, py, label in zip(t["x"], t["y"], t["texttemplate"]) if label]


def test_scatter_names_stay_apart_and_a_crowd_stays_a_crowd():
    """Before: every point of a small model named, so a crowd's names ran together ("L1L0H0H1")."""
    spec = head_scatter(crowd(), "previous", "first").to_plotly_json()
    named = named_points(spec)
    assert len(named) == 1  # one name for the crowd; hover names the rest
    rows = crowd(4, 0.1, 0.9) + [
        {"kind": "encoder", "layer": 2, "head": h, "previous": 0.5, "first": 0.5} for h in (0, 1)
    ]
    spec = head_scatter(rows, "previous", "first").to_plotly_json()
    named = named_points(spec)
    assert len(named) >= 2
    gx, gy = (share * 1.08 for share in NAME_BOX)  # both axes span 1.08: [-0.04, 1.04]
    for i, (ax, ay) in enumerate(named):
        for bx, by in named[i + 1 :]:
            assert abs(ax - bx) >= gx or abs(ay - by) >= gy


def test_a_score_with_no_fixed_range_starts_at_zero():
    """Before: entropy (bits) and distance had Plotly's own range, so 2.31 against 2.33 bits filled the
    chart (the page's own scatter: tests/browser/test_page_phone_fit.py)."""
    assert axis_range("entropy", [2.31, 2.33]) == pytest.approx([-0.0932, 2.4232])
    assert axis_range("distance_nosink", [0.0, 0.0]) == pytest.approx([-0.04, 1.04])
    assert axis_range("previous", [0.046, 0.053]) == pytest.approx([-0.04, 1.04])  # a share: 0 to 1 as before


DOUBLED = re.compile(r"[.!?…][”’\"']?\.")  # "…dessert first.”." (or "first..")


def test_the_classroom_question_ends_in_one_full_stop():
    """Before: "…the sentence is “Life is short, eat dessert first.”. The query is 1:is." on every screen."""
    teacher, _ = start_room()
    ask(teacher, "attend", 0)
    shown = texts(teacher).replace("\\", "")
    assert "“Life is short, eat dessert first.” The query is 1:is." in shown and not DOUBLED.search(shown)


@pytest.mark.parametrize("number", range(12))
def test_no_question_doubles_its_punctuation(number):
    """The sentences the hand-worked questions quote, some ending in a full stop and some not, and the shape
    questions' steps."""
    for kind in ("attend", "shape"):
        q = build_question(kind, number, lambda task: None)
        assert not DOUBLED.search(q.prompt), q.prompt
