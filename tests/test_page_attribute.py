"""AppTest of the contributions panel on the model pages and "Any model": closed by default (nothing
computed), opened it draws every method over the explorer's keys for the clicked row or a typed query,
the agreement table and the sentence; a model without a prediction head says why the gradient is absent."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fixtures.hub_tiny import save_bert_base, save_gpt2
from model.analysis.runs import run as run_model
from model.core.checkpoint import load_checkpoint
from pages.shared.explain import result_id
from pages.shared.hub import run_id
from tests import apptest
from tests.apptest import chart

TITLE = "Layer "
TEXT = "the acting is wonderful but the plot is thin"  # the classifier page's default
pytestmark = pytest.mark.usefixtures("app_env")  # the contributions figure's title starts with its layer


def contrib(at) -> dict:
    return chart(at, TITLE)


def agreement(at):
    """The panel's agreement table (the one with the Spearman column)."""
    return next(d.value for d in at.dataframe if "Spearman ρ with attention" in d.value.columns)


@pytest.mark.parametrize("page, prefix", [("classifier", "cls"), ("generator", "gen"), ("translator", "tr")])
def test_closed_until_asked_then_every_method_side_by_side(checkpoints, page, prefix) -> None:
    closed = apptest.run(apptest.page(page))
    assert not closed.exception
    assert not [t for t in apptest.titles(closed) if t.startswith(TITLE)]  # nothing computed while closed
    at = apptest.run(apptest.page(page), **{f"{prefix}_contrib": True})
    assert not at.exception and not at.error
    fig = contrib(at)
    methods = fig["data"][0]["y"]
    assert methods[0].startswith("attention") and any("value zeroing" in m for m in methods)
    z = np.array([[np.nan if v is None else v for v in row] for row in fig["data"][0]["z"]], dtype=float)
    sums = np.nansum(z, axis=1)  # each method's row is shares of the query's total (z is sent rounded)
    assert np.allclose(sums[:-1], 1.0, atol=1e-3) and (np.isclose(sums[-1], 1.0, atol=1e-3) or sums[-1] == 0)
    sentence = " ".join(t.value for t in at.text)
    assert "of the attention and" in sentence or "agree on every key" in sentence
    table = agreement(at)
    assert "Spearman ρ with attention" in table.columns and len(table) == 5  # the four methods and rollout/absent


def test_the_clicked_row_is_the_query(checkpoints) -> None:
    at = apptest.run(apptest.page("classifier"), cls_contrib=True)
    assert at.number_input(key="cls_contrib_query").value == len(TEXT.split()) - 1  # nothing clicked: the last word
    r = run_model(load_checkpoint(checkpoints / "classifier", task="classifier"), TEXT)
    cell = {"kind": "encoder", "layer": 0, "head": 1, "query": 3, "key": 2, "weight": 0.1}
    at.session_state["cls_cell"] = {"run": result_id(r), "cell": cell}  # what a click on the explorer stores
    at.run()
    assert not at.exception
    assert any("position 3" in c.value for c in at.caption)
    assert contrib(at)["layout"]["title"]["text"].endswith(f"query {r.kinds['encoder'].queries[3]}, by each method")
    assert not at.number_input  # no query to type while a cell is selected


def test_a_typed_query_and_a_layer(checkpoints) -> None:
    at = apptest.run(apptest.page("translator"), tr_contrib=True)
    at.selectbox(key="tr_contrib_kind").set_value("cross").run()
    at.number_input(key="tr_contrib_query").set_value(2).run()
    at.slider(key="tr_contrib_layer").set_value(0).run()
    assert not at.exception and not at.error
    fig = contrib(at)
    assert fig["layout"]["title"]["text"].startswith("Layer 0")
    assert not any("rollout" in m for m in fig["data"][0]["y"])  # cross-attention has no rollout: said in the table
    table = agreement(at)
    assert table.loc[table["method"] == "rollout up to this layer", "measures"].str.startswith("not shown").all()
    share = chart(at, "How much of each output word came from the source")
    z = np.array(share["data"][0]["z"], dtype=float)
    assert share["data"][0]["y"] == ["layer 0", "layer 1", "layer 2"] and ((z >= 0) & (z <= 1)).all()


