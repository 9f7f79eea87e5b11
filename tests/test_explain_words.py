"""Issue 43, items 4, 5 and 9: the explanation of a clicked weight names its cell one way in its heading,
charts, steps and CSV (a decoder's row: the word written and the input read, both); a space or a newline
as a token is drawn visibly; the generator's causal attention is "decoder" in every caption and table; the
generator's step-by-step section follows the explorer's head; the glossary."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from model.analysis.explain import explain
from model.analysis.runs import generation_run, translation_run
from model.core.checkpoint import load_checkpoint
from model.core.specs import SPECS, hub_spec, kind_label
from pages.shared.explain import result_id
from pages.shared.glossary import CORE, TERMS, define, glossary_text
from tests import apptest
from tests.apptest import titles
from viz.common import plot_labels, shown_token
from viz.explain import explanation_frame, explanation_steps

pytestmark = pytest.mark.usefixtures("app_env")

PROMPT = "ROMEO: I\nam here"  # a space (key 6) before the query, a newline (8) after it
LENGTH = 20


def plain(text: str) -> str:
    """Markdown's escapes dropped: what a reader sees."""
    return text.replace("\\", "")


def click(at: AppTest, store: str, result, cell: dict) -> AppTest:
    """What the page stores when the explorer reports a click on ``cell`` of ``result``."""
    at.session_state[store] = {"run": result_id(result), "cell": {"weight": 0.0, **cell}}
    return at.run()


# ----------------------------------------------------------------------------------------- helpers


def test_a_token_of_spaces_or_nothing_is_never_blank():
    assert shown_token(" ") == "␣" and shown_token("  ") == "␣␣" and shown_token("") == "∅"
    assert shown_token("\n") == "⏎" and shown_token(" the") == " the" and shown_token("a\u202eb") == "a⟨U+202E⟩b"
    assert plot_labels(["a", " ", "\n", ""]) == ["0:a", "1:␣", "2:⏎", "3:∅"]
    assert plot_labels([" "], numbered=False) == ["␣"]


def test_the_causal_kind_is_called_decoder_whatever_its_stored_name():
    """The generator's only kind is stored as "encoder" (checkpoints, heads.json rows); it shows as "decoder"."""
    assert SPECS["generator"].kind("encoder").name == "encoder"  # stored data keeps its name
    assert kind_label("generator", "encoder") == "decoder" == SPECS["generator"].kinds[0].label
    assert kind_label("classifier", "encoder") == "encoder"
    assert [kind_label("translator", k) for k in ("encoder", "decoder", "cross")] == ["encoder", "decoder", "cross"]
    assert kind_label("gpt2", "decoder") == "decoder" and kind_label("generator", "nothing") == "nothing"
    assert [k.label for k in hub_spec("t5", "encoder-decoder", "seq2seq", 512).kinds] == ["encoder", "decoder", "cross"]


def test_the_glossary_defines_the_five_words():
    assert set(CORE) <= set(TERMS) and CORE == ("query", "key", "value", "head", "layer")
    text = glossary_text()
    for term in CORE:
        assert f"**{term}**" in text and define(term) in text
    assert "W_q" in define("query") and "causal self-attention" in define("decoder")
    with pytest.raises(KeyError, match="entries are"):
        define("transformer")


# ------------------------------------------------------------------------------------- generator


@pytest.fixture
def generator_run(checkpoints):
    ck = load_checkpoint(checkpoints / "generator", task="generator")
    return generation_run(ck, PROMPT, length=LENGTH, temperature=0.8, top_k=None, seed=0)


def generator_page(**query) -> AppTest:
    q = {"gen_prompt": PROMPT, "gen_length": str(LENGTH), **query}
    return apptest.run(apptest.page("generator"), q, gen_steps=True)


def test_a_space_key_and_a_newline_in_the_mask_list_are_visible(generator_run):
    """Item 5: "computed i →: 0.0000" (the space key invisible), and a newline that split the mask list."""
    keys = generator_run.kinds["encoder"].keys
    assert keys[:9] == list("ROMEO: I\n")
    at = click(
        generator_page(), "gen_cell", generator_run, {"kind": "encoder", "layer": 1, "head": 1, "query": 7, "key": 6}
    )
    assert not at.exception and not at.error
    [heading] = [plain(s.value) for s in at.subheader if s.value.startswith("How ")]
    assert "query 7:I → key 6:␣:" in heading, heading
    steps = [t.value for t in at.text[1:]]  # the generated text first, then the steps
    assert all("\n" not in line for line in steps), steps  # one step a line: no token breaks it
    masked = next(line for line in steps if line.startswith("3. "))
    assert "8:⏎ (future)" in masked and "key 6:␣ gets" in masked
    assert len([t for t in titles(at) if "· query 7:I → key 6:␣<br>" in t]) == 2, titles(at)  # vectors, row
    assert any(t.startswith("L1 H1's output for query 7:I:") for t in titles(at))


