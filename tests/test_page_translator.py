"""AppTest of the translator page on a tiny random checkpoint: default run, every control, bad
input, URL state, chart specs of the three attention kinds, teacher forcing. Missing and corrupt
checkpoints: tests/test_faults.py."""

import json
from functools import partial

import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import chart, charts, run_on, titles
from tests.tiny import TRANSLATOR

PAGE = apptest.page("translator")
run = partial(apptest.run, PAGE)
SOURCE = ["0:&lt;sos&gt;", "1:ein", "2:mann", "3:fährt", "4:fahrrad", "5:.", "6:&lt;eos&gt;"]
pytestmark = pytest.mark.usefixtures("app_env")


def grids(at: AppTest) -> list[dict]:
    return [c for c in charts(at) if "attention per layer and head" in c["layout"]["title"]["text"]]


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.text_input(key="tr_text").value == "ein mann fährt fahrrad ."
    assert len(default.text) == 1  # the translation, as plain text
    assert default.radio(key="tr_kind").value == "cross"  # one attention kind at a time, cross first
    assert default.radio(key="tr_show").value == "head"  # and one view of it: a new sentence redraws one chart
    assert [t[:16] for t in titles(default)][:1] == ["layer 0 · head 0"]  # then the decoding step's three
    assert not default.tabs
    labels = [b.proto.label for b in default.get("download_button")]
    assert labels == ["Download CSV", "Download this view as HTML"]


def test_grids_have_one_heatmap_per_layer_and_head():
    at = run(tr_show="grid")
    [cross] = grids(at)
    [encoder] = grids(at.radio(key="tr_kind").set_value("encoder").run())
    [decoder] = grids(at.radio(key="tr_kind").set_value("decoder").run())
    assert at.query_params["tr_kind"] in ("decoder", ["decoder"])
    H = TRANSLATOR.heads
    assert [t["type"] for t in encoder["data"]] == ["heatmap"] * (TRANSLATOR.enc_layers * H)
    assert len(decoder["data"]) == len(cross["data"]) == TRANSLATOR.dec_layers * H
    assert encoder["data"][0]["x"] == encoder["data"][0]["y"] == SOURCE
    assert cross["data"][0]["x"] == SOURCE
    assert "query = English" in json.dumps(cross["layout"]) and "key = German" in json.dumps(cross["layout"])
    views = [run(tr_show=show) for show in ("head", "mean")]
    for spec in charts(at) + [c for v in views for c in charts(v)]:
        layout = json.dumps(spec["layout"])
        assert "query" in layout and "key" in layout, spec["layout"]["title"]["text"]
        assert "query" in spec["data"][0]["hovertemplate"] or "head" in spec["data"][0]["hovertemplate"]


def test_cross_attention_axes_and_step_highlight(default):
    cross = chart(default, "layer 0 · head 0")
    assert cross["layout"]["yaxis"]["title"]["text"] == "query = English (row)"
    assert cross["layout"]["xaxis"]["title"]["text"] == "key = German (column)"
    bar = chart(default, "mean over heads: German words")
    assert bar["data"][0]["x"] == SOURCE and "key = German" in bar["layout"]["xaxis"]["title"]["text"]


def test_teacher_forced_view_on_the_reference():
    at = run(tr_show="grid")
    at.toggle(key="tr_forced").set_value(True).run()
    assert not at.exception
    assert at.text_input(key="tr_reference").value == "a man rides a bike ."
    assert any("Teacher-forced" in i.value for i in at.info)
    [cross] = grids(at)
    [decoder] = grids(at.radio(key="tr_kind").set_value("decoder").run())
    assert cross["data"][0]["y"] == ["0:a", "1:man", "2:rides", "3:a", "4:bike", "5:.", "6:&lt;eos&gt;"]
    assert decoder["data"][0]["x"] == ["0:&lt;sos&gt;", "1:a", "2:man", "3:rides", "4:a", "5:bike", "6:."]
    at.slider(key="tr_step").set_value(3).run()
    assert not at.exception
    assert any("wrote **rides**" in c.value for c in at.caption)
    heads = chart(at, "decoder self-attention of 2:rides")  # decoder self-attention at step 3 sees 3 inputs
    assert heads["data"][0]["x"] == ["0:&lt;sos&gt;", "1:a", "2:man"]


