"""AppTest of the head-ablation page on tiny random checkpoints: default run, every control, the three
models, bad input, URL state, the matrix views (a diverging before − after difference centred at 0,
the per-head change with the switched-off heads marked), the bars drawn only on request. A missing
checkpoint: tests/test_faults.py."""

import re
from functools import partial

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from fixtures.tiny import CLASSIFIER, GENERATOR, TRANSLATOR
from model.core.checkpoint import Checkpoint, load_checkpoint
from pages.shared import models as shared_models
from tests import apptest
from tests.apptest import chart, charts, matrix, run_on, url

PAGE = apptest.page("ablation")
run = partial(apptest.run, PAGE)
pytestmark = pytest.mark.usefixtures("app_env")


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def buttons(at: AppTest) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.radio(key="abl_model").value == "classifier"
    assert default.multiselect(key="abl_cls_enc0").value == [0]  # one head off by default
    assert default.multiselect(key="abl_cls_enc1").value == []
    assert [m.label for m in default.metric] == ["Before", "After"]
    assert all(m.value in ("negative", "positive") for m in default.metric)
    assert "1 of 6 heads is off" in captions(default)
    # in words, with no sign to read (was "moved by -16.1 pp")
    moved = r"With the heads switched off, P\(positive\) is (\d+\.\d percentage points (higher|lower)|unchanged)\."
    assert re.search(moved, captions(default))
    assert buttons(default) == ["Download CSV", "Download this view as HTML"]  # the difference's numbers, the view
    assert charts(default) == []  # no Plotly on load: the views are matrix tables and the explorer


def test_the_bars_open_on_request():
    bars = chart(run(abl_bars=True), "class probabilities")
    assert [t["name"] for t in bars["data"]] == ["before", "after"] and bars["layout"]["barmode"] == "group"
    assert bars["data"][0]["x"] == ["negative", "positive"]
    assert abs(sum(bars["data"][0]["y"]) - 1) < 1e-3


def test_matrix_views(default):
    grid = matrix(default, "Self-attention: largest change")
    assert grid["shape"] == [CLASSIFIER.layers, CLASSIFIER.heads]
    assert grid["rows"] == ["layer 0", "layer 1"] and grid["cols"][0] == "head 0"
    assert grid["marks"] == [[0, 0]] and grid["mark_label"] == "switched off"
    assert max(grid["grid"][0]) == 0  # the ablated head's own layer keeps its weights
    assert max(grid["grid"][1]) > 0  # the layer above changes
    assert not grid["colour"]["signed"]
    diff = matrix(default, "before − after: self-attention, L1 H0")
    colour = diff["colour"]
    assert colour["signed"] and colour["stops"][0] != colour["stops"][-1]  # a two-sided (diverging) scale
    ((low, high),) = colour["ranges"]
    assert low == -high and high > 0
    assert max(abs(v) for v in diff["values"]) == pytest.approx(high, abs=1e-4)  # symmetric about the largest change
    assert "query" in diff["row_title"] and "key" in diff["col_title"]
    assert diff["cols"][0] == "0:the" and diff["cols"][5] == "5:the" and len(set(diff["cols"])) == len(diff["cols"])


def test_url_state_is_used_and_written():
    at = run(
        {"abl_cls_enc0": "", "abl_cls_enc1": "1,2", "abl_layer": "0", "abl_head": "2", "abl_cls_text": "not bad at all"}
    )
    assert not at.exception
    assert at.multiselect(key="abl_cls_enc0").value == []
    assert at.multiselect(key="abl_cls_enc1").value == [1, 2]
    assert at.text_input(key="abl_cls_text").value == "not bad at all"
    assert matrix(at, "before − after: self-attention, L0 H2")
    assert "2 of 6 heads are off" in captions(at)
    assert at.query_params["abl_cls_enc1"] in ("1,2", ["1,2"])


def test_url_heads_that_do_not_exist_fall_back_to_the_default():
    at = run({"abl_cls_enc1": "0,9", "abl_layer": "7", "abl_model": "nonsense"})
    assert not at.exception
    assert at.radio(key="abl_model").value == "classifier"
    assert at.multiselect(key="abl_cls_enc1").value == []
    assert at.selectbox(key="abl_lh").value == (CLASSIFIER.layers - 1, 0)


def test_switching_heads_off_and_back_on():
    at = run()
    at.multiselect(key="abl_cls_enc1").set_value([0, 1, 2]).run()
    assert not at.exception
    assert "4 of 6 heads are off" in captions(at)
    assert matrix(at, "Self-attention: largest change")["marks"] == [[0, 0], [1, 0], [1, 1], [1, 2]]
    at.button(key="abl_reset").click().run()
    assert not at.exception
    assert at.multiselect(key="abl_cls_enc0").value == [] and at.multiselect(key="abl_cls_enc1").value == []
    assert "All 6 heads are on" in captions(at)
    assert all(v == 0 for v in matrix(at, "before − after")["values"])
    assert matrix(at, "Self-attention: largest change")["marks"] == []
    assert at.metric[0].value == at.metric[1].value


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        (
            "text_input",
            "abl_cls_text",
            "i loved every minute of it",
            lambda at: matrix(at, "before − after")["cols"][0] == "0:i",
        ),
        (
            "selectbox",
            "abl_lh",
            (0, 0),
            lambda at: (
                matrix(at, "before − after: self-attention, L0 H0")
                and url(at, "abl_layer") == "0"
                and url(at, "abl_head") == "0"
            ),
        ),
        (
            "selectbox",
            "abl_lh",
            (1, 2),
            lambda at: (
                matrix(at, "before − after: self-attention, L1 H2 (largest change")
                and url(at, "abl_layer") == "1"
                and url(at, "abl_head") == "2"
            ),
        ),
        ("multiselect", "abl_cls_enc0", [1, 2], lambda at: "2 of 6 heads are off" in captions(at)),
    ],
)
def test_each_control(kind, key, value, check):
    at = run()
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)


