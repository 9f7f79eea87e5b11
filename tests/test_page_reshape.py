"""AppTest of the "Multi-head reshape" page: every step shown with its shape, head colours, the live
loop-vs-batched check, narrow/wide parameter counts, clear messages for bad input, URL state."""

import json
from functools import partial

import pytest
from streamlit.testing.v1 import AppTest

from tests import apptest
from tests.apptest import matrices, matrix
from viz.common import HEAD_COLORS

PAGE = apptest.page("reshape")
run = partial(apptest.run, PAGE)


def titles(at: AppTest) -> list[str]:
    return [m["title"] for m in matrices(at)]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def loop_diff(at: AppTest) -> float:
    return float(metrics(at)["per-head loop vs batched: max |diff|"])


@pytest.fixture(scope="module")
def default() -> AppTest:
    return run()


def test_default_run(default):
    assert not default.exception and not default.warning
    shown = titles(default)
    for expected in (
        "input x: (b, t, k)  (2 × 4 × 8)",
        "view · queries: (b, t, h, s)  (2 × 4 × 2 × 4)",
        "transpose · queries: (b, h, t, s)  (2 × 2 × 4 × 4)",
        "fold heads into batch · queries: (b·h, t, s)  (4 × 4 × 4)",
        "softmax: (b·h, t, t)  (4 × 4 × 4)",
        "unfold: (b, h, t, s)  (2 × 2 × 4 × 4)",
        "concatenate heads: (b, t, h·s)  (2 × 4 × 8)",
        "combine the heads: (b, t, k)  (2 × 4 × 8)",
    ):
        assert expected in shown, expected
    assert loop_diff(default) < 1e-5
    assert metrics(default)["narrow heads (4k²)"] == "256" and metrics(default)["wide heads (4hk²)"] == "512"
    params = matrix(default, "parameters of the attention layer")
    assert (params["cols"], params["values"]) == (["narrow", "wide"], [256, 512])


def test_queries_keys_and_values_travel_in_one_view(default):
    """A step's three tensors go to the browser together; its tabs switch them with no rerun."""
    shown = titles(default)
    for role in ("queries", "keys", "values"):
        assert f"transpose · {role}: (b, h, t, s)  (2 × 2 × 4 × 4)" in shown
    views = [e.proto for e in default.get("bidi_component")]
    assert len(views) == len(shown) - 2 * sum("· keys" in t for t in shown)  # keys and values share a view


def test_head_colours_and_axes(default):
    softmax = matrix(default, "softmax")
    colour = softmax["colour"]
    assert colour["mode"] == "head" and colour["palette"] == list(HEAD_COLORS[:2])
    assert set(colour["heads"]) == {0, 1}  # (b·h, t, t): every cell belongs to one head
    assert (softmax["row_title"], softmax["col_title"]) == ("queries b·h · t", "keys t")
    assert softmax["shape"] == [16, 4] and softmax["decimals"] == 2
    assert softmax["rows"][8] == "2=b1h0 · t0"  # a folded b·h index says where it came from
    assert matrix(default, "input x")["colour"]["mode"] == "value"  # no cell belongs to a single head


@pytest.mark.parametrize(
    "key, value, expected_title",
    [
        ("reshape_b", 1, "input x: (b, t, k)  (1 × 4 × 8)"),
        ("reshape_t", 6, "softmax: (b·h, t, t)  (4 × 6 × 6)"),
        ("reshape_k", 12, "combine the heads: (b, t, k)  (2 × 4 × 12)"),
        ("reshape_h", 4, "fold heads into batch · queries: (b·h, t, s)  (8 × 4 × 2)"),
        ("reshape_kind", "wide", "view · queries: (b, t, h, s)  (2 × 4 × 2 × 8)"),
        ("reshape_scale", "split", "scale q and k · queries: (b·h, t, s)  (4 × 4 × 4)"),
        ("reshape_seed", 5, "input x: (b, t, k)  (2 × 4 × 8)"),
        ("reshape_text", "Life is short, eat dessert first.", "softmax: (b·h, t, t)  (4 × 6 × 6)"),
    ],
)
def test_each_control(key, value, expected_title):
    at = run()
    widgets = at.get("number_input") + at.get("radio") + at.get("text_input")
    [target] = [w for w in widgets if w.key == key]
    target.set_value(value).run()
    assert not at.exception and not at.warning
    assert expected_title in titles(at)
    assert loop_diff(at) < 1e-5


