"""AppTest of the "Self-attention by hand" page: defaults show the worked example's numbers, every control
works, bad input gives a message instead of an exception, the URL seeds the state."""

import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import chart, titles

PAGE = apptest.page("hand")
OPEN_ALL = {f"hand_part_{i}": True for i in range(1, 11)}  # the steps' expanders draw only when open


def run(query: dict | None = None, **state) -> AppTest:
    """The page with every step open."""
    return apptest.run(PAGE, query, **{**OPEN_ALL, **state})


def all_text(at: AppTest) -> str:
    parts = [c.proto.spec for c in at.get("plotly_chart")]
    parts += [df.value.to_csv() for df in at.dataframe]
    parts += [m.value for m in at.markdown]
    return "\n".join(parts)


@pytest.fixture(scope="module")
def default() -> AppTest:
    return run()


def test_default_run_shows_the_seed_numbers(default):
    assert not default.exception
    assert not default.warning
    text = all_text(default)
    for number in ("8.5808", "-7.6597", "11.1466", "0.2912", "0.4917", "0.0458", "-1.5993"):
        assert number in text, number
    detail = next(df.value for df in default.dataframe if "weight" in df.value.columns)
    assert detail["weight"].round(4).tolist() == [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]
    assert default.selectbox(key="hand_query").value == "1:is"


def test_closed_steps_are_not_drawn_until_opened():
    at = apptest.run(PAGE)
    assert not at.exception
    assert chart(at, "scores ω") and not [c for c in at.get("plotly_chart") if "embeddings x" in c.proto.spec]
    at.session_state["hand_part_2"] = True
    at.run()
    assert chart(at, "embeddings x")["layout"]["title"]["text"] == "embeddings x  (6 × 16)"


def test_default_charts_specs(default):
    scores = chart(default, "scores ω")
    assert len(scores["data"]) == 1 and scores["data"][0]["type"] == "heatmap"
    assert scores["layout"]["yaxis"]["title"]["text"] == "query (row)"
    assert scores["layout"]["xaxis"]["title"]["text"] == "key (column)"
    assert scores["layout"]["title"]["text"] == "scores ω  (6 × 6)"
    assert scores["data"][0]["y"][1] == "1:is"
    weights_bar = chart(default, "weights of query 1:is")
    assert weights_bar["data"][0]["type"] == "bar" and weights_bar["data"][0]["text"][4] == "0.4917"
    assert chart(default, "embeddings x")["layout"]["title"]["text"] == "embeddings x  (6 × 16)"
    assert chart(default, "W_v")["layout"]["title"]["text"] == "W_v  (28 × 16)"
    assert chart(default, "concatenated heads")["layout"]["title"]["text"] == "concatenated heads  (6 × 56)"
    assert chart(default, "head 1: attention weights")
    assert chart(default, "raw x·xᵀ")
    assert len(default.get("download_button")) >= 10  # every heatmap offers its numbers as CSV


def test_url_state_is_used_and_written():
    at = run({"hand_seed": "7", "hand_heads": "3", "hand_query": "4:dessert", "hand_d": "999"})
    assert not at.exception
    assert at.number_input(key="hand_seed").value == 7
    assert at.number_input(key="hand_d").value == 16  # out of range in the URL: default kept
    assert at.selectbox(key="hand_query").value == "4:dessert"
    assert chart(at, "head 2: attention weights")
    assert "8.5808" not in all_text(at)  # another seed, other numbers
    assert at.query_params["hand_seed"] == ["7"] or at.query_params["hand_seed"] == "7"


@pytest.mark.parametrize(
    "key, value, check",
    [
        ("hand_seed", 1, lambda at: "8.5808" not in all_text(at)),
        ("hand_d", 4, lambda at: chart(at, "embeddings x")["layout"]["title"]["text"].endswith("(6 × 4)")),
        ("hand_dq", 5, lambda at: chart(at, "queries")["layout"]["title"]["text"].endswith("(6 × 5)")),
        ("hand_dv", 3, lambda at: chart(at, "context z")["layout"]["title"]["text"].endswith("(6 × 3)")),
        ("hand_heads", 1, lambda at: at.info and "Heads above 1" in at.info[0].value),
        ("hand_tokenizer", "spacy", lambda at: chart(at, "scores ω")["data"][0]["x"][3] == "3:,"),
        ("hand_query", "4:dessert", lambda at: chart(at, "weights of query 4:dessert")),
        ("hand_plain_scale", True, lambda at: chart(at, "weights  (6 × 6)")),
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
    assert chart(at, "scores ω")["data"][0]["x"] == ["0:the", "1:cat", "2:saw", "3:the", "4:dog"]
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
    assert not at.get("plotly_chart")


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
    spec = chart(at, "scores ω")
    assert len(spec["data"][0]["x"]) == len(set(spec["data"][0]["x"]))
    assert all("<script" not in label for label in spec["data"][0]["x"])  # shown as text, not markup
    assert not any("<script" in m.value for m in at.markdown)


def test_long_input_is_capped_with_a_note():
    at = run(hand_sentence="word " * 999 + "words")  # 5,000 characters
    assert not at.exception
    notes = " ".join(i.value for i in at.info)
    assert "5,000 characters" in notes and "only the first 40" in notes
    assert chart(at, "scores ω")["layout"]["title"]["text"] == "scores ω  (40 × 40)"


def test_matrix_tables_are_drawn_only_in_their_tab(default):
    """A step's Heatmap/Table tabs draw only the chosen one (the table grid is costly in the browser)."""
    embeddings = lambda at: [df.value for df in at.dataframe if df.value.shape == (6, 16)]  # 6 tokens, d = 16
    assert chart(default, "embeddings x") and not embeddings(default)
    at = run(**{"hand-x-tab": "Table"})
    assert not at.exception
    [x] = embeddings(at)
    assert list(x.index) == ["0:Life", "1:is", "2:short", "3:eat", "4:dessert", "5:first."]
    assert not [t for t in titles(at) if t.startswith("embeddings x")]


def test_a_2000_character_word_is_cut_on_the_axes():
    at = run({"hand_sentence": "a " + "x" * 1990 + " b"})
    assert not at.exception
    scores = chart(at, "scores ω")
    assert all(len(label) <= 24 for label in scores["data"][0]["y"])
    assert scores["layout"]["margin"]["l"] < 400  # the heatmap is not squeezed by its labels


def test_one_word_sentence_says_word_and_token():
    at = run({"hand_sentence": "hello"})
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "(1 word)" in captions and "(1 token)" in captions and "1 words" not in captions