def test_any_model_clicked_row_and_a_model_without_a_head(tmp_path, hub_env) -> None:
    text = "the cat sat on the mat ."
    gpt2 = save_gpt2(tmp_path / "gpt2")
    at = apptest.run(apptest.page("any_model"), {"hub_id": str(gpt2), "hub_text": text, "hub_contrib": "True"})
    assert not at.exception and not at.error
    at.session_state["hub_cell"] = {
        "run": run_id(str(gpt2), text, 0, False),
        "cell": {"kind": "decoder", "layer": 1, "head": 0, "query": 4, "key": 2, "weight": 0.1},
    }
    at.run()
    assert not at.exception and any("position 4" in c.value for c in at.caption)
    assert any("gradient" in m or "∂score" in m for m in contrib(at)["data"][0]["y"])
    base = save_bert_base(tmp_path / "base")
    at = apptest.run(apptest.page("any_model"), {"hub_id": str(base), "hub_text": text, "hub_contrib": "True"})
    assert not at.exception and not at.error
    table = agreement(at)
    why = table.loc[table["method"] == "gradient × attention", "measures"].iloc[0]
    assert why.startswith("not shown") and "head" in why


def test_a_clicked_layer_0_weight_shows_its_token_and_position_split(checkpoints) -> None:
    at = apptest.run(apptest.page("classifier"))
    r = run_model(load_checkpoint(checkpoints / "classifier", task="classifier"), TEXT)
    cell = {"kind": "encoder", "layer": 0, "head": 1, "query": 3, "key": 2, "weight": 0.1}
    at.session_state["cls_cell"] = {"run": result_id(r), "cell": cell}
    at.run()
    assert not at.exception
    titles = [t for t in apptest.titles(at) if "token and position parts" in t]
    assert len(titles) == 1 and titles[0].startswith("encoder L0 H1 · query 3")
    assert any("Why this weight: the layer-0 score splits into token·token" in t.value for t in at.text)


SENTENCE = re.compile(
    r"In layer (\d+) \(the mean of its (\d+) heads\), “(.*)” \(key (\d+)\) takes (\d+)% of the attention and (\d+)% of the (.+) contribution\."
)


@pytest.mark.parametrize(
    "page, prefix, kind, heads", [("classifier", "cls", None, 3), ("translator", "tr", "encoder", 4)]
)
def test_the_sentence_under_the_chart_is_about_the_charts_layer(checkpoints, page, prefix, kind, heads) -> None:
    """Issue 51, item 7: the sentence said "In layer 0, … takes 60% of the attention" under the layer-1 chart
    (it named the layer of the largest gap over every layer). Now, at every layer the slider picks, it names
    that layer, the chart's heads, and numbers read off the chart's own rows."""
    at = apptest.run(apptest.page(page), **{f"{prefix}_contrib": True})
    if kind:
        at.selectbox(key=f"{prefix}_contrib_kind").set_value(kind).run()
    layers = int(at.slider(key=f"{prefix}_contrib_layer").max) + 1
    for layer in range(layers):
        at.slider(key=f"{prefix}_contrib_layer").set_value(layer).run()
        assert not at.exception and not at.error
        fig = contrib(at)
        assert fig["layout"]["title"]["text"].startswith(f"Layer {layer}:")
        [said] = [t.value for t in at.text if t.value.startswith("In layer")]
        m = SENTENCE.fullmatch(said)
        if m is None:
            agree = "attention and the contributions agree on every key."
            assert said == f"In layer {layer} (the mean of its {heads} heads), {agree}"
            continue
        assert int(m[1]) == layer and int(m[2]) == heads  # the tiny model's heads per layer
        rows = dict(zip(fig["data"][0]["y"], fig["data"][0]["z"]))
        key = int(m[4])
        assert abs(rows["attention (mean of heads)"][key] * 100 - int(m[5])) <= 1
        assert abs(rows[m[7]][key] * 100 - int(m[6])) <= 1  # the method named, in words, is a row of the chart


@pytest.mark.parametrize("page, prefix", [("classifier", "cls"), ("generator", "gen")])
def test_methods_are_named_in_words(checkpoints, page, prefix) -> None:
    """Issue 51, item 4: the table listed norm_layer, value_zeroing, grad_attention (the code's names)."""
    at = apptest.run(apptest.page(page), **{f"{prefix}_contrib": True})
    names = list(agreement(at)["method"]) + list(contrib(at)["data"][0]["y"])
    assert "value zeroing" in names and "gradient × attention" in names and "weighted-value norm" in names
    assert not [n for n in names if "_" in n or "‖" in n or "∂" in n], names