def test_the_generator_s_attention_is_called_decoder_in_its_explanation(generator_run):
    """Item 5: the charts said "encoder layer 1 · head 1"; the CSV and its file name too."""
    at = click(
        generator_page(), "gen_cell", generator_run, {"kind": "encoder", "layer": 1, "head": 1, "query": 7, "key": 6}
    )
    assert not at.exception
    words = " ".join([*titles(at), *(c.value for c in at.caption), *(s.value for s in at.subheader)])
    assert "decoder L1 H1" in words and "encoder" not in words.lower()
    assert [b.proto.label for b in at.get("download_button")].count("Download these numbers (CSV)") == 1
    assert any(e.proto.label.startswith("Glossary: query, key, value, head, layer") for e in at.expander)


def test_the_steps_follow_the_head_the_explorer_opened_on():
    """Item 5: the explorer showed layer 2, head 1 (from its link) while the steps drew layer 0, head 0."""
    at = generator_page(gen_layer="2", gen_head="1")
    assert not at.exception
    state = apptest.explorer(at)["state"]
    assert (state["layer"], state["head"]) == (2, 1)
    assert any(c.value.startswith("L2 H1:") for c in at.caption), [c.value for c in at.caption]
    at = generator_page(gen_layer="9", gen_head="9")  # clamped as the explorer clamps it
    assert any(c.value.startswith("L2 H1:") for c in at.caption)


def test_the_steps_follow_the_clicked_head(generator_run):
    at = click(
        generator_page(gen_layer="2", gen_head="1"),
        "gen_cell",
        generator_run,
        {"kind": "encoder", "layer": 1, "head": 0, "query": 3, "key": 2},
    )
    assert any(c.value.startswith("L1 H0:") for c in at.caption)  # the click wins over the link
    at = click(at, "gen_cell", generator_run, {"kind": "encoder", "layer": 0, "head": None, "query": 3, "key": 2})
    assert any(c.value.startswith("L0 H1:") for c in at.caption)  # the mean of layer 0: the URL's head
    mean = plain(" ".join(i.value for i in at.info))
    assert "query 3:E → key 2:M: " in mean and "the mean of all 2 heads, layer 0" in mean  # as the panel names it


def test_the_explanation_s_table_says_decoder_too(checkpoints, generator_run):
    ck = load_checkpoint(checkpoints / "generator", task="generator")
    e = explain(ck, generator_run.inputs, "encoder", 1, 1, 7, 6)
    frame = explanation_frame(e)
    assert (frame.kind == "decoder").all() and (frame.query_row_token == e.query_token).all()
    assert explanation_steps(e)[2].count("\n") == 0


# ------------------------------------------------------------------------------------ translator


def test_the_translator_names_the_word_written_and_the_word_read_alike(checkpoints):
    """Item 4: the heading said "computed is → spielt", the charts "query 2:woman → key 3:spielt"."""
    ck = load_checkpoint(checkpoints / "translator", task="translator")
    text = "ein mann fährt fahrrad ."
    reference = "a man rides a bike ."  # teacher-forced: a random model's own output repeats one word
    result = translation_run(ck, text, beam_size=1, reference=reference)
    cross, decoder = result.kinds["cross"], result.kinds["decoder"]
    q = next(i for i in range(len(cross.queries)) if cross.queries[i] != decoder.keys[i])
    written, read, key = (shown_token(t) for t in (cross.queries[q], decoder.keys[q], cross.keys[3]))
    name = f"query {q}:{written} (input: {read}) → key 3:{key}"
    query = {"tr_text": text, "tr_forced": "True", "tr_reference": reference}
    at = apptest.run(apptest.page("translator"), query, tr_steps=True)
    at = click(at, "tr_cell", result, {"kind": "cross", "layer": 1, "head": 2, "query": q, "key": 3})
    assert not at.exception and not at.error
    [heading] = [plain(s.value) for s in at.subheader if s.value.startswith("How ")]
    assert name in heading, heading
    escaped = lambda text: text.replace("<", "&lt;").replace(">", "&gt;")  # noqa: E731 (as plotly gets it)
    explained = [t for t in titles(at) if t.startswith("cross L1 H2 · ")]
    flat = lambda t: t.replace("<br>", " ")  # noqa: E731 (a title breaks its lines to fit a phone)
    assert len(explained) == 2 and all(escaped(name) in flat(t) for t in explained), titles(at)  # vectors, row
    assert any(t.startswith(f"L1 H2's output for {escaped(name.split(' → ')[0])}:") for t in titles(at))
    steps = " ".join(t.value for t in at.text)
    assert f"The map's row {q} shows {written}" in steps and f"at that position, {read}." in steps
    # the decoding steps below name their query the same way
    at.slider(key="tr_step").set_value(q + 1).run()
    step = f"{q}:{written} (input: {read})"
    assert any(step in plain(c.value) for c in at.caption), [c.value for c in at.caption]
    assert any(t.startswith(escaped(f"cross-attention of {step}")) for t in titles(at))
