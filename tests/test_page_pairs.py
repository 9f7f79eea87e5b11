"""AppTest of the minimal-pairs page on tiny random checkpoints: default run (no Plotly chart, the heatmaps
as matrix views), an unequal pair (an explanation and the head means), an aligned pair (a B − A matrix
that equals the two sides subtracted), the bars drawn on request, the export built on click, every
control, the three models, bad input and URL state (a missing checkpoint: tests/test_faults.py)."""

import html
import json
import re
from functools import partial

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

import pages.shared.display
from fixtures.tiny import CLASSIFIER, GENERATOR, TRANSLATOR
from tests import apptest
from tests.apptest import chart, charts, explorers, matrices, matrix, run_on, titles, url
from viz.matrixview import BLUES, RDBU_R

PAGE = apptest.page("pairs")
run = partial(apptest.run, PAGE)
pytestmark = pytest.mark.usefixtures("app_env")
HEAD = "self-attention, L0 H0"
EXPORT = "Download this view as HTML"


def z(trace: dict) -> np.ndarray:
    return np.array(trace["z"], dtype=float)


def grid(at: AppTest, title_start: str) -> np.ndarray:
    return np.array(matrix(at, title_start)["grid"], dtype=float)


def matrix_titles(at: AppTest) -> list[str]:
    return [m["title"] for m in matrices(at)]


def weights(at: AppTest, name: str, kind: str) -> np.ndarray:
    """Input ``name``'s (layers, heads, queries, keys) weights of ``kind``, from the explorer that holds both."""
    (both,) = explorers(at)
    return both["arrays"][f"{name}_{kind}"]


def escaped(label: str) -> bool:
    """``label`` as plotly shows it literally: no tag, and every ``&`` starts an entity."""
    return "<" not in label and ">" not in label and not re.search(r"&(?!(amp|lt|gt|quot|#\d+);)", label)


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


@pytest.fixture
def figures_built(monkeypatch) -> list[int]:
    """How many plotly figures have been built (one count per ``go.Figure``)."""
    count = [0]
    real = go.Figure.__init__

    def counted(self, *args, **kwargs):
        count[0] += 1
        real(self, *args, **kwargs)

    monkeypatch.setattr(go.Figure, "__init__", counted)
    return count


