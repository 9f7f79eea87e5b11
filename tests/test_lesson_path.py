"""The lesson (issue 51, "A guided path: the lesson" and item 6): one path of about eight steps read from the
checkpoints (model/lessons/path.py), each step's link opening its exact state, checks graded on the learner's
own input (model/lessons/checks.py), hints in stages, Next never held back, and the teacher's guide on the
start and Classroom pages drawn from the same steps. The page tests run the shipped checkpoints: the heads a
step names are theirs."""

from __future__ import annotations

import json
import shutil
from urllib.parse import urlencode

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.analysis.ablation import ablate
from model.analysis.heads import PLAYS
from model.analysis.runs import run
from model.core.checkpoint import CHECKPOINTS_ENV, ROOT, WEIGHTS, load_checkpoint
from model.lessons.checks import ablation_check, grade_key, grade_width, read_head
from model.lessons.path import KEY, lesson_path, total_minutes
from pages import page as page_entry
from tests import apptest
from tests.apptest import explorer, url

SHIPPED = ROOT / "checkpoints"
APP = str(apptest.ROOT / "app.py")
EXPLORER_FIELDS = ("kind", "layer", "head", "view")
needs_models = pytest.mark.skipif(
    not all((SHIPPED / t / WEIGHTS).is_file() for t in ("classifier", "generator", "translator")),
    reason="the shipped checkpoints are not here",
)


@pytest.fixture
def shipped(monkeypatch):
    """The app and the path read the shipped checkpoints; empty Streamlit caches before and after."""
    monkeypatch.delenv(CHECKPOINTS_ENV, raising=False)
    apptest.clear_caches()
    yield
    apptest.clear_caches()


@pytest.fixture(scope="module")
def models():
    return {t: load_checkpoint(SHIPPED / t, task=t) for t in ("classifier", "generator", "translator")}


def top_head(task: str, metric: str) -> tuple[str, int, int]:
    """The head finder's best head for ``metric``, read straight from the JSON (the reference)."""
    rows = json.loads((SHIPPED / task / "heads.json").read_text(encoding="utf-8"))["heads"]
    best = max((r for r in rows if r.get(metric) is not None), key=lambda r: r[metric])
    assert best[metric] >= PLAYS
    return best["kind"], best["layer"], best["head"]


# ---- the path's data ---------------------------------------------------------------------------------------


def test_one_path_from_the_hand_worked_sentence_to_a_translation(shipped):
    path = lesson_path()
    assert 7 <= len(path) <= 9 and [s.number for s in path] == list(range(1, len(path) + 1))
    assert [s.page for s in path] == [
        "hand", "reshape", "classifier", "ablation", "generator", "generator", "history", "translator"
    ]  # fmt: skip
    assert path[0].params["hand_sentence"] == "Life is short, eat dessert first."
    assert path[-1].params["tr_kind"] == "cross" and total_minutes(path) == 45
    for step in path:
        assert step.notice and step.check.question and len(step.check.hints) >= 2 and step.minutes > 0
        page_entry(step.page)  # a page of the registry
        prefixes = page_entry(step.page).url_keys
        assert all(k.startswith(prefixes) for k in step.params), (step.page, list(step.params))


def test_the_heads_a_step_names_are_the_head_finders(shipped):
    path = {s.number: s for s in lesson_path()}
    kind, layer, head = top_head("classifier", "previous")
    assert (path[3].params["cls_kind"], path[3].params["cls_layer"], path[3].params["cls_head"]) == (
        kind, str(layer), str(head)
    )  # fmt: skip
    assert path[4].params[f"abl_cls_enc{layer}"] == str(head) and f"L{layer} H{head}" in path[4].check.question
    kind, layer, head = top_head("generator", "previous")
    assert (path[5].params["gen_layer"], path[5].params["gen_head"]) == (str(layer), str(head))
    kind, layer, head = top_head("generator", "induction")
    for n in (6, 7):
        prefix = "gen" if n == 6 else "hist"
        assert (path[n].params[f"{prefix}_layer"], path[n].params[f"{prefix}_head"]) == (str(layer), str(head))
        assert f"L{layer} H{head}" in path[n].notice
    kind, layer, head = top_head("translator", "monotonic")
    assert (path[8].params["tr_kind"], path[8].params["tr_layer"], path[8].params["tr_head"]) == (
        kind, str(layer), str(head)
    )  # fmt: skip


