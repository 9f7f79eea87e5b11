"""AppTest of the minimal-pairs page on tiny random checkpoints: default run (lengths differ: an
explanation and the head means), an aligned pair (a B − A heatmap that equals the two sides
subtracted), every control, the three models, bad input and URL state (a missing checkpoint: tests/test_faults.py)."""

from functools import partial

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import chart, charts, explorers, run_on, titles
from tests.tiny import CLASSIFIER, GENERATOR, TRANSLATOR

PAGE = apptest.page("pairs")
run = partial(apptest.run, PAGE)
pytestmark = pytest.mark.usefixtures("app_env")


def z(trace: dict) -> np.ndarray:
    return np.array(trace["z"], dtype=float)


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run_shows_the_difference(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.text_input(key="pair_cls_a").value == "a good film"
    assert default.text_input(key="pair_cls_b").value == "a bad film"
    assert [m.label for m in default.metric] == ["A", "B", "B − A: P(positive)"]
    a, b = chart(default, "class probabilities")["data"]
    shown = default.metric[2].value
    assert shown.endswith(" pp") and shown[0] in "+-±"
    assert float(shown[1:-3]) * (-1 if shown[0] == "-" else 1) == pytest.approx(100 * (b["y"][1] - a["y"][1]), abs=0.06)
    assert not default.info  # a newcomer's first sight is the difference, not a note on lengths
    assert any(t.startswith("B − A") for t in titles(default))
    assert len(explorers(default)) == 2  # A and B, every layer and head
    labels = [b.proto.label for b in default.get("download_button")]
    assert labels.count("Download HTML") == 3 and labels[-1] == "Download this view as HTML"


def test_unequal_pair_explains_why_there_is_no_difference():
    at = run(pair_cls_a="a good film", pair_cls_b="not a good film")
    assert any(
        "needs A and B of equal lengths" in i.value and "3 × 3" in i.value and "4 × 4" in i.value for i in at.info
    )
    assert not any(t.startswith("B − A") for t in titles(at))


def test_chart_specs():
    default = run(pair_cls_a="a good film", pair_cls_b="not a good film")
    bars = chart(default, "class probabilities")
    assert [t["name"] for t in bars["data"]] == ["A", "B"] and bars["data"][0]["x"] == ["negative", "positive"]
    side = chart(default, "Self-attention, layer 0 · head 0: A and B")
    a, b = side["data"]
    assert a["x"] == ["0:a", "1:good", "2:film"] and b["x"] == ["0:not", "1:a", "2:good", "3:film"]
    assert a["coloraxis"] == b["coloraxis"] == "coloraxis"  # one colour scale for both
    assert all(abs(row.sum() - 1) < 1e-3 for row in z(a)) and all(abs(row.sum() - 1) < 1e-3 for row in z(b))
    assert side["layout"]["yaxis"]["title"]["text"] == "query (row)" and "title" not in side["layout"]["yaxis2"]
    assert side["layout"]["xaxis"]["title"]["text"] == side["layout"]["xaxis2"]["title"]["text"] == "key (column)"
    assert [ann["text"] for ann in side["layout"]["annotations"]] == ["A", "B"]
    mean = chart(default, f"Self-attention, layer 0: mean over the {CLASSIFIER.heads} heads")
    assert [len(t["x"]) for t in mean["data"]] == [3, 4]


def test_aligned_pair_shows_b_minus_a():
    at = run(pair_cls_a="a good film", pair_cls_b="a bad film")
    assert not at.exception and not at.info
    side = chart(at, "Self-attention, layer 0 · head 0: A and B")
    diff = chart(at, "B − A: self-attention, layer 0 · head 0")
    trace = diff["data"][0]
    assert trace["x"] == ["0:a", "1:good→bad", "2:film"] and trace["y"] == trace["x"]
    assert np.allclose(z(trace), z(side["data"][1]) - z(side["data"][0]), atol=2e-4)
    assert trace["zmid"] == 0 and trace["zmin"] == -trace["zmax"]
    assert "query" in diff["layout"]["yaxis"]["title"]["text"] and "key" in diff["layout"]["xaxis"]["title"]["text"]


def test_url_state_is_used_and_written():
    at = run({"pair_cls_a": "not bad at all", "pair_cls_b": "not good at all", "pair_layer": "1", "pair_head": "9"})
    assert not at.exception
    assert at.text_input(key="pair_cls_a").value == "not bad at all"
    assert at.selectbox(key="pair_layer").value == 1 and at.selectbox(key="pair_head").value == 0
    assert chart(at, "B − A: self-attention, layer 1 · head 0")
    assert at.query_params["pair_cls_b"] in ("not good at all", ["not good at all"])


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        ("text_input", "pair_cls_b", "a bad film", lambda at: chart(at, "B − A")["data"][0]["x"][1] == "1:good→bad"),
        ("text_input", "pair_cls_a", "i loved it", lambda at: chart(at, "Self-attention")["data"][0]["x"][0] == "0:i"),
        ("selectbox", "pair_layer", 1, lambda at: chart(at, "Self-attention, layer 1 · head 0: A and B")),
        ("selectbox", "pair_head", 2, lambda at: chart(at, "Self-attention, layer 0 · head 2: A and B")),
        ("radio", "pair_model", "generator", lambda at: chart(at, "next character: top 10 for A and B")),
    ],
)
def test_each_control(kind, key, value, check):
    at = run()
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)