@pytest.fixture
def click(monkeypatch):
    """Clicks a download button whose file is built on click (AppTest keeps no runtime to do it): returns
    the figures the page exported (as JSON specs) and the HTML file."""
    callables, exported = {}, []
    real_add, real_html = MediaFileManager.add_deferred, pages.shared.display.figures_to_html

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = real_add(self, data_callable, *args, **kwargs)
        callables[file_id] = data_callable
        return file_id

    def figures_to_html(figs, *args, **kwargs):
        exported[:] = [json.loads(f.to_json()) for f in figs]
        return real_html(figs, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    monkeypatch.setattr(pages.shared.display, "figures_to_html", figures_to_html)

    def press(at: AppTest, label: str = EXPORT) -> tuple[list[dict], str]:
        [button] = [b for b in at.get("download_button") if b.proto.label == label]
        data = callables[button.proto.deferred_file_id]()
        return list(exported), data.decode("utf-8")

    return press


def test_default_run_shows_the_difference(default):
    assert not default.exception
    assert not default.warning and not default.error
    assert default.text_input(key="pair_cls_a").value == "a good film"
    assert default.text_input(key="pair_cls_b").value == "a bad film"
    assert [m.label for m in default.metric] == ["A", "B", "P(positive): B against A"]
    shown = default.metric[2].value  # in words, with no sign to read: "16.1 points lower"
    assert re.fullmatch(r"\d+\.\d points (higher|lower)|unchanged", shown)
    assert not default.info  # a newcomer's first sight is the difference, not a note on lengths
    assert matrix_titles(default) == [f"A: {HEAD}  (3 × 3)", f"B: {HEAD}  (3 × 3)", f"B − A: {HEAD}  (3 × 3)"]
    (both,) = explorers(default)  # A and B, every layer and head, in one explorer
    assert [k["title"] for k in both["kinds"]] == ["A: Self-attention", "B: Self-attention"]
    assert [b.proto.label for b in default.get("download_button")] == [EXPORT]  # no per-figure download


def test_by_default_the_page_builds_no_plotly_chart(figures_built):
    at = run()
    assert not at.exception
    assert charts(at) == [] and figures_built[0] == 0  # neither drawn nor built: the export builds them on click
    [bars] = at.expander
    assert bars.label == "The probabilities of A and B, as bars" and not bars.proto.expanded
    assert url(at, "pair_bars") == "False"


@pytest.mark.parametrize("opened", [dict(pair_bars=True), dict(query={"pair_bars": "True"})], ids=["state", "url"])
def test_opening_the_bars_draws_them(opened):
    at = run(**opened)
    assert not at.exception
    assert titles(at) == ["class probabilities"]  # the bars only: the heatmaps stay matrix views
    a, b = chart(at, "class probabilities")["data"]
    assert [a["name"], b["name"]] == ["A", "B"] and a["x"] == b["x"] == ["negative", "positive"]
    assert sum(a["y"]) == pytest.approx(1, abs=1e-6) and sum(b["y"]) == pytest.approx(1, abs=1e-6)
    for metric, trace in zip(at.metric, (a, b)):  # each label is the likelier class, at its probability
        assert metric.value == trace["x"][int(np.argmax(trace["y"]))]
        assert metric.delta == f"{max(trace['y']):.1%} confident"
    size, way = re.fullmatch(r"(\d+\.\d) points (higher|lower)", at.metric[2].value).groups()
    assert float(size) * (-1 if way == "lower" else 1) == pytest.approx(100 * (b["y"][1] - a["y"][1]), abs=0.06)
    assert at.expander[0].proto.expanded and url(at, "pair_bars") == "True"
    assert EXPORT in [d.proto.label for d in at.get("download_button")]
    at.session_state["pair_bars"] = False  # closed again: no chart
    at.run()
    assert not at.exception and charts(at) == [] and url(at, "pair_bars") == "False"


@pytest.mark.parametrize("raw", ["", "true1", "<b>yes</b>"])
def test_a_bad_bars_flag_in_the_url_keeps_them_closed(raw):
    at = run({"pair_bars": raw})
    assert not at.exception and charts(at) == []
    assert not at.expander[0].proto.expanded and url(at, "pair_bars") == "False"


def test_unequal_pair_explains_why_there_is_no_difference():
    at = run(pair_cls_a="a good film", pair_cls_b="not a good film")
    assert any(
        "needs A and B of equal lengths" in i.value and "3 × 3" in i.value and "4 × 4" in i.value for i in at.info
    )
    assert not any(t.startswith("B − A") for t in matrix_titles(at)) and charts(at) == []


def test_matrix_specs():
    at = run(pair_cls_a="a good film", pair_cls_b="not a good film")
    side_a, side_b = matrix(at, f"A: {HEAD}"), matrix(at, f"B: {HEAD}")
    assert side_a["rows"] == side_a["cols"] == ["0:a", "1:good", "2:film"]
    assert side_b["rows"] == side_b["cols"] == ["0:not", "1:a", "2:good", "3:film"]
    assert side_a["shape"] == [3, 3] and side_b["shape"] == [4, 4]
    for m, name in ((side_a, "A"), (side_b, "B")):
        values = np.array(m["grid"], dtype=float)
        assert (m["row_title"], m["col_title"]) == ("query", "key")
        assert np.allclose(values.sum(axis=1), 1, atol=1e-4)
        assert np.allclose(values, weights(at, name, "encoder")[0, 0], atol=2e-6)  # the head chosen, every weight
    top = max(np.max(side_a["grid"]), np.max(side_b["grid"]))
    for m in (side_a, side_b):  # one colour scale for both: a colour means the same weight in A and B
        assert m["colour"]["mode"] == "value" and not m["colour"]["signed"] and m["colour"]["stops"] == list(BLUES)
        assert m["colour"]["ranges"] == [[0.0, pytest.approx(top, abs=1e-6)]]
    heads = f"self-attention, layer 0: mean over the {CLASSIFIER.heads} heads"
    mean_a, mean_b = matrix(at, f"A: {heads}"), matrix(at, f"B: {heads}")
    assert mean_a["shape"] == [3, 3] and mean_b["shape"] == [4, 4]
    assert mean_a["rows"] == side_a["rows"] and mean_b["cols"] == side_b["cols"]
    for m, name in ((mean_a, "A"), (mean_b, "B")):
        assert np.allclose(m["grid"], weights(at, name, "encoder")[0].mean(axis=0), atol=2e-6)
    assert mean_a["colour"]["ranges"] == mean_b["colour"]["ranges"]
    assert mean_a["colour"]["ranges"][0][1] == pytest.approx(max(np.max(mean_a["grid"]), np.max(mean_b["grid"])))


def test_aligned_pair_shows_b_minus_a():
    at = run(pair_cls_a="a good film", pair_cls_b="a bad film")
    assert not at.exception and not at.info
    diff = matrix(at, f"B − A: {HEAD}")
    assert diff["rows"] == diff["cols"] == ["0:a", "1:good→bad", "2:film"]
    assert (diff["row_title"], diff["col_title"]) == ("query", "key")
    values = np.array(diff["grid"], dtype=float)
    assert np.allclose(values, grid(at, f"B: {HEAD}") - grid(at, f"A: {HEAD}"), atol=3e-6)
    assert np.allclose(values, weights(at, "B", "encoder")[0, 0] - weights(at, "A", "encoder")[0, 0], atol=2e-6)
    assert np.allclose(values.sum(axis=1), 0, atol=1e-4)  # two softmax rows subtracted
    colour = diff["colour"]  # signed, on a diverging scale symmetric about 0
    assert colour["signed"] and colour["stops"] == list(RDBU_R)
    [[low, high]] = colour["ranges"]
    assert low == -high and high == pytest.approx(np.abs(values).max(), abs=1e-6)
    assert not any("mean over" in t for t in matrix_titles(at))  # the head means are for unequal pairs


def test_the_export_builds_the_figures_on_click(figures_built, click):
    at = run(pair_cls_a="a good film", pair_cls_b="a bad film")
    assert figures_built[0] == 0
    figs, page = click(at)
    bars, side, diff = figs
    assert bars["layout"]["title"]["text"] == "class probabilities"
    a, b = side["data"]
    assert side["layout"]["title"]["text"] == "Self-attention, L0 H0: A and B"
    assert a["coloraxis"] == b["coloraxis"] == "coloraxis"  # one colour scale for both
    for trace, name in ((a, "A"), (b, "B")):  # the figures print 4 decimals
        assert np.allclose(z(trace), grid(at, f"{name}: {HEAD}"), atol=1e-4)
    assert side["layout"]["yaxis"]["title"]["text"] == "query (row)" and "title" not in side["layout"]["yaxis2"]
    assert [ann["text"] for ann in side["layout"]["annotations"]] == ["A", "B"]
    trace = diff["data"][0]
    assert diff["layout"]["title"]["text"] == f"B − A: {HEAD}"
    assert trace["x"] == trace["y"] == ["0:a", "1:good→bad", "2:film"]
    assert np.allclose(z(trace), grid(at, f"B − A: {HEAD}"), atol=1e-4)
    assert trace["zmid"] == 0 and trace["zmin"] == -trace["zmax"]
    assert "Minimal pair · Sentiment" in page and "A: a good film" in page and "B: a bad film" in page
    assert charts(at) == []  # the page itself still draws none

    unequal = run(pair_cls_a="a good film", pair_cls_b="not a good film")
    *_, mean = click(unequal)[0]
    assert mean["layout"]["title"]["text"].lower() == f"self-attention, layer 0: mean over the {CLASSIFIER.heads} heads"
    assert [len(t["x"]) for t in mean["data"]] == [3, 4]
    assert np.allclose(z(mean["data"][1]), grid(unequal, "B: self-attention, layer 0: mean"), atol=1e-4)


def test_url_state_is_used_and_written():
    at = run({"pair_cls_a": "not bad at all", "pair_cls_b": "not good at all", "pair_layer": "1", "pair_head": "9"})
    assert not at.exception
    assert at.text_input(key="pair_cls_a").value == "not bad at all"
    assert at.selectbox(key="pair_lh").value == (1, 0)  # one select box for both; head 9 does not exist
    assert matrix(at, "B − A: self-attention, L1 H0")["rows"][1] == "1:bad→good"
    assert np.allclose(grid(at, "A: self-attention, L1 H0"), weights(at, "A", "encoder")[1, 0], atol=2e-6)
    assert at.query_params["pair_cls_b"] in ("not good at all", ["not good at all"])
    assert (url(at, "pair_layer"), url(at, "pair_head"), url(at, "pair_kind")) == ("1", "0", "encoder")


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        ("text_input", "pair_cls_b", "a bad film", lambda at: matrix(at, "B − A")["cols"][1] == "1:good→bad"),
        ("text_input", "pair_cls_a", "i loved it", lambda at: matrix(at, "A: self-attention")["rows"][0] == "0:i"),
        (
            "selectbox",
            "pair_lh",
            (1, 0),
            lambda at: matrix(at, "B: self-attention, L1 H0") and url(at, "pair_layer") == "1",
        ),
        (
            "selectbox",
            "pair_lh",
            (0, 2),
            lambda at: matrix(at, "A: self-attention, L0 H2") and url(at, "pair_head") == "2",
        ),
        ("radio", "pair_model", "generator", lambda at: matrix(at, "B − A: causal self-attention, L0 H0")),
    ],
)
def test_each_control(kind, key, value, check):
    at = run()
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)
    assert charts(at) == []  # a new choice draws no plotly chart either


