"""viz.attention: trace counts, axis titles naming query and key, unique labels, helpful shape errors."""

import json

import numpy as np
import pytest
import torch

from viz.attention import (
    attention_heatmap,
    causal_step_figures,
    grid_frame,
    head_grid,
    heads_heatmap,
    query_bar,
    visible_chars,
    weights_frame,
)
from viz.common import FONT_SIZE

TOKENS = ["the", "cat", "saw", "the", "dog"]


def spec(fig) -> dict:
    return json.loads(fig.to_json())


def axis_titles(fig, axis: str) -> list[str]:
    layout = spec(fig)["layout"]
    return [v["title"]["text"] for k, v in layout.items() if k.startswith(axis) and v.get("title", {}).get("text")]


def stochastic(*shape) -> np.ndarray:
    return torch.softmax(torch.randn(*shape), -1).numpy()


def test_heatmap_axes_labels_and_hover():
    fig = attention_heatmap(stochastic(5, 5), TOKENS, title="layer 0 · head 1")
    s = spec(fig)
    [trace] = s["data"]
    assert trace["type"] == "heatmap"
    assert trace["x"] == trace["y"] == ["0:the", "1:cat", "2:saw", "3:the", "4:dog"]
    assert axis_titles(fig, "yaxis") == ["query (row)"] and axis_titles(fig, "xaxis") == ["key (column)"]
    for word in ("query", "key", "weight"):
        assert word in trace["hovertemplate"]
    assert s["layout"]["font"]["size"] >= 12 and trace["textfont"]["size"] >= 12
    assert s["layout"]["height"] >= 380


def test_cross_attention_names_languages_and_highlights_a_row():
    fig = attention_heatmap(
        stochastic(3, 4),
        ["a", "man", "<eos>"],
        ["<sos>", "ein", "mann", "<eos>"],
        query_name="query = English",
        key_name="key = German",
        highlight_row=1,
    )
    assert axis_titles(fig, "yaxis") == ["query = English (row)"]
    assert axis_titles(fig, "xaxis") == ["key = German (column)"]
    [shape] = spec(fig)["layout"]["shapes"]
    assert shape["y0"] == 0.5 and shape["y1"] == 1.5
    assert spec(fig)["data"][0]["x"][0] == "0:&lt;sos&gt;"  # markup is escaped for plotly


@pytest.mark.parametrize("layers, heads", [(1, 1), (2, 3), (3, 8)])
def test_grid_has_one_heatmap_per_layer_and_head(layers, heads):
    fig = head_grid(stochastic(layers, heads, 5, 5), TOKENS)
    s = spec(fig)
    assert [t["type"] for t in s["data"]] == ["heatmap"] * (layers * heads)
    assert len({t["xaxis"] for t in s["data"]}) == layers * heads
    assert any("query" in t for t in axis_titles(fig, "yaxis"))
    assert any("key" in t for t in axis_titles(fig, "xaxis"))
    assert "query" in s["layout"]["title"]["text"] and "key" in s["layout"]["title"]["text"]
    titles = [a["text"] for a in s["layout"]["annotations"]]
    assert titles == [f"head {h}" for h in range(heads)]  # one title per column (heads)
    rows = [
        v["title"]["text"] for k, v in s["layout"].items() if k.startswith("yaxis") and v.get("title", {}).get("text")
    ]
    assert rows == [f"layer {l} · query (row)" for l in range(layers)]  # one per row (layers)
    assert all(a["font"]["size"] >= 12 for a in s["layout"]["annotations"])
    assert "L0 H0" in s["data"][0]["hovertemplate"]


def test_grid_with_cross_attention_shapes():
    fig = head_grid(stochastic(2, 2, 3, 6), ["a", "b", "c"], list("uvwxyz"), key_name="key = German")
    assert spec(fig)["data"][0]["x"] == ["0:u", "1:v", "2:w", "3:x", "4:y", "5:z"]
    with pytest.raises(ValueError, match="6 key columns but 5 key tokens"):
        head_grid(stochastic(2, 2, 3, 6), ["a", "b", "c"], list("uvwxy"))


def test_causal_step_figures_show_masked_cells_blank():
    T = 4
    scores = torch.randn(T, T)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    masked = scores.masked_fill(~mask, float("-inf"))
    figs = causal_step_figures(scores, mask, masked, torch.softmax(masked, -1), list("ab\nc"))
    assert list(figs) == ["scores", "mask", "masked", "softmax"]
    z = spec(figs["masked"])["data"][0]["z"]
    assert z[0][1] is None and z[0][0] is not None  # -inf becomes a gap
    assert spec(figs["mask"])["data"][0]["text"][0] == ["0", "−∞", "−∞", "−∞"]
    for fig in figs.values():
        assert axis_titles(fig, "yaxis") == ["query (row)"] and axis_titles(fig, "xaxis") == ["key (column)"]
    assert spec(figs["softmax"])["data"][0]["y"][2] == "2:⏎"  # a newline is shown, not drawn as a line break