def test_generator_pair():
    at = run(pair_model="generator")
    assert not at.exception and not at.warning
    bars = chart(at, "next character: top 10 for A and B")
    assert [t["name"] for t in bars["data"]] == ["A", "B"] and len(bars["data"][0]["x"]) == 10
    trace = chart(at, "B − A: causal self-attention, layer 0 · head 0")["data"][0]
    assert trace["x"][4] == "4:f→m" and trace["x"][3] == "3:␣"
    assert np.allclose(np.triu(z(trace), 1), 0)  # both causal
    assert np.allclose(z(trace)[:4], 0)  # "thy " is the same in both and cannot see what follows
    at.text_input(key="pair_gen_b").input("x" * (GENERATOR.block_size + 5)).run()
    assert not at.exception
    assert any("only the last" in i.value for i in at.info) and any("equal lengths" in i.value for i in at.info)
    assert [len(t["x"]) for t in chart(at, "Causal self-attention, layer 0 · head 0")["data"]] == [10, 40]


def test_translator_pair():
    at = run(pair_model="translator")
    assert not at.exception and not at.warning
    assert len(at.text) == 2
    assert at.radio(key="pair_kind").value == "cross"
    at.radio(key="pair_kind").set_value("encoder").run()
    assert not at.exception
    trace = chart(at, "B − A: encoder self-attention, layer 0 · head 0")["data"][0]
    assert trace["x"][:3] == ["0:&lt;sos&gt;", "1:ein→eine", "2:mann→frau"]
    assert "query = German" in chart(at, "B − A")["layout"]["yaxis"]["title"]["text"]
    at.selectbox(key="pair_layer").set_value(TRANSLATOR.enc_layers - 1).run()
    at.radio(key="pair_kind").set_value("decoder").run()
    assert not at.exception
    assert chart(at, f"Decoder self-attention, layer {TRANSLATOR.enc_layers - 1} · head 0: A and B")


@pytest.mark.parametrize(
    "state, kind, message",
    [
        ({"pair_cls_a": ""}, "warning", "input A is empty"),
        ({"pair_cls_b": "   \t "}, "warning", "input B is empty"),
        ({"pair_cls_b": "😀 🎬"}, "warning", "None of the words of input B"),
        ({"pair_cls_a": "qwertyuiop asdfgh"}, "warning", "None of the words of input A"),
        ({"pair_cls_a": "<script>alert(1)</script> good"}, "warning", "not in the vocabulary"),
        ({"pair_cls_b": "good " * 1000}, "info", "only the first 2,000"),
        ({"pair_model": "generator", "pair_gen_a": ""}, "warning", "input A is empty"),
        ({"pair_model": "generator", "pair_gen_b": "😀"}, "warning", "None of the characters of input B"),
        ({"pair_model": "translator", "pair_tr_b": "qwertz asdf"}, "warning", "None of the words of input B"),
    ],
)
def test_bad_input_gives_a_message(state, kind, message):
    at = run(**state)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_never_rendered_as_html():
    at = run(pair_cls_a="<b>a good film</b>", pair_cls_b="<script>alert(1)</script>")
    assert not at.exception
    for spec in charts(at):
        assert all("<" not in str(x) for t in spec["data"] for x in (t.get("x") or [])), spec["layout"]["title"]
    assert all("<script>" not in m.value and "<b>" not in m.value for m in [*at.warning, *at.info])
