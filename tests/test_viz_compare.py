"""Comparison figures (viz/compare.py): the side-by-side pair, built from plain dicts, lays out exactly
what plotly's make_subplots would; shared colour range; escaped labels; the signed difference."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from viz.common import plot_labels
from viz.compare import change_grid, difference_heatmap, distribution_bars, pair_heatmaps


def rows(n: int, k: int, seed: int) -> np.ndarray:
    w = np.random.default_rng(seed).random((n, k))
    return w / w.sum(axis=1, keepdims=True)


def reference_pair(a, a_tokens, b, b_tokens, names, title, query_name, key_name) -> go.Figure:
    """The pair as make_subplots builds it (the slow way the fast one replaced): the oracle."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=list(names), horizontal_spacing=0.12)
    for col, (m, (q, k), name) in enumerate(zip((a, b), (a_tokens, b_tokens), names), start=1):
        hover = f"{name}<br>{query_name}: %{{y}}<br>{key_name}: %{{x}}<br>weight: %{{z:.4f}}<extra></extra>"
        fig.add_trace(
            go.Heatmap(
                z=m.round(4).tolist(),
                x=plot_labels(k),
                y=plot_labels(q),
                coloraxis="coloraxis",
                hovertemplate=hover,
                xgap=1,
                ygap=1,
            ),
            row=1,
            col=col,
        )
    zmax = float(max(a.max(), b.max()))
    fig.update_layout(
        font=dict(size=14),
        margin=dict(l=10, r=10, t=60, b=10),
        title=dict(text=title, font=dict(size=16)),
        height=int(min(max(400, 180 + 28 * max(len(a), len(b))), 1000)),
        coloraxis=dict(colorscale="Blues", cmin=0.0, cmax=zmax, colorbar=dict(title=dict(text="weight"))),
    )
    fig.update_annotations(font_size=14)
    wide = max(a.shape[1], b.shape[1]) > 8
    fig.update_xaxes(type="category", title_text=f"{key_name} (column)", tickangle=-60 if wide else 0)
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_yaxes(title_text=f"{query_name} (row)", row=1, col=1)
    return fig


def spec(fig: go.Figure) -> str:
    out = fig.to_plotly_json()
    out["layout"].pop("template", None)
    return json.dumps(out, sort_keys=True, default=lambda x: np.asarray(x).round(4).tolist())


@pytest.mark.parametrize("shape_a, shape_b", [((5, 5), (6, 6)), ((12, 12), (10, 10)), ((3, 4), (2, 9))])
def test_pair_matches_make_subplots(shape_a, shape_b) -> None:
    a, b = rows(*shape_a, 0), rows(*shape_b, 1)
    a_tokens = ([f"q{i}" for i in range(shape_a[0])], [f"k{i}" for i in range(shape_a[1])])
    b_tokens = ([f"r{i}" for i in range(shape_b[0])], [f"m{i}" for i in range(shape_b[1])])
    args = dict(names=("A", "B"), title="two inputs", query_name="query", key_name="key")
    fast = pair_heatmaps(a, a_tokens, b, b_tokens, **args)
    slow = reference_pair(a, a_tokens, b, b_tokens, **args)
    assert spec(fast) == spec(slow)


def test_pair_shares_one_colour_range_and_escapes_text() -> None:
    a, b = rows(3, 3, 2), rows(2, 2, 3) * 0.5
    fig = pair_heatmaps(
        a, (["<b>x</b>", "y", "z"],) * 2, b, (["u", "v"],) * 2, names=("<i>A</i>", "B & C"), title="<script>t</script>"
    )
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    assert fig.layout.coloraxis.cmax == pytest.approx(max(a.max(), b.max()))
    assert fig.layout.title.text == "&lt;script&gt;t&lt;/script&gt;"
    assert [x.text for x in fig.layout.annotations] == ["&lt;i&gt;A&lt;/i&gt;", "B &amp; C"]
    assert "<b>" not in json.dumps(fig.to_plotly_json(), default=str)


def test_pair_rejects_a_matrix_that_does_not_fit_its_tokens() -> None:
    with pytest.raises(ValueError, match="key tokens"):
        pair_heatmaps(rows(3, 3, 0), (list("abc"), list("ab")), rows(2, 2, 1), (list("uv"),) * 2)


def test_difference_is_centred_and_symmetric() -> None:
    d = np.array([[0.2, -0.5], [0.0, 0.1]])
    trace = difference_heatmap(d, ["a", "b"]).data[0]
    assert (trace.zmid, trace.zmin, trace.zmax) == (0.0, -0.5, 0.5)
    flat = difference_heatmap(np.zeros((2, 2)), ["a", "b"]).data[0]
    assert (flat.zmin, flat.zmax) == (-1.0, 1.0)


def test_distribution_bars_keep_the_likeliest_and_show_the_change() -> None:
    a = {"the": 0.5, "a": 0.3, "<b>": 0.2}
    b = {"the": 0.1, "a": 0.2, "dog": 0.7}
    fig = distribution_bars(a, b, top=3, names=("before", "after"), x_title="next word")
    before, after = fig.data
    assert list(before.x) == ["dog", "the", "a"]  # by the larger of the two probabilities
    assert list(before.y) == [0.0, 0.5, 0.3] and list(after.y) == [0.7, 0.1, 0.2]
    assert list(before.customdata) == pytest.approx([0.7, -0.4, -0.1])  # after − before
    assert fig.layout.barmode == "group" and fig.layout.yaxis.range[1] == pytest.approx(0.84)
    kept_order = distribution_bars({"neg": 0.2, "pos": 0.8}, {"neg": 0.9, "pos": 0.1}, top=None)
    assert list(kept_order.data[0].x) == ["neg", "pos"]
    escaped = distribution_bars(a, b, top=None)
    assert "&lt;b&gt;" in list(escaped.data[0].x)
    with pytest.raises(ValueError, match="empty"):
        distribution_bars({}, {})


def test_change_grid_marks_heads_that_are_off() -> None:
    fig = change_grid(np.array([[0.0, 0.25], [0.5, 0.0]]), off={(1, 1)})
    trace = fig.data[0]
    assert [list(r) for r in trace.text] == [["0.00", "0.25"], ["0.50", "off"]]
    assert (trace.zmin, trace.zmax) == (0.0, 0.5)
    assert list(trace.y) == ["layer 0", "layer 1"] and fig.layout.yaxis.autorange == "reversed"
    assert change_grid(np.zeros((1, 2))).data[0].zmax == pytest.approx(1e-6)  # an all-zero change stays drawable


def test_visible_probs_shows_whitespace_and_keeps_the_numbers() -> None:
    from viz.compare import visible_probs

    shown = visible_probs({" ": 0.5, "\n": 0.3, "a": 0.2})
    assert list(shown.values()) == [0.5, 0.3, 0.2]
    assert "a" in shown and " " not in shown and "\n" not in shown


def test_pair_labels_mark_the_positions_that_differ() -> None:
    from viz.compare import pair_labels

    a = (["0:a", "1:good", "2:film"], ["0:a", "1:good", "2:film"])
    b = (["0:a", "1:bad", "2:film"], ["0:a", "1:bad", "2:film"])
    assert pair_labels(a, b) == (["0:a", "1:good→1:bad", "2:film"],) * 2
    assert pair_labels(a, (["0:a"], ["0:a"])) is None
