"""AppTest of the sentiment classifier page on a tiny random checkpoint: default run, every control,
bad input, URL state and chart specs (a missing or corrupt checkpoint: tests/test_faults.py)."""

from functools import partial

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fixtures.tiny import CLASSIFIER
from tests import apptest
from tests.apptest import chart, explorer, kind, run_on, titles, url

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
    assert default.selectbox(key="cls_example").value is None  # "Pick an example…"
    labels = [b.proto.label for b in default.get("download_button")]
    assert labels == ["Download as interactive HTML", "Download every weight (CSV)"]


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


def test_the_explorer_gets_every_layer_and_head_once(default):
    payload = explorer(default)
    [enc] = payload["kinds"]
    assert (enc["layers"], enc["heads"]) == (CLASSIFIER.layers, CLASSIFIER.heads)
    assert enc["queries"] == enc["keys"] == "the acting is wonderful but the plot is thin".split()
    w = payload["arrays"]["encoder"]
    assert np.allclose(w.sum(-1), 1, atol=1e-5)  # every row of every head sums to 1
    assert payload["rollout"] is not None and payload["state"]["view"] == "heatmap"
    assert titles(default) == []  # the rollout bar is drawn only when its section is opened
    assert titles(run(cls_reach=True)) == [
        "how much each word reaches the pooled sentence vector that the classifier reads"
    ]


def test_url_state_opens_the_same_view_clamped_to_what_exists():
    at = run({"cls_text": "not bad at all", "cls_view": "mean", "cls_layer": "1", "cls_head": "9"})
    assert not at.exception
    assert at.text_input(key="cls_text").value == "not bad at all"
    state = explorer(at)["state"]
    assert (state["view"], state["layer"], state["head"]) == ("mean", 1, CLASSIFIER.heads - 1)  # no head 9: the last
    assert url(at, "cls_text") == "not bad at all"


@pytest.mark.parametrize(
    "widget, key, value, check",
    [
        (
            "text_input",
            "cls_text",
            "i loved every minute of it",
            lambda at: kind(explorer(at), "encoder")["keys"][:2] == ["i", "loved"],
        ),
        (
            "selectbox",
            "cls_example",
            "not bad at all",
            lambda at: at.text_input(key="cls_text").value == "not bad at all",
        ),
        ("toggle", "cls_hide", True, lambda at: "no special tokens" in " ".join(c.value for c in at.caption)),
    ],
)
def test_each_control(widget, key, value, check):
    at = run()
    w = getattr(at, widget)(key=key)
    (w.input(value) if widget == "text_input" else w.set_value(value)).run()
    assert not at.exception
    assert check(at)


def test_an_example_fills_the_box_and_the_picker_empties_again():
    at = run()
    at.selectbox(key="cls_example").set_value("not bad at all").run()
    assert at.text_input(key="cls_text").value == "not bad at all"
    assert at.selectbox(key="cls_example").value is None  # it mirrors nothing, so it never reads stale
    at.text_input(key="cls_text").input("not bad at all , really").run()
    assert kind(explorer(at), "encoder")["keys"][-1].startswith("really")
    assert at.selectbox(key="cls_example").value is None


def test_hide_special_tokens_drops_unknown_words_and_renormalises():
    at = run(cls_text="the zzyzx plot is wonderful")
    assert not at.exception
    assert any("zzyzx" in w.value for w in at.warning)
    assert "zzyzx (unk)" in kind(explorer(at), "encoder")["keys"]
    at.toggle(key="cls_hide").set_value(True).run()
    assert not at.exception
    payload = explorer(at)
    assert kind(payload, "encoder")["keys"] == ["the", "plot", "is", "wonderful"]
    assert np.allclose(payload["arrays"]["encoder"].sum(-1), 1, atol=1e-5)


def test_markup_is_sent_as_text_never_as_html():
    at = run(cls_text="<script>alert(1)</script> the plot is <b>wonderful</b>")
    assert not at.exception
    keys = kind(explorer(at), "encoder")["keys"]
    assert "alert(1)</script (unk)" in keys  # the component draws tokens as text (textContent): sent as typed
    assert all("<script>" not in w.value for w in at.warning)


def test_projector_mode_reaches_the_explorer_and_the_charts():
    big = run(projector=True, cls_reach=True)
    assert not big.exception
    assert explorer(big)["projector"] is True
    normal = chart(run(cls_reach=True), "how much each word")["layout"]["font"]["size"]
    assert chart(big, "how much each word")["layout"]["font"]["size"] > normal


def test_a_confidence_has_no_delta_arrow(default):
    """A confidence is not a change: no ↑ beside "79.2% confident", whatever the label."""
    from streamlit.proto.Metric_pb2 import Metric

    metric = default.metric[0]
    assert metric.proto.delta.endswith("confident")
    assert metric.proto.direction == Metric.MetricDirection.NONE


@pytest.mark.parametrize("text", ["😀 🎬", "   "])
def test_no_downloads_when_the_input_gives_no_explorer(text):
    """Issue 36, item 5: nothing to download, so no download buttons (a browser test covers the rerun of
    the input's fragment alone)."""
    at = run(cls_text=text)
    assert not at.exception and at.warning
    assert not at.get("bidi_component") and not at.get("download_button")


@pytest.mark.parametrize(
    "text, said",
    [
        ("qwertyuiop wonderful", "1 word of the sentence is not in the vocabulary and was read as"),
        ("qwertyuiop asdfgh wonderful", "2 words of the sentence are not in the vocabulary and were read as"),
    ],
)
def test_unknown_words_are_counted_in_agreement(text, said):
    """Issue 36, item 6: "1 word ... is", never "1 word ... are"."""
    at = run(cls_text=text)
    assert any(said in w.value for w in at.warning), [w.value for w in at.warning]