def test_generator_pair():
    at = run(pair_model="generator", pair_bars=True)
    assert not at.exception and not at.warning
    bars = chart(at, "next character: top 10 for A and B")
    assert [t["name"] for t in bars["data"]] == ["A", "B"] and len(bars["data"][0]["x"]) == 10
    assert all(0 <= p <= 1 for t in bars["data"] for p in t["y"])
    diff = matrix(at, f"B − A: causal {HEAD}")
    assert diff["cols"][4] == "4:f→m" and diff["cols"][3] == "3:␣" and diff["colour"]["signed"]
    values = np.array(diff["grid"], dtype=float)
    assert np.allclose(np.triu(values, 1), 0)  # both causal
    assert np.allclose(values[:4], 0)  # "thy " is the same in both and cannot see what follows
    for name in "AB":
        assert np.allclose(np.triu(grid(at, f"{name}: causal {HEAD}"), 1), 0)
    at.text_input(key="pair_gen_b").input("x" * (GENERATOR.block_size + 5)).run()
    assert not at.exception
    assert any("only the last" in i.value for i in at.info) and any("equal lengths" in i.value for i in at.info)
    assert any("last 40 characters" in c.value for c in at.caption)
    assert [matrix(at, f"{n}: causal {HEAD}")["shape"] for n in "AB"] == [[10, 10], [40, 40]]
    mean_b = matrix(at, f"B: causal self-attention, layer 0: mean over the {GENERATOR.heads} heads")
    assert mean_b["shape"] == [40, 40] and mean_b["rows"][-1] == "39:x"


