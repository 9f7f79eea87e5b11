"""AppTest of the translator page on a tiny random checkpoint: default run, every control, bad
input, URL state, chart specs of the three attention kinds, teacher forcing. Missing and corrupt
checkpoints: tests/test_faults.py."""

from functools import partial

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fixtures.tiny import TRANSLATOR
from tests import apptest
from tests.apptest import chart, charts, explorer, explorers, kind, run_on, url

PAGE = apptest.page("translator")
run = partial(apptest.run, PAGE)
SOURCE = ["0:&lt;sos&gt;", "1:ein", "2:mann", "3:fährt", "4:fahrrad", "5:.", "6:&lt;eos&gt;"]
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


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


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.text_input(key="tr_text").value == "ein mann fährt fahrrad ."
    assert len(default.text) >= 1 and default.text[0].value  # the translation, as plain text
    labels = [b.proto.label for b in default.get("download_button")]
    assert labels[:2] == ["Download as interactive HTML", "Download every weight (CSV)"]


def test_the_explorer_gets_every_kind_layer_and_head_cross_first(default):
    payload = explorer(default)
    assert [k["name"] for k in payload["kinds"]] == ["cross", "encoder", "decoder"]
    cross, enc, dec = (kind(payload, n) for n in ("cross", "encoder", "decoder"))
    assert (enc["layers"], enc["heads"]) == (TRANSLATOR.enc_layers, TRANSLATOR.heads)
    assert (cross["layers"], dec["layers"]) == (TRANSLATOR.dec_layers, TRANSLATOR.dec_layers)
    assert cross["query_axis"] == "query = English" and cross["key_axis"] == "key = German"
    assert cross["keys"] == enc["keys"] == ["<sos>", "ein", "mann", "fährt", "fahrrad", ".", "<eos>"]
    assert dec["keys"][0] == "<sos>" and cross["queries"] == dec["queries"]
    T = len(dec["queries"])
    assert dec["mask"] == "".join("1" if j <= i else "0" for i in range(T) for j in range(T))  # causal
    for name, w in payload["arrays"].items():
        assert np.allclose(w.sum(-1), 1, atol=1e-5), name
        assert payload["state"]["kind"] == "cross"


def test_decoding_step_charts(default):
    assert not charts(default)  # the step section is drawn only when opened
    bar = chart(run(tr_steps=True), "mean over heads: German words")
    assert bar["data"][0]["x"] == SOURCE and "key = German" in bar["layout"]["xaxis"]["title"]["text"]


def test_teacher_forced_view_on_the_reference():
    at = run(tr_steps=True)
    at.toggle(key="tr_forced").set_value(True).run()
    assert not at.exception
    assert at.text_input(key="tr_reference").value == "a man rides a bike ."
    assert any("Teacher-forced" in i.value for i in at.info)
    payload = explorer(at)
    assert kind(payload, "cross")["queries"] == ["a", "man", "rides", "a", "bike", ".", "<eos>"]
    assert kind(payload, "decoder")["keys"] == ["<sos>", "a", "man", "rides", "a", "bike", "."]
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
        "tr_kind": "encoder",
        "tr_layer": "1",
        "tr_head": "99",
        "tr_view": "grid",
    }
    at = run(query)
    assert not at.exception
    assert at.text_input(key="tr_text").value == "zwei hunde spielen im schnee ."
    assert at.selectbox(key="tr_example").value is None  # the examples box reads "Pick an example…" again
    assert at.radio(key="tr_decoding").value == "beam" and at.slider(key="tr_beam").value == 3
    state = explorer(at)["state"]
    assert (state["kind"], state["layer"], state["head"], state["view"]) == ("encoder", 1, TRANSLATOR.heads - 1, "grid")
    assert url(at, "tr_beam") == "3"


@pytest.mark.parametrize(
    "widget, key, value, state",
    [
        ("text_input", "tr_text", "ein junge springt ins wasser .", {}),
        ("selectbox", "tr_example", "drei männer stehen vor einem gebäude .", {}),
        ("radio", "tr_decoding", "beam", {}),
        ("slider", "tr_beam", 8, {"tr_decoding": "beam"}),  # disabled while decoding is greedy
        ("toggle", "tr_forced", True, {}),
        ("text_input", "tr_reference", "two dogs play in the snow .", {"tr_forced": True}),
        ("slider", "tr_step", 4, {"tr_steps": True}),
    ],
)
def test_each_control(widget, key, value, state):
    at = run(**state)
    w = getattr(at, widget)(key=key)
    (w.input(value) if widget == "text_input" else w.set_value(value)).run()
    assert not at.exception
    assert at.session_state[key] == (None if key == "tr_example" else value)  # the examples box empties again
    if key == "tr_example":
        assert at.text_input(key="tr_text").value == value
        assert at.session_state["tr_reference"] == "three men stand in front of a building ."
        assert kind(explorer(at), "encoder")["keys"][1:3] == ["drei", "männer"]
    if key == "tr_reference":
        assert kind(explorer(at), "cross")["queries"][:2] == ["two", "dogs"]


def test_markup_is_sent_as_text_and_escaped_in_charts_and_messages():
    at = run(tr_text="<script>alert(1)</script> ein mann", tr_steps=True)
    assert not at.exception
    keys = kind(explorer(at), "encoder")["keys"]
    assert keys[1].startswith("<") and keys[1].endswith("(unk)")  # text for textContent, not markup
    labels = chart(at, "mean over heads: German words")["data"][0]["x"]
    assert all("<" not in label for label in labels)
    assert all("<script>" not in w.value for w in at.warning)


def test_empty_reference_warns():
    at = run(tr_forced=True, tr_reference="   ")
    assert not at.exception
    assert any("reference translation is empty" in w.value for w in at.warning)
    assert explorer(at)  # the model's own translation is still shown


def test_unknown_words_in_the_reference_are_named():
    at = run(tr_forced=True, tr_reference="a man rides a zyxwv .")
    assert not at.exception
    assert any("zyxwv" in w.value and "reference" in w.value for w in at.warning)


def test_compare_with_a_hub_model_says_when_the_hub_cannot_be_reached(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run(tr_hub=True, tr_hub_id="Helsinki-NLP/opus-mt-de-en")
    assert not at.exception
    assert explorer(at)  # our translator's explorer is still there
    assert any("Hugging Face Hub" in e.value for e in at.error), [e.value for e in at.error]


def test_compare_with_a_local_hub_folder(tmp_path):
    from fixtures.hub_tiny import save_all

    folders = save_all(tmp_path)
    at = run(tr_hub=True, tr_hub_id=str(folders["marian"]))
    assert not at.exception, at.exception
    assert len(explorers(at)) == 2 and [k["name"] for k in explorers(at)[1]["kinds"]] == ["cross"]


def test_no_downloads_when_the_input_gives_no_explorer():
    """Issue 36, item 5: an input with no word the model knows leaves nothing to download."""
    at = run(tr_text="😀 🎬")
    assert not at.exception and any("None of the" in w.value for w in at.warning)
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download as interactive HTML" not in labels and "Download every weight (CSV)" not in labels


def test_one_unknown_reference_word_is_counted_in_agreement():
    """Issue 36, item 6: "1 word of the reference is ... and was read", not "word(s) ... are"."""
    at = run(tr_forced=True, tr_reference="a man qwertyuiop .")
    said = [w.value for w in at.warning]
    assert any("1 word of the reference is not in the English vocabulary and was read as" in w for w in said), said