def test_generator():
    at = run(abl_model="generator", abl_bars=True)
    assert not at.exception and not at.warning
    assert [at.multiselect(key=f"abl_gen_enc{l}").value for l in range(GENERATOR.layers)] == [[0], [], []]
    bars = chart(at, "next character: top 10, before vs after")
    assert [t["name"] for t in bars["data"]] == ["before", "after"] and len(bars["data"][0]["x"]) == 10
    diff = matrix(at, f"before − after: causal self-attention, L{GENERATOR.layers - 1} H0")
    z = np.array(diff["grid"], dtype=float)
    assert np.allclose(np.triu(z, 1), 0)  # causal: the future had no weight before or after
    assert diff["rows"][:2] == ["0:O", "1:␣"]
    at.text_input(key="abl_gen_text").input("ROMEO:\n" * 20).run()
    assert not at.exception
    assert any(f"at most {GENERATOR.block_size} characters" in i.value for i in at.info)
    assert "The last 40 characters are drawn" in captions(at)
    assert matrix(at, "before − after")["shape"] == [40, 40]


def test_translator_kinds():
    at = run(abl_model="translator")
    assert not at.exception and not at.warning
    assert len(at.text) == 2
    assert at.radio(key="abl_kind").value == "cross"
    n_heads = (TRANSLATOR.enc_layers + 2 * TRANSLATOR.dec_layers) * TRANSLATOR.heads
    assert f"1 of {n_heads} heads is off" in captions(at)
    cross = matrix(at, f"before − after: cross-attention, L{TRANSLATOR.dec_layers - 1} H0")
    assert cross["cols"][:2] == ["0:<sos>", "1:ein"]  # plain text: the view writes labels with textContent
    assert "query = English" in cross["row_title"]
    at.radio(key="abl_kind").set_value("encoder").run()
    assert not at.exception
    grid = matrix(at, "Encoder self-attention: largest change")
    assert grid["shape"] == [TRANSLATOR.enc_layers, TRANSLATOR.heads] and grid["marks"] == [[0, 0]]
    assert at.selectbox(key="abl_lh").value[0] == TRANSLATOR.enc_layers - 1  # layer 2 of 3 does not exist here
    at.multiselect(key="abl_tr_enc0").set_value([]).run()
    at.multiselect(key="abl_tr_cross1").set_value([0, 1, 2, 3]).run()
    assert not at.exception
    at.radio(key="abl_kind").set_value("decoder").run()
    grid = matrix(at, "Decoder self-attention: largest change")["grid"]
    assert max(grid[0]) == 0 and max(grid[1]) == 0  # cross layer 1 off: decoder self-attn moves from layer 2
    assert max(grid[2]) > 0


def test_the_cached_model_is_not_changed(checkpoints, monkeypatch):
    loaded = []
    monkeypatch.setattr(
        shared_models, "load_checkpoint", lambda *a, **kw: loaded.append(load_checkpoint(*a, **kw)) or loaded[-1]
    )
    every = {f"abl_tr_{k}{l}": list(range(TRANSLATOR.heads)) for k in ("enc", "cross") for l in range(2)}
    at = run(abl_model="translator", **every)
    assert not at.exception and matrix(at, "before − after")
    cached = shared_models.get_checkpoint("translator", "cpu")
    assert [ck.task for ck in loaded] == ["translator"] and loaded[0] is cached  # the object the page ran
    assert isinstance(cached, Checkpoint) and not cached.model.training
    fresh = load_checkpoint(checkpoints / "translator").model.state_dict()
    assert all(torch.equal(v, fresh[k]) for k, v in cached.model.state_dict().items())


@pytest.mark.parametrize(
    "state, kind, message",
    [
        ({"abl_cls_text": ""}, "warning", "empty"),
        ({"abl_cls_text": "   \t "}, "warning", "empty"),
        ({"abl_cls_text": "😀 🎬"}, "warning", "None of the words"),
        ({"abl_cls_text": "qwertyuiop asdfgh"}, "warning", "None of the words"),
        ({"abl_cls_text": "<script>alert(1)</script> wonderful"}, "warning", "not in the vocabulary"),
        ({"abl_cls_text": "wonderful " * 500}, "info", "only the first 2,000"),
        ({"abl_cls_text": "the plot is thin " * 6}, "info", f"at most {CLASSIFIER.max_len} words"),
        ({"abl_model": "generator", "abl_gen_text": "   "}, "warning", "empty"),
        ({"abl_model": "generator", "abl_gen_text": "😀😀"}, "warning", "None of the characters"),
        ({"abl_model": "translator", "abl_tr_text": "qwertz asdf"}, "warning", "None of the words"),
        ({"abl_model": "translator", "abl_tr_text": "ein mann 😀 fährt"}, "warning", "not in the vocabulary"),
    ],
)
def test_bad_input_gives_a_message(state, kind, message):
    at = run(**state)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_never_rendered_as_html():
    at = run(abl_cls_text="<script>alert(1)</script> the plot is <b>wonderful</b>", abl_bars=True)
    assert not at.exception
    for spec in charts(at):
        labels = [x for t in spec["data"] for x in (t.get("x") or [])]
        assert all("<" not in str(label) for label in labels), spec["layout"]["title"]["text"]
    # the matrix views carry plain text, which their script writes with textContent (tests/browser)
    assert matrix(at, "before − after")["cols"][0].startswith("0:<")
    assert all("<script>" not in w.value for w in at.warning)