def test_url_state_is_used_and_written():
    query = {
        "tr_text": "zwei hunde spielen im schnee .",
        "tr_decoding": "beam",
        "tr_beam": "3",
        "tr_layer": "2",
        "tr_kind": "encoder",
    }
    at = run({**query, "tr_head": "99"})
    assert not at.exception
    assert at.selectbox(key="tr_example").value == "zwei hunde spielen im schnee ."
    assert at.radio(key="tr_decoding").value == "beam" and at.slider(key="tr_beam").value == 3
    assert at.selectbox(key="tr_layer").value == 0  # the encoder has 2 layers: no layer 2, so the first
    assert at.selectbox(key="tr_head").value == 0  # no head 99 either
    assert at.radio(key="tr_kind").value == "encoder"
    assert at.query_params["tr_beam"] in ("3", ["3"])
    assert at.query_params["tr_show"] in ("head", ["head"])


@pytest.mark.parametrize(
    "kind, key, value, state",
    [
        ("text_input", "tr_text", "ein junge springt ins wasser .", {}),
        ("selectbox", "tr_example", "drei männer stehen vor einem gebäude .", {"tr_show": "grid"}),
        ("radio", "tr_decoding", "beam", {}),
        ("slider", "tr_beam", 8, {"tr_decoding": "beam"}),  # disabled while decoding is greedy
        ("toggle", "tr_forced", True, {}),
        ("text_input", "tr_reference", "two dogs play in the snow .", {"tr_forced": True, "tr_show": "grid"}),
        ("selectbox", "tr_layer", 2, {}),
        ("selectbox", "tr_head", 3, {}),
        ("slider", "tr_step", 4, {}),
        ("radio", "tr_kind", "encoder", {"tr_show": "grid"}),
        ("radio", "tr_show", "grid", {}),
        ("radio", "tr_show", "mean", {}),
    ],
)
def test_each_control(kind, key, value, state):
    at = run(**state)
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception
    assert at.session_state[key] == value
    if key == "tr_example":
        assert at.text_input(key="tr_text").value == value
        assert grids(at)[0]["data"][0]["x"][1:3] == ["1:drei", "2:männer"]
    if key == "tr_head":
        assert chart(at, "layer 0 · head 3")
    if key == "tr_reference":
        assert grids(at)[0]["data"][0]["y"][:2] == ["0:two", "1:dogs"]
    if key == "tr_show":
        assert len(charts(at)) == 4  # one view of the attention, three of the decoding step
    if key == "tr_kind":
        assert grids(at)[0]["data"][0]["y"][1:3] == ["1:ein", "2:mann"]


@pytest.mark.parametrize(
    "text, kind, message",
    [
        ("", "warning", "empty"),
        ("  ", "warning", "empty"),
        ("😀 🚲", "warning", "None of the words"),
        ("qwertz asdfg", "warning", "None of the words"),
        ("<script>alert(1)</script> ein mann", "warning", "not in the vocabulary"),
        ("ein mann " * 400, "info", "only the first 2,000"),
        ("ein mann fährt fahrrad und ein junge springt ins wasser .", "info", f"at most {TRANSLATOR.max_len - 2}"),
    ],
)
def test_bad_input_gives_a_message(text, kind, message):
    at = run(tr_text=text)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_escaped_in_charts_and_messages():
    at = run(tr_text="<script>alert(1)</script> ein mann", tr_show="grid")
    assert not at.exception
    labels = grids(at)[0]["data"][0]["x"]
    assert labels[1].startswith("1:&lt;") and all("<" not in label for label in labels)
    assert all("<script>" not in w.value for w in at.warning)


def test_empty_reference_warns():
    at = run(tr_forced=True, tr_reference="   ", tr_show="grid")
    assert not at.exception
    assert any("reference translation is empty" in w.value for w in at.warning)
    assert grids(at)  # the model's own translation is still shown