def test_causal_step_figures_only_builds_the_named_steps():
    T = 5
    scores = torch.randn(T, T)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    masked = scores.masked_fill(~mask, float("-inf"))
    args = (scores, mask, masked, torch.softmax(masked, -1), list("abcde"))
    every = causal_step_figures(*args)
    for name in every:
        one = causal_step_figures(*args, only=[name])
        assert list(one) == [name] and spec(one[name]) == spec(every[name])
    assert list(causal_step_figures(*args, only=["softmax", "scores"])) == ["scores", "softmax"]
    with pytest.raises(ValueError, match="unknown causal step"):
        causal_step_figures(*args, only=["weights"])


def test_query_bar_and_heads_heatmap():
    fig = query_bar([0.1, 0.6, 0.3], ["a", "b", "a"], query_label="2:a", key_name="key = German")
    s = spec(fig)
    assert s["data"][0]["type"] == "bar" and s["data"][0]["x"] == ["0:a", "1:b", "2:a"]
    assert "key = German" in s["layout"]["xaxis"]["title"]["text"]
    assert "query" in s["layout"]["yaxis"]["title"]["text"] and "query: 2:a" in s["data"][0]["hovertemplate"]
    fig = heads_heatmap(stochastic(3, 4), list("wxyz"), query_label="<b>x")
    s = spec(fig)
    assert s["data"][0]["y"] == ["head 0", "head 1", "head 2", "mean"]
    assert "&lt;b&gt;x" in s["layout"]["title"]["text"]
    assert "query" in s["layout"]["yaxis"]["title"]["text"]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: attention_heatmap(np.ones((2, 3, 3)), TOKENS[:3]), "must be 2-D"),
        (lambda: attention_heatmap(np.ones((5, 5)), TOKENS[:4]), "5 query rows but 4 query tokens"),
        (lambda: head_grid(np.ones((5, 5)), TOKENS), "4 dimensions"),
        (lambda: head_grid(np.ones((0, 2, 5, 5)), TOKENS), "at least one"),
        (lambda: query_bar(np.ones((2, 2)), ["a", "b"], query_label="q"), "Pick one row"),
        (lambda: query_bar(np.ones(3), ["a", "b"], query_label="q"), "3 weights but 2 key tokens"),
        (lambda: heads_heatmap(np.ones((2, 3)), ["a"], query_label="q"), "3 keys but 1 key tokens"),
    ],
)
def test_wrong_shapes_raise_helpful_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_visible_chars_and_frame():
    assert visible_chars(["a", " ", "\n", "\t"]) == ["a", "␣", "⏎", "⇥"]
    frame = weights_frame(np.eye(2), ["x", "x"], ["<y>", "z"])
    assert list(frame.index) == ["0:x", "1:x"] and list(frame.columns) == ["0:<y>", "1:z"]
    assert FONT_SIZE >= 12


def test_grid_frame_is_one_long_table_of_every_head():
    w = np.arange(2 * 3 * 2 * 4, dtype=float).reshape(2, 3, 2, 4)
    frame = grid_frame(w, ["a", "a"], list("wxyz"))
    assert len(frame) == w.size and list(frame.index.names) == ["layer", "head", "query", "key"]
    assert frame.loc[(1, 2, "1:a", "3:z"), "weight"] == w[1, 2, 1, 3]
    assert frame.loc[(0, 1, "0:a", "0:w"), "weight"] == w[0, 1, 0, 0]
    with pytest.raises(ValueError, match="2 × 4 but 3 query"):
        grid_frame(w, list("abc"), list("wxyz"))


def test_for_projector_grows_every_font_and_leaves_the_original_alone():
    from viz.attention import head_grid
    from viz.common import for_projector

    w = np.random.default_rng(0).random((2, 3, 4, 4))
    fig = head_grid(w / w.sum(-1, keepdims=True), list("abcd"), list("abcd"))
    before = json.loads(fig.to_json())
    big = for_projector(fig, scale=1.5)
    assert json.loads(fig.to_json()) == before
    assert big.layout.font.size == round(fig.layout.font.size * 1.5)
    assert all(b.font.size > 14 for b in big.layout.annotations)
    for name in ("xaxis", "yaxis"):
        assert big.layout[name].tickfont.size >= round(12 * 1.5)
    assert big.layout.height > fig.layout.height


def test_step_figures_show_each_head_and_their_mean():
    from viz.steps import decoding_step_figures, step_figures

    row = np.random.default_rng(0).dirichlet(np.ones(4), size=3)  # 3 heads over 4 keys
    heads, bar = step_figures(row, list("abcd"), query_label="5:x", bar_title="mean of 5:x")
    assert np.allclose(heads.data[0].z[-1], row.mean(axis=0), atol=1e-4)  # the last row is the mean
    assert np.allclose(bar.data[0].y, row.mean(axis=0), atol=1e-4) and bar.layout.title.text == "mean of 5:x"
    figs = decoding_step_figures(row, row[:, :2], list("abcd"), ["<sos>", "a"], query_label="1:a")
    assert [len(f.data[0].x) for f in figs] == [4, 4, 2]
    assert "key = English so far" in figs[2].layout.xaxis.title.text
    with pytest.raises(ValueError, match="heads, keys"):
        step_figures(row[0], list("abcd"), query_label="q", bar_title="t")
