"""AppTest of the head-profiles page on tiny random checkpoints: default run, every control, URL
state, bad input and escaping (a missing checkpoint: tests/test_faults.py). The metric grid is a
matrix view (no Plotly); the profile lines are a Plotly chart drawn only when their section is open."""

from functools import partial

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fixtures.tiny import CLASSIFIER, GENERATOR, TRANSLATOR
from model.analysis.profiles import comparable_metrics, head_profiles, neighbourhood
from model.analysis.runs import run as run_model
from model.core.checkpoint import load_checkpoint
from tests import apptest
from tests.apptest import chart, charts, explorer, matrices, matrix, run_on, url

PAGE = apptest.page("profiles")
run = partial(apptest.run, PAGE)
HEADS = CLASSIFIER.layers * CLASSIFIER.heads
DEFAULT_TEXT = "the acting is wonderful but the plot is thin"
BLUES, RDBU = "#f7fbff", "#053061"  # the first stop of the sequential and of the diverging scale
pytestmark = pytest.mark.usefixtures("app_env")


def table(at: AppTest, key: str):
    """``"pro-table"`` (every head) or ``"pro-nearest"`` (the heads like the chosen one, with distances)."""
    if key == "pro-nearest":  # a plain table (st.table), always shown
        [nearest] = at.table
        return nearest.value
    [every] = at.dataframe  # the sortable grid, only while its section is open
    return every.value


def grid(at: AppTest, metric: str = "entropy") -> dict:
    """The metric grid ("pro-grid"): a matrix view, its values as rows under ``"grid"``."""
    return matrix(at, f"{metric} of every head")


def profiles_of(checkpoints, task: str, text: str, kind: str):
    """What the page should show: head_profiles of the model's own attention of ``kind``."""
    view = run_model(load_checkpoint(checkpoints / task), text).kinds[kind]
    return head_profiles(view.weights, special=view.special, cross=view.cross)


def assert_grid_is(shown: dict, expected: np.ndarray) -> None:
    """The grid's cells are ``expected`` (layers, heads), a NaN a blank (null) cell."""
    assert shown["shape"] == list(expected.shape) and np.array(shown["grid"], dtype=object).shape == expected.shape
    for got_row, want_row in zip(shown["grid"], expected):
        for got, want in zip(got_row, want_row):
            assert (got is None) if np.isnan(want) else got == pytest.approx(want, abs=1e-6)


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE)


def test_default_run(default):
    assert not default.exception
    assert not default.warning and not default.error
    shown = grid(default)
    assert shown["title"] == f"entropy of every head (self-attention)  ({CLASSIFIER.layers} × {CLASSIFIER.heads})"
    assert shown["shape"] == [CLASSIFIER.layers, CLASSIFIER.heads]
    assert shown["rows"] == ["layer 0", "layer 1"] and shown["cols"] == ["head 0", "head 1", "head 2"]
    assert (shown["row_title"], shown["col_title"]) == ("layer", "head")
    assert shown["marks"] == [[0, 0]] and shown["mark_label"] == "chosen head"  # the chosen head is outlined
    # 9 words: entropy lies between 0 and log2(9) bits, and the colour range is exactly that
    assert all(v is not None and 0 <= v <= np.log2(9) + 1e-6 for row in shown["grid"] for v in row)
    assert shown["colour"]["mode"] == "value" and shown["colour"]["signed"] is False
    assert shown["colour"]["ranges"] == [[0.0, pytest.approx(np.log2(9))]] and shown["colour"]["stops"][0] == BLUES
    assert len(matrices(default)) == 1
    labels = {b.proto.label for b in default.get("download_button")}
    assert labels == {"Download CSV"} and len(default.get("download_button")) == 1  # the grid's
    assert not default.dataframe  # the sortable table waits for its section
    [numbers] = [e for e in default.expander if e.label.startswith("Every head's numbers")]
    assert not numbers.proto.expanded
    opened = run(pro_table=True)
    assert len(opened.get("download_button")) == 2 and url(opened, "pro_table") == "True"  # the grid's and the table's
    profiles = table(opened, "pro-table")
    assert len(profiles) == HEADS
    assert list(profiles.columns) == ["layer", "head", "entropy", "previous", "self", "first", "special"]
    assert profiles["entropy"].is_monotonic_decreasing  # sorted by entropy, largest first
    nearest = table(default, "pro-nearest")
    assert len(nearest) == 4 and nearest["head"].iloc[0] == "L0 H0"
    assert nearest["distance"].iloc[0] == 0 and nearest["distance"].iloc[1:].is_monotonic_increasing
    [head_map] = explorer(default)["kinds"]  # the chosen head, in the explorer
    assert head_map["keys"][0] == "the" and (head_map["layers"], head_map["heads"]) == (1, 1)
    assert head_map["query_axis"] == "query" and "L0 H0" in head_map["title"]


