"""Words a learner reads, from issue 43's screenshot review at 1440 and 390 px: no file of the repository
named on a page, a change of probability said in words, a head finder scatter whose names stay apart and
whose axes do not stretch a tiny spread, and a classroom question that ends in one full stop."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    """The tiny checkpoints with a training record, so the model pages show how each was trained."""
    return make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))


def page_text(at) -> str:
    """What the page writes, links' addresses left out (a link is followed, not read)."""
    kinds = ("markdown", "caption", "info", "warning", "error", "success")
    shown = " ".join(str(e.value) for kind in kinds for e in getattr(at, kind))
    return re.sub(r"\]\([^)]*\)", "]", shown)


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_a_model_card_names_no_file_and_links_the_training_history(checkpoints, task):
    """Before: "How it was trained: … Details: docs/RESULTS.md." on each model page."""
    at = run_on(checkpoints, apptest.page(task))
    assert not at.exception
    [card] = [c.value for c in at.caption if c.value.startswith("**How it was trained:**")]
    assert not REPO_PATH.search(page_text(at)) and "RESULTS" not in card
    [(title, address)] = re.findall(r"\[([^]]+)\]\(([^)]+)\)", card)
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
