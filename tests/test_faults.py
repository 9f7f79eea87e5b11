"""Faults in one checkpoint stay on its pages: a missing, truncated or other-config checkpoint gives
the page that needs it one clear error (naming the file and what is wrong, and how to retrain),
while the pages of the other two models keep drawing their charts. Every page that opens a model
says so when its checkpoint is missing (one parametrised test, not a copy per page file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fixtures.tiny import corrupt
from model.core.checkpoint import CHECKPOINTS_ENV, CONFIG, WEIGHTS
from tests import apptest

pytestmark = pytest.mark.usefixtures("app_env")

TASKS = ("classifier", "generator", "translator")


# page -> (model, session state that picks it) for every page that opens a model
MODEL_PAGES = [
    *[(task, task, {}) for task in TASKS],
    *[("ablation", task, {"abl_model": task}) for task in TASKS],
    *[("pairs", task, {"pair_model": task}) for task in TASKS],
    ("profiles", "classifier", {}),
    ("history", "generator", {}),  # it opens on the generator's induction head forming (issue 51)
]
EXPECTED = {"missing": "python -m model train", "truncated": "truncated", "other-config": "wrong shape"}


def broken_root(checkpoints: Path, tmp_path: Path, broken: str, fault: str, monkeypatch) -> Path:
    """A copy of the tiny checkpoints with ``broken``'s damaged by ``fault``, which the app now reads."""
    root = tmp_path / "checkpoints"
    shutil.copytree(checkpoints, root)
    directory = root / broken
    if fault == "missing":
        shutil.rmtree(directory)
    elif fault == "truncated":
        corrupt(directory)
    else:  # saved from another config: the weights no longer fit the model config.json describes
        meta = json.loads((directory / CONFIG).read_text(encoding="utf-8"))
        meta["config"]["dim"] *= 2
        (directory / CONFIG).write_text(json.dumps(meta), encoding="utf-8")
    monkeypatch.setenv(CHECKPOINTS_ENV, str(root))
    apptest.clear_caches()
    return root


def page_text(at) -> str:
    return " ".join(e.value for e in [*at.error, *at.info, *at.warning])


@pytest.mark.parametrize("fault", ["missing", "truncated", "other-config"])
@pytest.mark.parametrize("broken", TASKS)
def test_a_broken_checkpoint_gives_its_page_a_clear_error(broken, fault, checkpoints, tmp_path, monkeypatch):
    root = broken_root(checkpoints, tmp_path, broken, fault, monkeypatch)
    expected = EXPECTED[fault]
    at = apptest.run(apptest.page(broken))
    assert not at.exception
    assert at.error and "could not be loaded" in at.error[0].value
    assert expected in page_text(at)
    if fault != "missing":
        assert str(root / broken / (WEIGHTS if fault == "truncated" else CONFIG)) in at.error[0].value
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("broken", TASKS)
def test_the_other_model_pages_keep_working(broken, checkpoints, tmp_path, monkeypatch):
    broken_root(checkpoints, tmp_path, broken, "other-config", monkeypatch)
    assert apptest.run(apptest.page(broken)).error  # the failed load first, in the same process
    for name in (t for t in TASKS if t != broken):
        ok = apptest.run(apptest.page(name))
        assert not ok.exception, name
        assert not ok.error, f"{name}: {[e.value for e in ok.error]}"
        assert ok.get("plotly_chart") or ok.get("bidi_component"), f"{name} drew no chart and no explorer"


@pytest.mark.parametrize("page, task, state", MODEL_PAGES, ids=[f"{p}-{t}" for p, t, _ in MODEL_PAGES])
def test_a_missing_checkpoint_gives_every_page_a_clear_message(page, task, state, tmp_path, monkeypatch):
    monkeypatch.setenv(CHECKPOINTS_ENV, str(tmp_path))  # an empty root: no checkpoint at all
    at = apptest.run(apptest.page(page), **state)
    assert not at.exception
    assert f"The {task} model could not be loaded" in at.error[0].value
    assert f"python -m model train {task}" in at.info[0].value
    assert not at.get("plotly_chart")
    for key, value in state.items():
        assert at.radio(key=key).value == value  # the model choice stays, to pick another


@pytest.mark.parametrize("task", TASKS)
def test_a_truncated_checkpoint_says_so(task, checkpoints, tmp_path, monkeypatch):
    shutil.copytree(checkpoints / task, tmp_path / task)
    corrupt(tmp_path / task)
    monkeypatch.setenv(CHECKPOINTS_ENV, str(tmp_path))
    at = apptest.run(apptest.page(task))
    assert not at.exception
    assert "could not be loaded" in at.error[0].value and "truncated" in at.error[0].value