def test_no_plotly_chart_by_default(default):
    """The grid is a matrix view and the profile lines wait for their section: no Plotly on load."""
    assert charts(default) == []
    [lines] = [e for e in default.expander if e.label.startswith("Their profiles as lines")]
    assert not lines.proto.expanded and url(default, "pro_lines") in (None, "False")  # closed


def test_opening_the_lines_section_draws_the_profile_lines(checkpoints):
    at = run(pro_lines=True)
    assert not at.exception and not at.warning
    [lines] = charts(at)
    assert lines == chart(at, "L0 H0 and its nearest heads")
    [section] = [e for e in at.expander if e.proto.id.endswith("pro_lines")]
    assert section.proto.expanded and len(section.get("plotly_chart")) == 1  # drawn inside the open section
    assert [t["type"] for t in lines["data"]] == ["scatter"] * 4
    profiles = profiles_of(checkpoints, "classifier", DEFAULT_TEXT, "encoder")
    near = neighbourhood(profiles, 0, 0, k=3)
    assert [t["name"] for t in lines["data"]] == table(at, "pro-nearest")["head"].tolist()
    assert [t["name"] for t in lines["data"]] == [f"L{n['layer']} H{n['head']}" for n in near]
    for trace, n in zip(lines["data"], near):
        assert trace["x"] == comparable_metrics(profiles)
        assert trace["y"] == pytest.approx(list(n["z"]), abs=1e-3)
    assert url(at, "pro_lines") == "True"
    assert matrix(at, "entropy of every head")  # the grid is still there
    from_url = run({"pro_lines": "True", "pro_head": "1-1", "pro_k": "2"})  # a shared link opens it too
    lines = chart(from_url, "L1 H1 and its nearest heads")
    assert len(lines["data"]) == 3 and lines["data"][0]["name"] == "L1 H1"


def test_profiles_match_the_model_functions(default, checkpoints):
    """The table and the grid show head_profiles of the model's own attention."""
    profiles = profiles_of(checkpoints, "classifier", DEFAULT_TEXT, "encoder")
    expected = profiles.metrics["self"]
    shown = table(run(pro_table=True), "pro-table").set_index(["layer", "head"])["self"]
    assert len(shown) == HEADS
    for (layer, head), value in shown.items():
        assert value == pytest.approx(expected[layer, head], abs=1e-6)
    assert_grid_is(grid(default), profiles.metrics["entropy"])


def test_url_state_is_used_and_written(checkpoints):
    at = run(
        {
            "pro_task": "translator",
            "pro_kind": "cross",
            "pro_metric": "monotonic",
            "pro_head": "1-2",
            "pro_k": "2",
            "pro_table": "True",
        }
    )
    assert not at.exception
    assert at.selectbox(key="pro_task").value == "translator"
    assert at.text_area(key="pro_text").value == "eine frau liest ein buch im park ."
    assert at.radio(key="pro_kind").value == "cross"
    shown = grid(at, "monotonic")
    assert shown["title"].startswith("monotonic of every head (cross-attention")
    assert shown["shape"] == [TRANSLATOR.dec_layers, TRANSLATOR.heads]
    profiles = profiles_of(checkpoints, "translator", "eine frau liest ein buch im park .", "cross")
    assert_grid_is(shown, profiles.metrics["monotonic"])
    assert shown["marks"] == [[1, 2]]  # the head from the URL is the one outlined
    # a correlation: a diverging scale fixed at -1..1, whatever the values
    assert shown["colour"]["ranges"] == [[-1.0, 1.0]] and shown["colour"]["signed"] is True
    assert shown["colour"]["stops"][0] == RDBU
    profiles = table(at, "pro-table")
    assert "monotonic" in profiles.columns and "self" not in profiles.columns
    assert table(at, "pro-nearest")["head"].tolist()[0] == "L1 H2" and len(table(at, "pro-nearest")) == 3
    assert url(at, "pro_metric") == "monotonic" and url(at, "pro_head") == "1-2"
    assert charts(at) == []