def test_translator_pair():
    at = run(pair_model="translator", pair_bars=True)
    assert not at.exception and not at.warning
    assert len(at.text) == 2
    assert not at.expander and charts(at) == []  # translations, no bars to open
    assert at.radio(key="pair_kind").value == "cross"
    cross = matrix(at, "B − A: cross-attention, L0 H0")
    assert (cross["row_title"], cross["col_title"]) == ("query = English", "key = German")
    at.radio(key="pair_kind").set_value("encoder").run()
    assert not at.exception
    diff = matrix(at, f"B − A: encoder {HEAD}")
    assert diff["cols"][:3] == ["0:<sos>", "1:ein→eine", "2:mann→frau"]  # plain text: the view writes no markup
    assert diff["row_title"] == "query = German" and diff["rows"] == diff["cols"]
    assert np.allclose(diff["grid"], weights(at, "B", "encoder")[0, 0] - weights(at, "A", "encoder")[0, 0], atol=2e-6)
    at.selectbox(key="pair_lh").set_value((TRANSLATOR.enc_layers - 1, 0)).run()
    at.radio(key="pair_kind").set_value("decoder").run()
    assert not at.exception
    layer = TRANSLATOR.enc_layers - 1
    side = matrix(at, f"A: decoder self-attention, L{layer} H0")
    assert np.allclose(side["grid"], weights(at, "A", "decoder")[layer, 0], atol=2e-6)
    assert url(at, "pair_kind") == "decoder" and url(at, "pair_layer") == str(layer)


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
    at = run(**state, pair_bars=True)
    assert not at.exception
    assert any(message in m.value for m in getattr(at, kind)), [m.value for m in getattr(at, kind)]


