"""AppTest of the head-profiles page on tiny random checkpoints: default run, every control, URL
state, bad input and escaping (a missing checkpoint: tests/test_faults.py)."""

from functools import partial

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.analysis.profiles import head_profiles
from model.analysis.runs import run as run_model
from model.training.checkpoint import load_checkpoint
from tests import apptest
from tests.apptest import chart, explorer, run_on, titles, url
from tests.tiny import CLASSIFIER, TRANSLATOR

PAGE = apptest.page("profiles")
run = partial(apptest.run, PAGE)
HEADS = CLASSIFIER.layers * CLASSIFIER.heads
pytestmark = pytest.mark.usefixtures("app_env")


def table(at: AppTest, key: str):
    """``"pro-table"`` (every head) or ``"pro-nearest"`` (the heads like the chosen one, with distances)."""
    nearest = key == "pro-nearest"
    return next(df.value for df in at.dataframe if ("distance" in df.value.columns) == nearest)


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    grid = chart(default, "entropy of every head")
    heat = grid["data"][0]
    assert heat["type"] == "heatmap" and np.array(heat["z"]).shape == (CLASSIFIER.layers, CLASSIFIER.heads)
    assert heat["y"] == ["layer 0", "layer 1"] and heat["x"] == ["head 0", "head 1", "head 2"]
    assert grid["layout"]["yaxis"]["title"]["text"] == "layer (row)"
    assert grid["layout"]["xaxis"]["title"]["text"] == "head (column)"
    assert grid["layout"]["shapes"], "the chosen head is framed"
    # 9 words: entropy lies between 0 and log2(9) bits
    assert all(0 <= v <= np.log2(9) + 1e-6 for row in heat["z"] for v in row)
    profiles = table(default, "pro-table")
    assert len(profiles) == HEADS
    assert list(profiles.columns) == ["layer", "head", "entropy", "previous", "self", "first", "special"]
    assert profiles["entropy"].is_monotonic_decreasing  # sorted by entropy, largest first
    nearest = table(default, "pro-nearest")
    assert len(nearest) == 4 and nearest["head"].iloc[0] == "layer 0 · head 0"
    assert nearest["distance"].iloc[0] == 0 and nearest["distance"].iloc[1:].is_monotonic_increasing
    lines = chart(default, "layer 0 · head 0 and its nearest heads")
    assert [t["type"] for t in lines["data"]] == ["scatter"] * 4
    [head_map] = explorer(default)["kinds"]  # the chosen head, in the explorer
    assert head_map["keys"][0] == "the" and (head_map["layers"], head_map["heads"]) == (1, 1)
    assert head_map["query_axis"] == "query" and "layer 0 · head 0" in head_map["title"]


def test_profiles_match_the_model_functions(default, checkpoints):
    """The table shows head_profiles of the model's own attention."""
    ck = load_checkpoint(checkpoints / "classifier")
    view = run_model(ck, "the acting is wonderful but the plot is thin").kinds["encoder"]
    expected = head_profiles(view.weights, special=view.special).metrics["self"]
    shown = table(default, "pro-table").set_index(["layer", "head"])["self"]
    assert len(shown) == HEADS
    for (layer, head), value in shown.items():
        assert value == pytest.approx(expected[layer, head], abs=1e-6)


def test_url_state_is_used_and_written():
    at = run(
        {"pro_task": "translator", "pro_kind": "cross", "pro_metric": "monotonic", "pro_head": "1-2", "pro_k": "2"}
    )
    assert not at.exception
    assert at.selectbox(key="pro_task").value == "translator"
    assert at.text_area(key="pro_text").value == "eine frau liest ein buch im park ."
    assert at.radio(key="pro_kind").value == "cross"
    grid = chart(at, "monotonic of every head (cross-attention")
    assert np.array(grid["data"][0]["z"]).shape == (TRANSLATOR.dec_layers, TRANSLATOR.heads)
    profiles = table(at, "pro-table")
    assert "monotonic" in profiles.columns and "self" not in profiles.columns
    assert table(at, "pro-nearest")["head"].tolist()[0] == "layer 1 · head 2" and len(table(at, "pro-nearest")) == 3
    assert url(at, "pro_metric") == "monotonic" and url(at, "pro_head") == "1-2"


def test_bad_url_values_fall_back():
    at = run({"pro_task": "nope", "pro_metric": "zzz", "pro_head": "9-9", "pro_k": "99", "pro_kind": "cross"})
    assert not at.exception
    assert at.selectbox(key="pro_task").value == "classifier"
    assert at.selectbox(key="pro_metric").value == "entropy"
    assert at.selectbox(key="pro_head").value == "0-0"
    assert 1 <= at.slider(key="pro_k").value <= HEADS - 1


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        ("selectbox", "pro_task", "generator", lambda at: at.text_area(key="pro_text").value.startswith("ROMEO")),
        ("text_area", "pro_text", "not bad at all", lambda at: explorer(at)["kinds"][0]["keys"] == ["not", "bad", "at", "all"]),
        ("selectbox", "pro_metric", "first", lambda at: chart(at, "first of every head")["data"][0]["zmax"] == 1),
        ("selectbox", "pro_sort", "self", lambda at: table(at, "pro-table")["self"].is_monotonic_decreasing),
        ("toggle", "pro_desc", False, lambda at: table(at, "pro-table")["entropy"].is_monotonic_increasing),
        ("selectbox", "pro_head", "1-1", lambda at: table(at, "pro-nearest")["head"].iloc[0] == "layer 1 · head 1"),
        ("slider", "pro_k", 5, lambda at: len(table(at, "pro-nearest")) == 6),
    ],
)  # fmt: skip
def test_each_control(kind, key, value, check):
    at = run()
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind in ("text_input", "text_area") else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)
    assert url(at, key) == str(value)


def test_translator_kinds():
    at = run(pro_task="translator", pro_text="ein mann fährt fahrrad .")
    assert not at.exception and not at.warning
    assert len(at.radio(key="pro_kind").options) == 3 and at.radio(key="pro_kind").value == "encoder"
    assert len(table(at, "pro-table")) == TRANSLATOR.enc_layers * TRANSLATOR.heads
    at.radio(key="pro_kind").set_value("decoder").run()
    assert len(table(at, "pro-table")) == TRANSLATOR.dec_layers * TRANSLATOR.heads
    assert "previous" in table(at, "pro-table").columns


@pytest.mark.parametrize(
    "task, text, kind, message",
    [
        ("classifier", "", "warning", "empty"),
        ("classifier", "  \n\t ", "warning", "empty"),
        ("classifier", "wonderful " * 500, "info", "only the first 2,000"),
        ("classifier", "😀 🎬", "warning", "None of the words"),
        ("classifier", "qwertyuiop asdfgh", "warning", "None of the words"),
        ("classifier", "<script>alert(1)</script> wonderful", "warning", "not in the vocabulary"),
        ("translator", "qqq zzz", "warning", "None of the words"),
        ("generator", "😀😀😀", "warning", "None of the characters"),
        ("generator", "x" * 5000, "info", "The model reads at most"),
    ],
)
def test_bad_input_gives_a_message(task, text, kind, message):
    at = run(pro_task=task, pro_text=text)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_never_rendered_as_html():
    at = run(pro_text="<script>alert(1)</script> the plot is <b>wonderful</b>")
    assert not at.exception
    keys = explorer(at)["kinds"][0]["keys"]  # drawn with textContent by the component
    assert any(k.startswith("<") for k in keys) and all("<" not in t for t in titles(at))
    assert all("<script>" not in w.value for w in at.warning)
