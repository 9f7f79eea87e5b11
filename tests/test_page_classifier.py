"""AppTest of the sentiment classifier page on a tiny random checkpoint: default run, every control,
bad input, URL state and chart specs (a missing or corrupt checkpoint: tests/test_faults.py)."""

import json
from functools import partial

import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import axis_titles, chart, charts, run_on, titles
from tests.tiny import CLASSIFIER

PAGE = apptest.page("classifier")
run = partial(apptest.run, PAGE)
CELLS = CLASSIFIER.layers * CLASSIFIER.heads
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.text_input(key="cls_text").value == "the acting is wonderful but the plot is thin"
    assert default.metric[0].value in ("negative", "positive")
    assert len(default.get("progress")) == 2
    assert [b.proto.label for b in default.get("download_button")] == ["Download CSV", "Download this view as HTML"]


def test_one_view_at_a_time(default):
    assert default.radio(key="cls_show").value == "head"
    assert titles(default) == ["layer 0 · head 0"]  # a new sentence redraws one chart
    grid = run(cls_show="grid")
    [title] = titles(grid)
    assert title.startswith("attention per layer and head")
    assert [s.key for s in grid.selectbox] == ["cls_example"]  # layer and head belong to the views using them


def test_chart_specs(default):
    views = {show: run(cls_show=show) for show in ("grid", "mean", "rollout")}
    grid = chart(views["grid"], "attention per layer and head")
    assert [t["type"] for t in grid["data"]] == ["heatmap"] * CELLS
    assert "query" in axis_titles(grid, "yaxis") and "key" in axis_titles(grid, "xaxis")
    labels = grid["data"][0]["x"]
    assert labels[0] == "0:the" and labels[5] == "5:the" and len(set(labels)) == len(labels)
    specs = charts(default) + [c for at in views.values() for c in charts(at)]
    assert len(specs) == 5
    for spec in specs:
        assert "query" in json.dumps(spec["layout"]) and "key" in json.dumps(spec["layout"]), spec["layout"]["title"]
        assert spec["layout"]["font"]["size"] >= 12
        assert "query" in spec["data"][0]["hovertemplate"]
    assert chart(default, "layer 0 · head 0")["data"][0]["type"] == "heatmap"
    assert chart(views["mean"], "layer 0: mean over the 3 heads")
    rollout = chart(views["rollout"], "attention rollout through 2 layers")
    assert all(abs(sum(row) - 1) < 1e-3 for row in rollout["data"][0]["z"])
    assert chart(views["rollout"], "how much each word reaches")


def test_url_state_is_used_and_written():
    at = run({"cls_text": "not bad at all", "cls_show": "head", "cls_layer": "1", "cls_head": "9"})
    assert not at.exception
    assert at.text_input(key="cls_text").value == "not bad at all"
    assert at.selectbox(key="cls_layer").value == 1
    assert at.selectbox(key="cls_head").value == 0  # no head 9: the first head instead
    assert chart(at, "layer 1 · head 0")
    assert at.query_params["cls_text"] in ("not bad at all", ["not bad at all"])
    assert at.query_params["cls_show"] in ("head", ["head"])


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        ("text_input", "cls_text", "i loved every minute of it", lambda at: at.metric),
        (
            "selectbox",
            "cls_example",
            "not bad at all",
            lambda at: at.text_input(key="cls_text").value == "not bad at all",
        ),
        ("selectbox", "cls_layer", 1, lambda at: chart(at, "layer 1 · head 0")),
        ("selectbox", "cls_head", 2, lambda at: chart(at, "layer 0 · head 2")),
        ("radio", "cls_show", "mean", lambda at: [t[:14] for t in titles(at)] == ["layer 0: mean "]),
        ("radio", "cls_show", "rollout", lambda at: chart(at, "attention rollout")),
        ("toggle", "cls_hide", True, lambda at: "no special tokens" in " ".join(c.value for c in at.caption)),
    ],
)
def test_each_control(kind, key, value, check):
    at = run()
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)


def test_hide_special_tokens_drops_unknown_words_and_renormalises():
    at = run(cls_text="the zzyzx plot is wonderful")
    assert not at.exception
    assert any("zzyzx" in w.value for w in at.warning)
    assert "1:zzyzx (unk)" in chart(at, "layer 0 · head 0")["data"][0]["x"]
    at.toggle(key="cls_hide").set_value(True).run()
    assert not at.exception
    head = chart(at, "layer 0 · head 0")["data"][0]
    assert head["x"] == ["0:the", "1:plot", "2:is", "3:wonderful"]
    assert all(abs(sum(row) - 1) < 1e-3 for row in head["z"])
    at.radio(key="cls_show").set_value("grid").run()
    grid = chart(at, "attention per layer and head")
    assert len(grid["data"]) == CELLS and grid["data"][0]["x"] == head["x"]


@pytest.mark.parametrize(
    "text, kind, message",
    [
        ("", "warning", "empty"),
        ("   \t ", "warning", "empty"),
        ("😀 🎬", "warning", "None of the words"),
        ("qwertyuiop asdfgh", "warning", "None of the words"),
        ("<script>alert(1)</script> wonderful", "warning", "not in the vocabulary"),
        ("wonderful " * 500, "info", "only the first 2,000"),
        (" ".join(["the plot is thin"] * 6), "info", f"at most {CLASSIFIER.max_len} words"),
    ],
)
def test_bad_input_gives_a_message(text, kind, message):
    at = run(cls_text=text)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_never_rendered_as_html():
    at = run(cls_text="<script>alert(1)</script> the plot is <b>wonderful</b>")
    assert not at.exception
    labels = chart(at, "layer 0 · head 0")["data"][0]["x"]
    assert labels[0].startswith("0:&lt;") and all("<" not in label for label in labels)
    assert all("<script>" not in w.value for w in at.warning)


def test_projector_mode_draws_larger_chart_fonts(default):
    big = run(projector=True)
    assert not big.exception
    normal, large = chart(default, "layer 0 · head 0"), chart(big, "layer 0 · head 0")
    assert large["layout"]["font"]["size"] > normal["layout"]["font"]["size"]
    assert large["layout"]["height"] > normal["layout"]["height"]


def test_the_chosen_head_survives_a_trip_through_other_views():
    at = run()
    at.selectbox(key="cls_layer").set_value(1).run()
    at.selectbox(key="cls_head").set_value(2).run()
    at.radio(key="cls_show").set_value("grid").run()
    at.radio(key="cls_show").set_value("head").run()
    assert not at.exception
    assert at.selectbox(key="cls_layer").value == 1 and at.selectbox(key="cls_head").value == 2
    assert chart(at, "layer 1 · head 2")