def test_bad_url_values_fall_back():
    at = run(
        {
            "pro_task": "nope",
            "pro_metric": "zzz",
            "pro_head": "9-9",
            "pro_k": "99",
            "pro_kind": "cross",
            "pro_lines": "maybe",
        }
    )
    assert not at.exception
    assert at.selectbox(key="pro_task").value == "classifier"
    assert at.selectbox(key="pro_metric").value == "entropy"
    assert at.selectbox(key="pro_head").value == "0-0"
    assert 1 <= at.slider(key="pro_k").value <= HEADS - 1
    assert grid(at)["marks"] == [[0, 0]] and charts(at) == []  # the lines stay closed


def test_a_metric_that_does_not_apply_is_a_blank_cell(checkpoints):
    """One character: no previous token, so "previous" is NaN for every head, drawn blank (null)."""
    at = run(pro_task="generator", pro_text="R", pro_metric="previous", pro_table=True)
    assert not at.exception and not at.error
    shown = grid(at, "previous")
    assert shown["shape"] == [GENERATOR.layers, GENERATOR.heads]
    assert shown["grid"] == [[None] * GENERATOR.heads] * GENERATOR.layers
    assert_grid_is(shown, profiles_of(checkpoints, "generator", "R", "encoder").metrics["previous"])
    assert shown["colour"]["ranges"] == [[0.0, 1.0]]  # a share of the weight: 0..1 even with no value
    assert shown["marks"] == [[0, 0]]
    assert table(at, "pro-table")["previous"].isna().all()
    at.selectbox(key="pro_metric").set_value("self").run()  # one token: all its weight on itself
    assert grid(at, "self")["grid"] == [[pytest.approx(1.0)] * GENERATOR.heads] * GENERATOR.layers


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        ("selectbox", "pro_task", "generator", lambda at: at.text_area(key="pro_text").value.startswith("ROMEO")),
        (
            "text_area",
            "pro_text",
            "not bad at all",
            lambda at: explorer(at)["kinds"][0]["keys"] == ["not", "bad", "at", "all"],
        ),
        ("selectbox", "pro_metric", "first", lambda at: grid(at, "first")["colour"]["ranges"] == [[0.0, 1.0]]),
        ("selectbox", "pro_sort", "self", lambda at: table(at, "pro-table")["self"].is_monotonic_decreasing),
        ("toggle", "pro_desc", False, lambda at: table(at, "pro-table")["entropy"].is_monotonic_increasing),
        (
            "selectbox",
            "pro_head",
            "1-1",
            lambda at: table(at, "pro-nearest")["head"].iloc[0] == "L1 H1" and grid(at)["marks"] == [[1, 1]],
        ),
        ("slider", "pro_k", 5, lambda at: len(table(at, "pro-nearest")) == 6),
    ],
)
def test_each_control(kind, key, value, check):
    at = run(pro_table=True)  # the sort controls live in the table's section
    widget = getattr(at, kind)(key=key)
    (widget.input(value) if kind in ("text_input", "text_area") else widget.set_value(value)).run()
    assert not at.exception
    assert check(at)
    assert url(at, key) == str(value)
    assert charts(at) == []


def test_entropy_range_follows_the_number_of_keys():
    at = run(pro_text="not bad at all")
    assert grid(at)["colour"]["ranges"] == [[0.0, pytest.approx(2.0)]]  # 4 words: at most log2(4) = 2 bits


def test_translator_kinds():
    at = run(pro_task="translator", pro_text="ein mann fährt fahrrad .", pro_table=True)
    assert not at.exception and not at.warning
    assert len(at.radio(key="pro_kind").options) == 3 and at.radio(key="pro_kind").value == "encoder"
    assert len(table(at, "pro-table")) == TRANSLATOR.enc_layers * TRANSLATOR.heads
    assert grid(at)["shape"] == [TRANSLATOR.enc_layers, TRANSLATOR.heads]
    at.radio(key="pro_kind").set_value("decoder").run()
    assert len(table(at, "pro-table")) == TRANSLATOR.dec_layers * TRANSLATOR.heads
    assert "previous" in table(at, "pro-table").columns
    assert grid(at)["shape"] == [TRANSLATOR.dec_layers, TRANSLATOR.heads]
    assert grid(at)["title"].startswith("entropy of every head (decoder self-attention")


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
    assert charts(at) == []


def test_markup_is_never_rendered_as_html():
    at = run(pro_text="<script>alert(1)</script> the plot is <b>wonderful</b>", pro_lines=True)
    assert not at.exception
    keys = explorer(at)["kinds"][0]["keys"]  # drawn with textContent by the component
    assert any(k.startswith("<") for k in keys)
    shown = [m["title"] for m in matrices(at)] + [c["layout"]["title"]["text"] for c in charts(at)]
    assert len(shown) == 2 and all("<" not in t for t in shown)
    assert all("<script>" not in w.value for w in at.warning)
