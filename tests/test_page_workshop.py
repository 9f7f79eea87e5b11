"""Workshop mode: the predict-then-reveal page (questions from ?q=N, scoring, next question, bad
guesses; the question and scoring functions themselves: tests/test_workshop.py), keyboard stepping on the hand-worked page (?step=N)
and the projector theme in the shared sidebar (?projector=1)."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.lessons.workshop import hand_question, score_shape_guess, shape_question
from pages.lessons.stepper import STEP_KEYS_JS
from pages.shared.projector import PROJECTOR_CSS
from tests.apptest import charts, explorer, matrices, matrix, run, url
from viz.common import HEAD_COLORS

ROOT = Path(__file__).resolve().parent.parent
PAGE, HAND, APP = (str(ROOT / p) for p in ("pages/teach/workshop.py", "pages/lessons/hand.py", "app.py"))
WEIGHTS_OF_IS = [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]  # the hand example's weights for the query "is"
pytestmark = pytest.mark.usefixtures("app_env")


def score(at: AppTest) -> str:
    return next(m.value for m in at.metric if m.label == "Score")


def messages(at: AppTest) -> str:
    return " ".join(m.value for kind in ("success", "info", "warning") for m in getattr(at, kind))


# ---- the workshop page ---------------------------------------------------------------------------


def test_default_run_is_question_zero():
    at = run(PAGE)
    assert not at.exception and not at.warning and not at.error
    assert at.subheader[0].value.startswith("Warm-up question (number 0)")  # not "Question 0"
    assert at.radio(key="ws_guess_0").options == ["0:Life", "1:is", "2:short", "3:eat", "4:dessert", "5:first."]
    assert at.radio(key="ws_guess_0").value is None
    assert score(at) == "—"  # not "0.00 / 0" before any answer
    sentence = " ".join(m.value for m in at.markdown if "the sentence is" in m.value)
    assert "first\\.**" in sentence and ".**." not in sentence and "first\\.**\\." not in sentence  # no "first.."
    # only the hint (query and key vectors) as a matrix view, nothing that shows the weights
    assert [m["title"] for m in matrices(at)] == ["query and keys  (7 × 24)"]
    hint = matrix(at, "query and keys")
    assert hint["rows"] == [
        "query of 1:is",
        *(f"key of {w}" for w in ("0:Life", "1:is", "2:short", "3:eat", "4:dessert", "5:first.")),
    ]
    assert hint["cols"] == [str(i) for i in range(24)] and hint["shape"] == [7, 24]
    assert (hint["row_title"], hint["col_title"]) == ("vector", "dimension")
    q = hand_question(0)
    assert np.allclose(hint["grid"], np.vstack([q.query_vector, q.key_vectors]), atol=1e-6)
    top = float(np.abs(hint["grid"]).max())  # signed vectors: a diverging scale centred on 0
    assert hint["colour"]["signed"] is True and hint["colour"]["ranges"] == [[pytest.approx(-top), pytest.approx(top)]]
    assert hint["marks"] == []
    assert url(at, "q") == "0"


def test_strongest_guess_scores_one_and_reveals():
    at = run(PAGE)
    at.radio(key="ws_guess_0").set_value("4:dessert").run()
    at.button(key="ws_reveal").click().run()
    assert not at.exception
    assert score(at) == "1.00 / 1"
    assert "1.00 points" in at.success[0].value and "dessert" in at.success[0].value
    [bar] = charts(at)  # the revealed weights: the only Plotly chart on the page
    assert bar["data"][0]["type"] == "bar" and bar["data"][0]["y"] == WEIGHTS_OF_IS
    assert matrix(at, "query and keys")["shape"] == [7, 24]  # the hint stays a matrix view
    assert at.radio(key="ws_guess_0").disabled  # no changing the guess after the reveal
    assert "Reveal" not in [b.label for b in at.button]


def test_partial_credit_by_weight():
    at = run(PAGE)
    at.radio(key="ws_guess_0").set_value("0:Life").run()
    at.button(key="ws_reveal").click().run()
    assert score(at) == f"{0.2912 / 0.4917:.2f} / 1"
    assert "0.59 points" in at.info[0].value


def test_reveal_without_a_guess_asks_for_one():
    at = run(PAGE)
    at.button(key="ws_reveal").click().run()
    assert not at.exception
    assert "Pick a word first" in at.warning[0].value
    assert score(at) == "—"


def test_next_question_keeps_the_score_and_updates_the_url():
    at = run(PAGE)
    at.radio(key="ws_guess_0").set_value("4:dessert").run()
    at.button(key="ws_reveal").click().run()
    at.button(key="ws_next").click().run()
    assert not at.exception
    assert at.number_input(key="ws_q").value == 1 and url(at, "q") == "1"
    assert "what shape" in at.subheader[0].value
    assert score(at) == "1.00 / 1"
    at.button(key="ws_reset").click().run()
    assert score(at) == "—"


def test_url_question_is_honoured_and_shape_is_scored():
    q = shape_question(4)
    at = run(PAGE, query={"q": "4"})
    assert not at.exception
    assert at.number_input(key="ws_q").value == 4 and "Question 4" in at.subheader[0].value
    assert str(q.before_shape) in " ".join(m.value for m in at.markdown)
    assert charts(at) == []
    [title] = [m["title"] for m in matrices(at)]
    before = matrix(at, q.before)
    dims, sizes = ", ".join(q.before_dims), " × ".join(map(str, q.before_shape))
    assert title == before["title"] == f"{q.before}: ({dims})  ({sizes})"
    x, head_of = q.before_tensor.numpy(), q.before_head_of.numpy()
    assert before["shape"][0] * before["shape"][1] == x.size  # the tensor laid out as rows × columns
    assert np.allclose(np.ravel(before["grid"]), x.ravel(), atol=1e-6)
    colour = before["colour"]  # coloured by head, one colour per head
    assert colour["mode"] == "head" and colour["heads"] == head_of.ravel().tolist()
    assert colour["palette"] == list(HEAD_COLORS[: q.heads]) and set(colour["heads"]) == set(range(q.heads))
    at.text_input(key="ws_shape_4").input(str(q.shape)).run()
    at.button(key="ws_reveal").click().run()
    assert not at.exception
    assert score(at) == "1.00 / 1" and "1.00 points" in at.success[0].value
    assert ", ".join(f"{d} = {n}" for d, n in zip(q.dims, q.shape)) in at.success[0].value


def test_wrong_shape_gets_partial_or_no_credit():
    q = shape_question(4)
    wrong = (*q.shape[:-1], q.shape[-1] + 1)
    at = run(PAGE, query={"q": "4"})
    at.text_input(key="ws_shape_4").input(", ".join(map(str, wrong))).run()
    at.button(key="ws_reveal").click().run()
    expected = score_shape_guess(wrong, q.shape)
    assert 0 < expected < 1 and score(at) == f"{expected:.2f} / 1"


@pytest.mark.parametrize(
    "number, shown", [(0, "query and keys"), (1, "softmax"), (2, None), (3, "query and keys"), (4, "view")]
)
def test_no_plotly_chart_before_a_reveal(number, shown):
    """The attend round's hint and the shape round's tensor are matrix views; a trained head's question has no hint."""
    at = run(PAGE, query={"q": str(number)})
    assert not at.exception
    assert charts(at) == []
    assert [m["title"].split(":")[0].split("  (")[0] for m in matrices(at)] == ([shown] if shown else [])