def test_a_retrained_model_s_path_names_its_own_heads(tmp_path, monkeypatch):
    """Nothing is written by hand: heads.json naming another induction head moves the steps with it."""
    for task in ("classifier", "generator", "translator"):
        (tmp_path / task).mkdir()
        for name in ("heads.json", "history.json"):
            shutil.copy(SHIPPED / task / name, tmp_path / task / name)
    report = json.loads((tmp_path / "generator" / "heads.json").read_text(encoding="utf-8"))
    for row in report["heads"]:  # layer 1 · head 4 becomes the induction head
        row["induction"] = 0.95 if (row["layer"], row["head"]) == (1, 4) else 0.01
    (tmp_path / "generator" / "heads.json").write_text(json.dumps(report), encoding="utf-8")
    monkeypatch.setenv(CHECKPOINTS_ENV, str(tmp_path))
    path = {s.number: s for s in lesson_path()}
    assert (path[6].params["gen_layer"], path[6].params["gen_head"]) == ("1", "4") and "L1 H4" in path[6].notice
    for row in report["heads"]:  # no head plays the role: the step names none
        row["induction"] = 0.01
    (tmp_path / "generator" / "heads.json").write_text(json.dumps(report), encoding="utf-8")
    path = {s.number: s for s in lesson_path()}
    assert "gen_layer" not in path[6].params and "has not scored" in path[6].notice


def test_the_history_step_opens_at_the_snapshot_where_the_induction_head_forms(shipped):
    meta = json.loads((SHIPPED / "generator" / "history.json").read_text(encoding="utf-8"))
    scores = {int(e): s["roles"]["induction"]["score"] for e, s in meta["snapshots"].items()}
    epochs = sorted(scores)
    formed = next(e for i, e in enumerate(epochs) if all(scores[x] >= PLAYS for x in epochs[i:]))  # brute force
    (step,) = [s for s in lesson_path() if s.page == "history"]
    assert step.params["hist_epoch"] == str(formed) and step.params["hist_task"] == "generator"
    probe = meta["probes"][step.params["hist_probe"]]
    text = "".join(probe)
    assert any(text.count(text[i : i + 12]) > 1 for i in range(len(text) - 12))  # the probe writes a phrase twice
    check = step.check
    assert check.options[check.answer] == f"snapshot {formed}" and f"snapshot {formed - 1}" in check.options


@needs_models
def test_the_induction_step_s_window_covers_the_repeat_and_the_head_does_its_job_there(shipped, models):
    (step,) = [s for s in lesson_path() if s.page == "generator" and "induction" in s.check.why]
    text, window = step.params["gen_prompt"], int(step.params["gen_chars"])
    half = len(text) // 2
    assert window >= len(text) and text[:half] == text[half + 1 :]  # both copies are in the explorer
    w = (
        run(models["generator"], text)
        .kinds["encoder"]
        .weights[int(step.params["gen_layer"]), int(step.params["gen_head"])]
    )
    period = half + 1
    target = [w[i, i - period + 1] for i in range(period + 1, len(text))]  # the character after the earlier copy
    assert float(np.mean(target)) >= 0.5


# ---- the checks, graded on the learner's input ---------------------------------------------------------------


@needs_models
@pytest.mark.parametrize("number", [1, 3, 6, 8])
def test_a_key_check_is_graded_on_what_the_model_does_with_the_learner_s_text(shipped, models, number):
    step = lesson_path()[number - 1]
    check = step.check
    assert check.kind == KEY
    mine = {
        "hand": "We read the book before the film",
        "classifier": "a moving and beautifully made film",
        "generator": "Now is the winter",
        "translator": "eine frau liest ein buch im park .",
    }[check.model]
    read = read_head(check, mine, models.get(check.model))
    if check.model == "hand":  # the reference: the hand-worked head's own weights
        from model.lessons.hand import walkthrough

        reference = walkthrough(mine).weights.numpy()
    else:
        shown = mine + "\n" + mine if check.twice else mine
        reference = run(models[check.model], shown).kinds[check.attention].weights[check.layer, check.head]
    assert np.allclose(read.weights, reference, atol=1e-6)
    for query in range(len(read.queries)):
        best = int(np.argmax(reference[query]))
        assert grade_key(read, query, best).right
        wrong = next(k for k in range(len(read.keys)) if k != best)
        graded = grade_key(read, query, wrong)
        assert not graded.right and graded.answer == best