def test_seed_changes_the_numbers(default):
    at = run(reshape_seed=5)
    assert matrices(at)[0]["values"] != matrices(default)[0]["values"]


def test_narrow_needs_k_divisible_by_h():
    at = run(reshape_k=7, reshape_h=2)
    assert not at.exception
    [warning] = at.warning
    assert "divisible" in warning.value and "k = 6 or 8" in warning.value
    assert not matrices(at)
    at.radio(key="reshape_kind").set_value("wide").run()
    assert not at.warning and loop_diff(at) < 1e-5
    assert metrics(at)["narrow heads (4k²)"] == "k % h ≠ 0"


def test_url_state_is_used():
    at = run({"reshape_h": "4", "reshape_kind": "wide", "reshape_b": "9"})
    assert not at.exception
    assert at.number_input(key="reshape_h").value == 4
    assert at.radio(key="reshape_kind").value == "wide"
    assert at.number_input(key="reshape_b").value == 2  # out of range: default kept
    assert "view · queries: (b, t, h, s)  (2 × 4 × 4 × 8)" in titles(at)


@pytest.mark.parametrize(
    "text, kind, message",
    [
        ("   ", "info", "random vectors"),
        (", ,", "warning", "no words"),
        ("word " * 999 + "words", "info", "only the first 8"),
        ("😀", "info", "add a word"),
        ("<script>alert(1)</script> \u202e odd ﷽ text", None, None),
    ],
)
def test_bad_sentences(text, kind, message):
    at = run(reshape_text=text)
    assert not at.exception
    if kind:
        assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]
    assert matrices(at)
    for m in matrices(at):  # labels are text (the browser writes them with textContent); no bidi control
        assert not any("\u202e" in label for label in m["rows"] + m["cols"])


def test_wide_grids_print_every_value():
    """A table scrolls, so even a 24-column step prints its values (one decimal)."""
    at = run(reshape_kind="wide", reshape_h=3)
    assert not at.exception
    wide = matrix(at, "view · queries")
    assert wide["shape"] == [8, 24] and wide["decimals"] == 1


def test_loop_code_is_drawn_only_when_opened(default):
    """The per-head loop's code (whose highlighter is a large download for the browser) waits for its expander."""
    assert not default.exception and not default.code
    at = run(reshape_loop=True)
    assert not at.exception
    [code] = at.code
    assert code.language == "python" and "for" in code.value


def test_the_tokens_box_shows_the_sentences_t():
    at = run({"reshape_text": "Life is short, eat dessert first."})
    assert not at.exception
    [box] = [n for n in at.number_input if n.label == "tokens t"]
    assert box.value == 6 and box.disabled
    assert any(c.value == "t = 6 from the sentence." for c in at.caption)
    at.text_input(key="reshape_text").input("").run()
    [box] = [n for n in at.number_input if n.label == "tokens t"]
    assert box.value == 4 and not box.disabled  # the random input's t again


def test_one_head_is_one_head():
    at = run({"reshape_h": "1"})
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert "so 1 head cost" in text and "1 heads" not in text


def test_each_step_says_its_name_shape_and_note(default):
    views = [json.loads(e.proto.json) for e in default.get("bidi_component")]
    steps = [v for v in views if v.get("heading")]
    assert [v["heading"] for v in steps[:2]] == ["1. input x", "2. project to queries, keys, values"]
    assert steps[0]["code"] == "(b, t, k) = (2, 4, 8)" and steps[0]["note"]
    assert [p["label"] for p in steps[1]["panels"]] == ["queries", "keys", "values"]
