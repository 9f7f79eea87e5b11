"""Head-profile and training-history figures (viz/profiles.py, viz/history.py): what each draws, its
marks and its escaping."""

from __future__ import annotations

import json

import numpy as np
import pytest

from viz.history import metric_name, training_curves
from viz.profiles import metric_matrix, profile_lines


def test_metric_matrix_blank_nan_cells_and_a_mark_on_the_selected_head() -> None:
    v = np.array([[0.123456, np.nan, 0.5], [1.0, 0.0, 0.25]])
    p = metric_matrix(v, "entropy <b>", selected=(1, 2), zmin=0.0, zmax=1.0)
    assert p["values"] == [0.123456, None, 0.5, 1.0, 0.0, 0.25] and p["decimals"] == 2
    assert p["cols"] == ["head 0", "head 1", "head 2"] and p["colour"]["ranges"] == [[0.0, 1.0]]
    assert p["marks"] == [[1, 2]] and p["title"].startswith("entropy <b> of every head")  # the view writes text
    with pytest.raises(ValueError, match="at least one"):
        metric_matrix(np.ones((0, 3)), "x")


def test_profile_lines_draw_the_chosen_head_thick_first() -> None:
    fig = profile_lines([("layer 0 · head 1", [1.0, -0.5]), ("<i>near</i>", [0.9, -0.4])], ["self", "next"], title="t")
    first, second = fig.data
    assert first.line.width > second.line.width and first.marker.size > second.marker.size
    assert second.name == "&lt;i&gt;near&lt;/i&gt;" and list(first.x) == ["self", "next"]
    assert fig.layout.yaxis.zeroline is True
    with pytest.raises(ValueError, match="2 values for 3 metrics"):
        profile_lines([("h", [1.0, 2.0])], ["a", "b", "c"], title="t")


def test_training_curves_axes_gaps_and_the_current_epoch() -> None:
    epochs = [1, 2, 3, 4]
    fig = training_curves(
        epochs,
        {"loss": [2.0, float("nan"), 1.0, 0.9], "BLEU": [10, 20, 30, 31]},
        right=["BLEU"],
        current_epoch=3,
        epoch_range=(1, 6),
        title="<b>run</b>",
    )
    loss, bleu = fig.data
    assert list(loss.y) == [2.0, None, 1.0, 0.9] and loss.yaxis == "y" and bleu.yaxis == "y2"
    assert bleu.name == "BLEU (right axis)" and fig.layout.yaxis2.overlaying == "y"
    assert list(fig.layout.xaxis.range) == [0.5, 6.5] and fig.layout.xaxis.dtick == 1
    (line,) = fig.layout.shapes
    (label,) = fig.layout.annotations
    assert (line.x0, line.x1, line.yref) == (3, 3, "y domain") and label.text == "epoch 3"
    assert fig.layout.title.text == "&lt;b&gt;run&lt;/b&gt;"
    many = training_curves(list(range(40)), {"loss": list(np.linspace(2, 1, 40))})
    assert (
        many.layout.xaxis.dtick == 4
        and not many.layout.shapes
        and "yaxis2" not in json.dumps(many.to_plotly_json()["layout"], default=str)
    )
    with pytest.raises(ValueError, match="3 values for 4 epochs"):
        training_curves(epochs, {"loss": [1.0, 2.0, 3.0]})


def test_epoch_ticks_are_thinned_and_metrics_named_for_people():
    epochs = list(range(1, 25))
    fig = training_curves(epochs, {"train_loss": [1.0 / e for e in epochs]})
    dtick = fig.layout.xaxis.dtick
    assert dtick >= 2 and len(epochs) / dtick <= 12  # 24 epochs: at most 12 numbers on the axis
    assert training_curves([1, 2, 3], {"loss": [1.0, 0.5, 0.2]}).layout.xaxis.dtick == 1
    assert metric_name("train_loss") == "training loss"
    assert metric_name("val_bpc") == "validation bits per character"
    assert metric_name("dev_accuracy") == "dev accuracy" and metric_name("val_bleu") == "validation BLEU"
    assert metric_name("tokens_per_s") == "tokens per s"


def test_colour_ranges_are_fixed_where_the_metric_has_bounds() -> None:
    from viz.profiles import colour_range

    assert colour_range("previous", 8) == (0.0, 1.0) and colour_range("monotonic", 8) == (-1.0, 1.0)
    assert colour_range("entropy", 8) == (0.0, 3.0)
    assert colour_range("entropy", 1)[1] > 0  # one key: zero bits, still a usable range
    assert colour_range("unknown", 8) == (None, None)


def test_grid_and_neighbour_tables() -> None:
    from viz.profiles import grid_table, neighbours_table

    table = grid_table(np.arange(6.0).reshape(2, 3) / 7)
    assert list(table.index) == ["layer 0", "layer 1"] and list(table.columns) == ["head 0", "head 1", "head 2"]
    assert table.loc["layer 1", "head 0"] == round(3 / 7, 6)
    near = [{"layer": 0, "head": 1, "distance": 0.0, "entropy": 1.5, "z": None}]
    assert neighbours_table(near, ["entropy"]).to_dict("records") == [
        {"head": "layer 0 · head 1", "distance": 0.0, "entropy": 1.5}
    ]


def test_probe_text_and_axes() -> None:
    from viz.history import probe_axes, probe_text

    assert probe_text(["<sos>", "ein", "mann", "<eos>"], characters=False) == "ein mann"
    assert probe_text(list("a\nb"), characters=True) == "a ⏎ b"
    words = ["<sos>", "ein", "mann", "<eos>"]
    assert probe_axes(words, "encoder", 4, characters=False) == (words, words)
    assert probe_axes(words, "decoder", 3, characters=False) == (["<sos>", "out", "out"],) * 2
    assert probe_axes(words, "cross", 2, characters=False) == (["<sos>", "out"], words)
    queries, keys = probe_axes(list("a b"), "encoder", 3, characters=True)
    assert queries == keys and len(keys) == 3 and " " not in keys  # the space is drawn visibly


def test_history_curves_name_metrics_and_put_scores_on_the_right() -> None:
    from viz.history import history_curves

    curves = {"epoch": [1.0, 2.0], "train_loss": [2.0, 1.0], "val_accuracy": [0.6, 0.7]}
    fig = history_curves(curves, current_epoch=2, saved_epochs=[1, 2, 3])
    names = {t.name: t for t in fig.data}
    assert {"training loss", "validation accuracy (right axis)"} <= set(names)
    assert names["validation accuracy (right axis)"].yaxis == "y2" and names["training loss"].yaxis in (None, "y")
    assert fig.layout.xaxis.range[1] >= 3  # the axis reaches the last epoch with saved attention