@needs_models
def test_the_ablation_and_width_checks_are_graded_on_runs(shipped, models):
    check = lesson_path()[3].check
    sentence = "it is not a good movie"
    outcome = ablation_check(check, models["classifier"], sentence)
    reference = ablate(models["classifier"], sentence, [(check.attention, check.layer, check.head)])
    label = reference.before.prediction
    flipped = reference.after.prediction != label
    up = reference.after.probs[label] >= reference.before.probs[label]
    assert outcome.options[outcome.answer].startswith("flips" if flipped else "stays")
    assert flipped or outcome.options[outcome.answer].endswith("more confident" if up else "less confident")
    assert grade_width(12, 3, 4).right and not grade_width(12, 3, 3).right and grade_width(12, 3, 3).answer == 4
    with pytest.raises(ValueError):
        grade_width(10, 3, 3)


# ---- the lesson page ---------------------------------------------------------------------------------------


def lesson_page(step: int) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lesson_step"] = str(step)
    at.switch_page(page_entry("lesson").script).run()
    assert not at.exception, at.exception
    return at


@needs_models
def test_the_lesson_page_grades_the_learner_s_own_sentence(shipped, models):
    """Step 3: the learner types a sentence, picks a word and a guess; the model's own run decides."""
    at = lesson_page(3)
    assert at.subheader[0].value.startswith("3. ")
    sentence = "a moving and beautifully made film"
    at.text_input(key="path_text_3").set_value(sentence).run()
    (query,) = [s for s in at.selectbox if s.key.startswith("path_query_3_")]
    query.set_value(4).run()  # "made"
    step = lesson_path()[2]
    row = run(models["classifier"], sentence).kinds["encoder"].weights[step.check.layer, step.check.head][4]
    best = int(np.argmax(row))
    (guess,) = [s for s in at.selectbox if s.key.startswith("path_guess_3_")]
    guess.set_value(best).run()
    assert not at.exception and at.success and at.success[0].value.startswith("Right.")
    (guess,) = [s for s in at.selectbox if s.key.startswith("path_guess_3_")]
    guess.set_value(next(k for k in range(len(row)) if k != best)).run()
    assert not at.success and at.info[0].value.startswith("Not this time.")


@needs_models
def test_hints_come_one_at_a_time_and_next_is_never_held_back(shipped):
    at = lesson_page(1)
    hints = lambda: [m.value for m in at.markdown if m.value.startswith("**Hint")]  # noqa: E731
    assert hints() == [] and at.button(key="path_hint_1").proto.label == "A hint"
    steps = lesson_path()
    for shown in range(1, len(steps[0].check.hints) + 1):
        at.button(key="path_hint_1").click().run()
        assert hints() == [f"**Hint {i}:** {h}" for i, h in enumerate(steps[0].check.hints[:shown], 1)]
    assert at.button(key="path_hint_1").disabled
    for number in range(1, len(steps) + 1):  # no answer anywhere: Next still leads through every step
        assert at.subheader[0].value == f"{number}. {steps[number - 1].title}" and url(at, "lesson_step") == str(number)
        assert not at.button(key="path_next_top").disabled or number == len(steps)
        if number < len(steps):
            at.button(key="path_next_top").click().run()
            assert not at.exception, (number, at.exception)
    at.button(key="path_back_bottom").click().run()
    assert url(at, "lesson_step") == str(len(steps) - 1)


# ---- every step's link opens its state ---------------------------------------------------------------------


def in_explorer(key: str) -> bool:
    """Whether ``key`` is one of the explorer's own URL keys (kind, layer, head, view) on a model page."""
    return key.startswith(("gen_", "cls_", "tr_")) and key.rsplit("_", 1)[-1] in EXPLORER_FIELDS


