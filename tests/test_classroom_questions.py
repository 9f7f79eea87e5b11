"""Classroom questions (every kind, against independent references) and the classroom figures
(the explorer's kinds for a round are in tests/test_classroom_kinds.py)."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from model.analysis.ablation import ablate
from model.core.checkpoint import load_checkpoint
from model.lessons.questions import KINDS, build_question, from_shape, previous_question
from model.lessons.workshop import hand_question, score_attention_guess, shape_question
from rooms.question import Question
from viz.classroom import ANSWER_COLOR, OTHER_COLOR, answer_histogram, candidate_heads


@pytest.fixture(scope="module")
def models(checkpoints):
    return {t: load_checkpoint(str(checkpoints / t), task=t, device="cpu") for t in ("classifier", "generator")}


def test_attend_question_is_the_workshops_with_its_scores():
    q = build_question("attend", 0, lambda task: None)
    w = hand_question(0)
    assert q.options[q.answer] == "4:dessert" and q.title == "Which key does 1:is attend to most?"
    assert q.points == tuple(round(score_attention_guess(w.row, i), 4) for i in range(6))
    assert np.allclose(q.reveal["weights"], w.weights, atol=1e-4) and q.reveal["highlight_row"] == 1


@pytest.mark.parametrize("number", [1, 4, 7, 10, 13, 16])
def test_shape_question_offers_the_true_shape_among_other_steps(number):
    q, s = from_shape(shape_question(number)), shape_question(number)
    assert q.options[q.answer] == "(" + ", ".join(map(str, s.shape)) + ")"
    assert q.points[q.answer] == 1 and all(p < 1 for i, p in enumerate(q.points) if i != q.answer)
    assert 2 <= len(q.options) <= 4


def test_previous_token_head_is_found():
    T, rng = 7, np.random.default_rng(0)
    w = rng.dirichlet(np.ones(T), size=(2, 3, T))  # (layers, heads, T, T) rows sum to 1
    prev = np.eye(T, k=-1)
    prev[0, 0] = 1.0
    w[1, 2] = 0.9 * prev + 0.1 / T  # layer 1 head 2 looks at the previous token
    q = previous_question(5, w, list("abcdefg"))
    assert q.options[q.answer] == "L1 H2" and len(q.options) == 4 and sum(q.points) == 1
    assert np.allclose(q.reveal["weights"], w[1, 2], atol=1e-4)
    shown = np.asarray(q.figure["weights"])
    assert shown.shape == (4, T, T) and q.figure["names"] == list(q.options)
    with pytest.raises(ValueError):
        previous_question(0, w[:, :, :2, :2], ["a", "b"])


def test_model_questions_on_tiny_models(models):
    for kind in ("head", "previous", "ablation"):
        q = build_question(kind, 3, models.get)
        assert q.kind == kind and q == Question.from_json(q.to_json())
        json.loads(q.to_json())  # plain JSON: any app process can read it
    q = build_question("ablation", 3, models.get)
    layer, head = map(int, re.search(r"L(\d+) H(\d+)", q.title).groups())
    sentence = re.search(r"reads “(.+?)”", q.prompt).group(1)
    ablation = ablate(models["classifier"], sentence, [("encoder", layer, head)])  # the reference
    flipped = ablation.after.prediction != ablation.before.prediction
    assert q.options[q.answer].startswith("flips" if flipped else "stays")


def test_a_kind_without_its_model_says_which():
    for kind, (_, task) in KINDS.items():
        if task:
            with pytest.raises(ValueError, match=f"needs the {task} model"):
                build_question(kind, 0, lambda t: None)
    with pytest.raises(ValueError):
        build_question("nonsense", 0, lambda t: None)
    with pytest.raises(ValueError):
        build_question("attend", 10_000, lambda t: None)


def test_questions_refuse_bad_options():
    with pytest.raises(ValueError):
        Question("attend", 0, "t", "p", ("a", "a"), (1, 0), 0, "e")
    with pytest.raises(ValueError):
        Question("attend", 0, "t", "p", ("a", "b"), (1, 0), 2, "e")


# ---- figures -------------------------------------------------------------------------------------


def test_histogram_counts_and_the_revealed_answer():
    fig = answer_histogram(["0:<b>x</b>", "1:y", "2:z"], [2, 0, 1], answer=0, title="it's <i>")
    spec = fig.to_plotly_json()
    bar = spec["data"][0]
    assert list(bar["x"]) == [2, 0, 1] and list(bar["y"]) == ["0:&lt;b&gt;x&lt;/b&gt;", "1:y", "2:z"]
    assert list(bar["marker"]["color"]) == [ANSWER_COLOR, OTHER_COLOR, OTHER_COLOR]
    assert "&lt;i&gt;" in spec["layout"]["title"]["text"] and "3 answers" in spec["layout"]["title"]["text"]
    open_bars = answer_histogram(["a", "b"], [0, 0]).to_plotly_json()["data"][0]
    assert len(set(open_bars["marker"]["color"])) == 1  # before the reveal no bar stands out
    with pytest.raises(ValueError):
        answer_histogram(["a"], [1, 2])


def test_candidate_figures():
    q = previous_question(1, np.full((2, 2, 4, 4), 0.25), list("ab c"))
    grid = candidate_heads(q.figure).to_plotly_json()
    assert [a["text"] for a in grid["layout"]["annotations"]] == list(q.options)
    assert all(name in t["hovertemplate"] for name, t in zip(q.options, grid["data"]))
    for note, trace in zip(grid["layout"]["annotations"], grid["data"]):  # each name above its own map
        x_dom = grid["layout"][trace["xaxis"].replace("x", "xaxis", 1)]["domain"]
        y_dom = grid["layout"][trace["yaxis"].replace("y", "yaxis", 1)]["domain"]
        assert x_dom[0] < note["x"] < x_dom[1] and note["y"] == pytest.approx(y_dom[1])
    assert len({(a["x"], a["y"]) for a in grid["layout"]["annotations"]}) == 4
    y_titles = [(v.get("title") or {}).get("text") or "" for k, v in grid["layout"].items() if k.startswith("yaxis")]
    assert "query (row)" in y_titles and not any("layer" in t for t in y_titles)  # the names say which head


def test_the_rooms_questions_follow_the_lesson_and_name_their_step():
    """Issue 51: the teacher's list is the lesson's order, each question named by the step it belongs to."""
    from model.lessons.path import lesson_path

    steps = {s.room: s for s in lesson_path() if s.room}
    assert set(steps) == set(KINDS)
    assert list(KINDS) == sorted(KINDS, key=lambda k: steps[k].number)
    for kind, (label, _) in KINDS.items():
        assert label.startswith(f"Step {steps[kind].number} · ")


@pytest.mark.parametrize("number", [0, 3, 5, 9])
def test_which_key_wins_gives_a_phone_the_scores_to_reason_from(number):
    """Issue 51 item 8: the hand-worked round shows the query's scores with every key (q · k / √d_k), the
    numbers whose order the softmax keeps, so the answer can be reasoned out on a phone."""
    q, w = build_question("attend", number, lambda task: None), hand_question(number)
    shown = re.findall(r"(\d+:\S+?) → (-?\d+\.\d\d)", q.prompt)
    assert [o for o, _ in shown] == list(q.options)
    reference = w.key_vectors @ w.query_vector / np.sqrt(w.key_vectors.shape[-1])  # brute force
    assert np.allclose([float(s) for _, s in shown], reference, atol=0.006)
    assert int(np.argmax([float(s) for _, s in shown])) == q.answer == int(np.argmax(w.row))


def test_the_classifier_round_asks_about_the_head_finder_s_previous_token_head(checkpoints, tmp_path):
    """Issue 51 item 8: "which key wins" on a trained classifier asks about a head with a known job (the one the
    lesson's step names, read from heads.json beside the checkpoint), not a random one."""
    from model.analysis.runs import run
    from model.lessons.workshop import head_sentence

    root = tmp_path / "classifier"
    shutil.copytree(checkpoints / "classifier", root)
    config = load_checkpoint(str(root), task="classifier").model.config
    L, H = config.layers, config.heads
    rows = [
        {"kind": "encoder", "layer": l, "head": h, "previous": 0.9 if (l, h) == (L - 1, H - 1) else 0.1}
        for l in range(L)
        for h in range(H)
    ]
    (root / "heads.json").write_text(json.dumps({"heads": rows}), encoding="utf-8")
    ck = load_checkpoint(str(root), task="classifier")
    for number in (2, 5):
        q = build_question("head", number, lambda task: ck)
        view = run(ck, head_sentence(number)).kinds["encoder"]
        assert np.allclose(q.reveal["weights"], view.weights[L - 1, H - 1], atol=1e-4)
        assert f"L{L - 1} H{H - 1}, the head the head finder calls its previous-token head" in q.prompt
        assert q.reveal["highlight_row"] >= 1  # the first word has no word before it
        assert q.reveal["title"] == f"L{L - 1} H{H - 1}: every query"
    (root / "heads.json").unlink()  # no scores: a seeded head, as before
    q = build_question("head", 2, lambda task: load_checkpoint(str(root), task="classifier"))
    assert "previous-token" not in q.prompt
