"""AppTest of the "Self-attention by hand" page: defaults show the worked example's numbers, every control
works, bad input gives a message instead of an exception, the URL seeds the state."""

import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import matrices, matrix

PAGE = apptest.page("hand")
OPEN_ALL = {f"hand_part_{i}": True for i in range(1, 11)}  # the steps' expanders draw only when open


def run(query: dict | None = None, **state) -> AppTest:
    """The page with every step open."""
    return apptest.run(PAGE, query, **{**OPEN_ALL, **state})


def all_text(at: AppTest) -> str:
    """Every matrix's title, labels and values to 4 decimals (as the cells print them), and the prose."""
    parts = [" ".join([m["title"], *m["rows"], *m["cols"], *(f"{v:.4f}" for v in m["values"])]) for m in matrices(at)]
    parts += [m.value for m in at.markdown]
    return "\n".join(parts)


def titles(at: AppTest) -> list[str]:
    return [m["title"] for m in matrices(at)]


@pytest.fixture(scope="module")
def default() -> AppTest:
    return run()


def test_default_run_shows_the_seed_numbers(default):
    assert not default.exception
    assert not default.warning
    text = all_text(default)
    for number in ("8.5808", "-7.6597", "11.1466", "0.2912", "0.4917", "0.0458", "-1.5993"):
        assert number in text, number
    detail = matrix(default, "query 1:is: scores and weights")
    assert detail["rows"][2] == "weight"
    assert [round(x, 4) for x in detail["grid"][2]] == [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]
    assert default.selectbox(key="hand_query").value == "1:is"


def test_closed_steps_are_not_drawn_until_opened():
    at = apptest.run(PAGE)
    assert not at.exception
    assert matrix(at, "scores ω") and not [t for t in titles(at) if t.startswith("embeddings x")]
    at.session_state["hand_part_2"] = True
    at.run()
    assert matrix(at, "embeddings x")["title"] == "embeddings x  (6 × 16)"


def test_default_matrices(default):
    scores = matrix(default, "scores ω")
    assert scores["row_title"] == "query (row)" and scores["col_title"] == "key (column)"
    assert scores["title"] == "scores ω  (6 × 6)" and scores["rows"][1] == "1:is"
    assert scores["colour"]["signed"] and scores["colour"]["ranges"][0][0] == -scores["colour"]["ranges"][0][1]
    weights = matrix(default, "attention weights")
    assert weights["decimals"] == 4 and not weights["colour"]["signed"]
    assert matrix(default, "embeddings x")["title"] == "embeddings x  (6 × 16)"
    assert matrix(default, "W_v")["title"] == "W_v  (28 × 16)"
    assert matrix(default, "concatenated heads")["title"] == "concatenated heads  (6 × 56)"
    assert matrix(default, "ids")["grid"] == [[0, 4, 5, 2, 1, 3]] and matrix(default, "ids")["colour"]["mode"] == "none"
    detail = matrix(default, "query 1:is")["colour"]
    assert len(detail["ranges"]) == 3  # score, scaled score and weight each on its own colour range
    assert matrix(default, "head 1: attention weights")
    assert matrix(default, "raw x·xᵀ")
    assert len(default.get("download_button")) >= 10  # every matrix offers its numbers as CSV


def test_url_state_is_used_and_written():
    at = run({"hand_seed": "7", "hand_heads": "3", "hand_query": "4:dessert", "hand_d": "999"})
    assert not at.exception
    assert at.number_input(key="hand_seed").value == 7
    assert at.number_input(key="hand_d").value == 16  # out of range in the URL: default kept
    assert at.selectbox(key="hand_query").value == "4:dessert"
    assert matrix(at, "head 2: attention weights")
    assert "8.5808" not in all_text(at)  # another seed, other numbers
    assert at.query_params["hand_seed"] == ["7"] or at.query_params["hand_seed"] == "7"


@pytest.mark.parametrize(
    "key, value, check",
    [
        ("hand_seed", 1, lambda at: "8.5808" not in all_text(at)),
        ("hand_d", 4, lambda at: matrix(at, "embeddings x")["title"].endswith("(6 × 4)")),
        ("hand_dq", 5, lambda at: matrix(at, "queries")["title"].endswith("(6 × 5)")),
        ("hand_dv", 3, lambda at: matrix(at, "context z")["title"].endswith("(6 × 3)")),
        ("hand_heads", 1, lambda at: at.info and "Heads above 1" in at.info[0].value),
        ("hand_tokenizer", "spacy", lambda at: matrix(at, "scores ω")["cols"][3] == "3:,"),
        ("hand_query", "4:dessert", lambda at: matrix(at, "query 4:dessert")),
        ("hand_plain_scale", True, lambda at: matrix(at, "weights  (6 × 6)")),
    ],
)
def test_each_control(key, value, check):
    at = run()
    widget = at.get("checkbox") + at.get("radio") + at.get("selectbox") + at.get("number_input")
    [target] = [w for w in widget if w.key == key]
    target.set_value(value).run()
    assert not at.exception
    assert at.session_state[key] == value
    assert check(at)


def test_sentence_control_and_repeated_tokens():
    at = run()
    at.text_input(key="hand_sentence").set_value("the cat saw the dog").run()
    assert not at.exception
    assert matrix(at, "scores ω")["cols"] == ["0:the", "1:cat", "2:saw", "3:the", "4:dog"]
    assert at.selectbox(key="hand_query").value == "1:cat"  # the old choice is gone: second token


@pytest.mark.parametrize(
    "sentence, message",
    [
        ("", "empty"),
        ("   \t  ", "empty"),
        (", , ,", "no tokens"),
    ],
)
def test_empty_input_warns(sentence, message):
    at = run(hand_sentence=sentence)
    assert not at.exception
    assert any(message in w.value for w in at.warning)
    assert not matrices(at)


@pytest.mark.parametrize(
    "sentence",
    [
        "😀 🎉 attention 🤖",
        "<script>alert(1)</script> is <b>bold</b>",
        "\u200b \u202e reversed \u0301 ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \x00",
        "日本語 の 文 です",
    ],
)
def test_odd_input_runs_without_exception(sentence):
    at = run(hand_sentence=sentence)
    assert not at.exception
    assert not at.warning
    cols = matrix(at, "scores ω")["cols"]
    assert len(cols) == len(set(cols))
    assert all("\u202e" not in label and "\u200b" not in label for label in cols)  # shown as ⟨U+202E⟩
    assert not any("<script" in m.value for m in at.markdown)  # the browser test shows markup as text


def test_long_input_is_capped_with_a_note():
    at = run(hand_sentence="word " * 999 + "words")  # 5,000 characters
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    assert "5,000 characters" in notes and "only the first 40" in notes
    assert matrix(at, "scores ω")["title"] == "scores ω  (40 × 40)"


def test_a_2000_character_word_is_sent_whole():
    """The table cuts long labels with CSS (an ellipsis) and shows them whole on hover: the payload keeps them."""
    at = run({"hand_sentence": "a " + "x" * 1990 + " b"})
    assert not at.exception
    assert matrix(at, "scores ω")["rows"][1] == "1:" + "x" * 1990


def test_one_word_sentence_says_word_and_token():
    at = run({"hand_sentence": "hello"})
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "(1 word)" in captions and "(1 token)" in captions and "1 words" not in captions