@pytest.mark.parametrize("number", [1, 4, 7, 10])
def test_every_shape_round_shows_its_tensor_by_head(number):
    q = shape_question(number)
    at = run(PAGE, query={"q": str(number)})
    assert not at.exception
    before = matrix(at, q.before)
    assert np.allclose(np.ravel(before["grid"]), q.before_tensor.numpy().ravel(), atol=1e-6)
    assert before["colour"]["mode"] == "head" and before["colour"]["heads"] == q.before_head_of.numpy().ravel().tolist()
    assert all(h < q.heads for h in before["colour"]["heads"]) and len(before["colour"]["palette"]) == q.heads


@pytest.mark.parametrize("text", ["", "   \t", "x" * 5000, "😀🎬", "<script>alert(1)</script>", "two, four"])
def test_bad_shape_guesses_give_a_warning_and_no_score(text):
    at = run(PAGE, query={"q": "1"})
    at.text_input(key="ws_shape_1").input(text).run()
    at.button(key="ws_reveal").click().run()
    assert not at.exception
    assert at.warning and "not a shape yet" in at.warning[0].value
    assert "<script>" not in at.warning[0].value and "😀" not in at.warning[0].value
    assert score(at) == "—"


@pytest.mark.parametrize("raw", ["abc", "-1", "999999", "1.5"])
def test_bad_question_numbers_fall_back_to_zero(raw):
    at = run(PAGE, query={"q": raw})
    assert not at.exception
    assert at.number_input(key="ws_q").value == 0 and "Warm-up question" in at.subheader[0].value


def test_classifier_head_question():
    at = run(PAGE, query={"q": "2"})
    assert not at.exception and not at.info
    text = " ".join(m.value for m in at.markdown)
    assert "sentiment classifier, layer" in text and "the acting is wonderful" in text
    options = at.radio(key="ws_guess_2").options
    at.radio(key="ws_guess_2").set_value(options[0]).run()
    at.button(key="ws_reveal").click().run()
    assert not at.exception
    points = float(score(at).split(" / ")[0])
    assert 0 < points <= 1
    [head] = explorer(at)["kinds"]  # the true heatmap of the head, in the explorer
    assert np.allclose(explorer(at)["arrays"]["encoder"].sum(-1), 1, atol=1e-5) and head["keys"]