def test_markup_is_never_rendered_as_html(click):
    at = run(pair_cls_a="<b>a good film</b>", pair_cls_b="<script>alert(1)</script>", pair_bars=True)
    assert not at.exception
    assert all("<script>" not in m.value and "<b>" not in m.value for m in [*at.warning, *at.info])

    at = run(pair_model="generator", pair_gen_a="<b>thy\nfather</b>", pair_gen_b="thy\nmother&", pair_bars=True)
    assert not at.exception
    side_a, side_b = matrix(at, f"A: causal {HEAD}"), matrix(at, f"B: causal {HEAD}")
    assert side_a["rows"][:7] == ["0:<unk>", "1:b", "2:<unk>", "3:t", "4:h", "5:y", "6:⏎"]  # literal, printable
    assert side_b["cols"][-1] == "10:&" and side_b["cols"][3] == "3:⏎"
    for m in matrices(at):
        assert not any("&lt;" in t or "&amp;" in t or "\n" in t for t in [m["title"], *m["rows"], *m["cols"]])
    figs, page = click(at)
    specs = [*charts(at), *figs]
    assert titles(at) == ["next character: top 10 for A and B"] and len(figs) == 3
    for spec in specs:
        labels = [str(x) for t in spec["data"] for axis in ("x", "y") for x in (t.get(axis) or [])]
        assert labels and all(map(escaped, labels)), spec["layout"]["title"]
    side = figs[1]["data"][0]["x"]
    assert side[:3] == ["0:&lt;unk&gt;", "1:b", "2:&lt;unk&gt;"]
    assert html.escape("A: <b>thy") in page and "<b>thy" not in page  # the notes, escaped

    at = run(pair_model="translator")
    figs, _ = click(at)
    assert figs[0]["data"][0]["x"][0] == "0:&lt;sos&gt;" and matrix(at, "A: cross")["cols"][0] == "0:<sos>"
    for spec in figs:
        assert all(escaped(str(x)) for t in spec["data"] for axis in ("x", "y") for x in (t.get(axis) or []))


def test_a_and_b_share_one_colour_scale_and_one_head_control(default):
    """Maps set side by side read on one scale, and one control picks the head for both (issue 43, item 6):
    the one-head matrices share their colour range, and A and B are tabs of one explorer (a tab keeps the
    layer, head and view) that opens on 0 – 1, so a colour is the same weight in both."""
    a, b = (matrix(default, f"{n}: {HEAD}") for n in "AB")
    assert a["colour"]["ranges"] == b["colour"]["ranges"]
    assert [s.key for s in default.selectbox if s.key.startswith("pair_")] == ["pair_lh"]  # one head control
    (both,) = explorers(default)
    assert both.get("scale") == "abs"
    assert [k["name"] for k in both["kinds"]] == ["A_encoder", "B_encoder"]


def test_a_causal_pair_is_not_washed_out_by_its_first_row():
    """A generator pair's maps share one colour range whose top is the largest weight outside the first
    row (which can only attend to itself: 1), and their titles say so (issue 43, item 3; STYLE 29)."""
    at = run(pair_model="generator")
    a, b = (matrix(at, f"{n}: causal {HEAD}") for n in "AB")
    assert a["colour"]["ranges"] == b["colour"]["ranges"]
    (low, high), rest = a["colour"]["ranges"][0], np.concatenate([np.array(m["grid"], dtype=float)[1:] for m in (a, b)])
    assert low == 0 and high == pytest.approx(np.nanmax(rest), abs=1e-5) and high < 1
    assert "left out of the colour scale's top" in a["title"] and "left out" in b["title"]