def link_params(at: AppTest) -> list[tuple[str, str]]:
    """(page, query string) of every page link on the page."""
    return [
        (link.proto.page.rsplit("/", 1)[-1].removesuffix(".py"), link.proto.query_string)
        for link in at.get("page_link")
    ]


@needs_models
@pytest.mark.parametrize("number", range(1, 9))
def test_each_step_s_link_opens_its_exact_state(shipped, number):
    step = lesson_path()[number - 1]
    at = lesson_page(number)
    assert (step.page, urlencode(dict(step.params))) in link_params(at)  # the page's link is the step's state
    opened = AppTest.from_file(APP, default_timeout=180)
    for key, value in step.params.items():
        opened.query_params[key] = value
    opened.switch_page(page_entry(step.page).script).run()
    assert not opened.exception, opened.exception
    state = explorer(opened)["state"] if any(map(in_explorer, step.params)) else {}
    for key, value in step.params.items():
        field = key.rsplit("_", 1)[-1]
        if in_explorer(key):
            assert str(state[field]) == value, (key, state)
        elif key == "step":  # the hand page's one-step view
            assert opened.session_state["hand_step"] == int(value)
        else:
            held = opened.session_state[key]
            held = ",".join(map(str, held)) if isinstance(held, list) else str(held)
            assert held == value, (key, held, value)
        assert url(opened, key) == value  # and the address keeps it, for a reload or a shared link


# ---- the guide: the same steps on the start and Classroom pages ------------------------------------------


def test_the_teacher_s_guide_on_the_start_and_classroom_pages_is_the_path(shipped):
    path = lesson_path()
    wanted = [(s.page, urlencode(dict(s.params))) for s in path]
    start = AppTest.from_file(APP, default_timeout=120).run()
    classroom = AppTest.from_file(APP, default_timeout=120)
    classroom.switch_page(page_entry("classroom").script).run()
    assert not start.exception and not classroom.exception
    for at in (start, classroom):
        links = [p for p in link_params(at) if p[1] and p[0] != "lesson"]
        assert links == wanted
        titles = [m.value for m in at.markdown if m.value.startswith(tuple(f"**{s.number}. " for s in path))]
        assert titles == [f"**{s.number}. {s.title}** · {s.minutes} min" for s in path]
    heading = f"Teaching a room: the lesson as a {total_minutes(path)}-minute class"
    assert heading in [h.value for h in start.subheader]  # open on the start page, not folded away
    assert not [e for e in start.expander if e.label.startswith("Teaching a room")]


@needs_models
def test_a_page_visited_before_opens_at_the_step_s_state_not_the_last_one(shipped):
    """A page seeds its state from the URL once per session: the lesson forgets the keys its link sets."""
    step = lesson_path()[6]  # the history at the snapshot where the induction head forms
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(hist_task="generator", hist_layer="0", hist_head="0", hist_epoch="1")
    at.switch_page(page_entry("history").script).run()
    assert (at.session_state["hist_layer"], at.session_state["hist_epoch"]) == (0, 1)
    at.query_params.clear()
    at.query_params["lesson_step"] = "7"
    at.switch_page(page_entry("lesson").script).run()  # the learner comes back to the lesson...
    assert not at.exception
    at.query_params.clear()
    at.query_params.update(dict(step.params))  # ...and follows the step's link
    at.switch_page(page_entry("history").script).run()
    assert not at.exception
    held = (at.session_state["hist_layer"], at.session_state["hist_head"], at.session_state["hist_epoch"])
    assert held == (int(step.params["hist_layer"]), int(step.params["hist_head"]), int(step.params["hist_epoch"]))


def test_every_step_is_said_in_a_learner_s_words(shipped):
    """Issue 43's wording rules on the lesson's every sentence: no file path, no doubled punctuation."""
    from tests.test_page_wording import DOUBLED, REPO_PATH

    for step in lesson_path():
        c = step.check
        for text in (step.title, step.notice, step.teach, c.question, c.why, *c.hints, *c.options):
            assert not REPO_PATH.search(text) and not DOUBLED.search(text), text
            assert "_" not in text and "()" not in text, text  # no code identifiers