def test_classifier_question_without_a_checkpoint_uses_the_hand_example(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    at = run(PAGE, query={"q": "2"})
    assert not at.exception
    assert "not trained on this machine" in at.info[0].value
    assert "the hand-worked example" in " ".join(m.value for m in at.markdown)
    assert at.radio(key="ws_guess_2").options


# ---- keyboard stepping on the hand-worked page ---------------------------------------------------


def subheaders(at: AppTest) -> list[str]:
    return [s.value for s in at.subheader]


def test_hand_page_keeps_the_full_view_by_default():
    at = run(HAND)
    assert not at.exception
    assert at.radio(key="hand_view").value == "all"
    assert not at.get("iframe") and "step" not in at.query_params
    assert len(at.expander) == 10


def test_step_in_the_url_opens_that_step():
    at = run(HAND, query={"step": "5"})
    assert not at.exception
    assert at.radio(key="hand_view").value == "step"
    assert subheaders(at) == ["5. Unnormalised scores ω = q·k"]
    assert not at.expander
    assert round(matrix(at, "scores ω")["grid"][1][0], 4) == 8.5808  # the worked example's score of 1:is → 0:Life


def test_previous_and_next_step_buttons_move_and_update_the_url():
    at = run(HAND, query={"step": "1"})
    assert at.button(key="hand_step_prev").disabled and not at.button(key="hand_step_next").disabled
    at.button(key="hand_step_next").click().run()
    assert subheaders(at) == ["2. Embeddings x"] and url(at, "step") == "2"
    at.button(key="hand_step_next").click().run()
    at.button(key="hand_step_prev").click().run()
    assert subheaders(at) == ["2. Embeddings x"] and url(at, "step") == "2"
    at.selectbox(key="hand_step").set_value(10).run()
    assert subheaders(at) == ["10. Without weights: x·xᵀ"] and at.button(key="hand_step_next").disabled
    assert not at.exception


def test_switching_to_step_view_and_back():
    at = run(HAND)
    at.radio(key="hand_view").set_value("step").run()
    assert subheaders(at) == ["1. Tokens, vocabulary and ids"] and url(at, "step") == "1"
    at.radio(key="hand_view").set_value("all").run()
    assert not subheaders(at) and url(at, "step") is None


@pytest.mark.parametrize("raw", ["0", "11", "x", "-3"])
def test_out_of_range_step_starts_at_one(raw):
    at = run(HAND, query={"step": raw})
    assert not at.exception
    assert subheaders(at) == ["1. Tokens, vocabulary and ids"]


def test_query_detail_step_works_alone():
    at = run(HAND, query={"step": "8"})
    assert not at.exception
    assert at.selectbox(key="hand_query").value == "1:is"


def test_the_key_script_is_fixed_and_clicks_the_step_buttons():
    at = run(HAND, query={"step": "3"})
    frames = at.get("iframe")
    assert len(frames) == 1 and frames[0].proto.srcdoc == STEP_KEYS_JS
    for needle in ("ArrowLeft", "ArrowRight", '"Previous step"', '"Next step"', "window.parent.document", "INPUT"):
        assert needle in STEP_KEYS_JS
    labels = {b.label for b in at.button}
    assert {"Previous step", "Next step"} <= labels


# ---- projector theme -----------------------------------------------------------------------------


def projector_script():
    from pages.shared.projector import projector_toggle

    projector_toggle()


def test_projector_theme_from_the_url_in_the_app():
    at = run(APP, query={"projector": "1"})
    assert not at.exception
    assert at.sidebar.toggle(key="projector").value is True
    assert len([m for m in at.markdown if m.value == PROJECTOR_CSS]) == 1
    assert url(at, "projector") == "1"


def test_projector_toggle_switches_the_stylesheet_and_the_url():
    # the toggle alone: AppTest reruns of a multipage app skip the router's sidebar
    at = AppTest.from_function(projector_script, default_timeout=30)
    at.query_params["projector"] = "1"
    at.run()
    assert at.sidebar.toggle(key="projector").value is True
    at.sidebar.toggle(key="projector").set_value(False).run()
    assert not at.exception
    assert not [m for m in at.markdown if m.value == PROJECTOR_CSS] and url(at, "projector") is None
    at.sidebar.toggle(key="projector").set_value(True).run()
    assert [m for m in at.markdown if m.value == PROJECTOR_CSS] and url(at, "projector") == "1"


def test_projector_is_off_by_default_and_its_css_is_fixed():
    at = run(APP)
    assert not at.exception
    assert at.sidebar.toggle(key="projector").value is False
    assert not [m for m in at.markdown if "<style>" in m.value]
    assert PROJECTOR_CSS.startswith("<style>") and "{" in PROJECTOR_CSS and "font-size" in PROJECTOR_CSS
