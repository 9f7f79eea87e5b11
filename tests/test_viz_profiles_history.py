"""Head-profile and training-history figures (viz/profiles.py, viz/history.py): what each draws, its
marks and its escaping."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from viz.history import MAX_TICKS, curves_svg, epoch_dtick, history_curves, metric_name, value_ticks
from viz.profiles import metric_matrix, profile_lines

SVG = "{http://www.w3.org/2000/svg}"


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


def read_svg(svg: str) -> dict:
    """What the curves SVG shows: each series' axis and points (epoch, value), the legend, the axis titles,
    the epoch ticks and the marked epoch."""
    root = ET.fromstring(svg)  # well-formed XML, so every text was escaped
    text = lambda el: "".join(el.itertext())
    series = {
        g.get("data-name"): {
            "axis": g.get("data-axis"),
            "panel": g.get("data-panel"),  # panels_svg's: the panel it is drawn in
            "points": [(float(c.get("data-epoch")), float(c.get("data-value"))) for c in g.iter(f"{SVG}circle")],
            "tips": [text(c) for c in g.iter(f"{SVG}title")],
            "lines": [len(line.get("points").split()) for line in g.iter(f"{SVG}polyline")],
            "dotted": {line.get("stroke-dasharray") for line in g.iter(f"{SVG}polyline")},
        }
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "series"
    }
    texts = {t.get("class"): text(t) for t in root.iter(f"{SVG}text") if t.get("class")}
    marks = [float(line.get("data-epoch")) for line in root.iter(f"{SVG}line") if line.get("class") == "current-epoch"]
    moments = sorted({float(l.get("data-epoch")) for l in root.iter(f"{SVG}line") if l.get("class") == "moment"})
    legend = [text(g) for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    ticks = [text(t) for t in root.iter(f"{SVG}text") if t.get("class") == "tick-x"]
    panels = [text(t) for t in root.iter(f"{SVG}text") if t.get("class") == "panel-title"]
    return {
        "series": series,
        "texts": texts,
        "marks": sorted(set(marks)),  # panels_svg draws the line through each panel
        "moments": moments,
        "panels": panels,
        "legend": legend,
        "ticks": ticks,
        "root": root,
    }


def test_curves_svg_axes_gaps_and_the_current_epoch() -> None:
    epochs = [1, 2, 3, 4]
    svg = curves_svg(
        epochs,
        {"loss": [2.0, float("nan"), 1.0, 0.9], "BLEU": [10, 20, 30, 31]},
        right=["BLEU"],
        current_epoch=3,
        epoch_range=(1, 6),
        title="<b>run</b>",
    )
    got = read_svg(svg)
    loss, bleu = got["series"]["loss"], got["series"]["BLEU"]
    assert loss["axis"] == "left" and bleu["axis"] == "right" and list(got["series"]) == ["loss", "BLEU"]
    assert loss["points"] == [(1, 2.0), (3, 1.0), (4, 0.9)] and loss["lines"] == [2]  # the NaN is a gap
    assert bleu["points"] == [(1, 10), (2, 20), (3, 30), (4, 31)] and bleu["lines"] == [4]
    assert bleu["dotted"] != {None} and loss["dotted"] == {None}  # the right axis's lines are dotted
    assert loss["tips"][1] == "epoch 3\nloss: 1.0000"
    assert got["legend"] == ["loss", "BLEU (right axis)"]
    assert got["texts"]["axis-left"] == "loss" and got["texts"]["axis-right"] == "BLEU"
    assert got["texts"]["axis-x"] == "epoch" and got["texts"]["epoch-label"] == "epoch 3"
    assert got["texts"]["title"] == "<b>run</b>" and "<b>" not in svg  # escaped, shown as typed
    assert got["marks"] == [3] and got["ticks"] == ["1", "2", "3", "4", "5", "6"]  # the axis reaches epoch 6
    many = read_svg(curves_svg(list(range(40)), {"loss": list(np.linspace(2, 1, 40))}))
    assert many["ticks"] == [str(e) for e in range(0, 40, 4)] and not many["marks"]
    assert "axis-right" not in many["texts"] and many["series"]["loss"]["lines"] == [40]
    anchors = {
        e: next(
            t
            for t in read_svg(curves_svg(epochs, {"loss": [1.0] * 4}, current_epoch=e))["root"].iter(f"{SVG}text")
            if t.get("class") == "epoch-label"
        ).get("text-anchor")
        for e in epochs
    }
    assert anchors == {1: "middle", 2: "middle", 3: "middle", 4: "end"}  # the last epoch's label stays inside
    with pytest.raises(ValueError, match="3 values for 4 epochs"):
        curves_svg(epochs, {"loss": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="at least one series"):
        curves_svg(epochs, {})


def test_curves_svg_escape_every_text_a_checkpoint_names() -> None:
    """Metric names come from a checkpoint's config.json: markup in one is shown, never read as markup,
    and a line break in it cannot end Markdown's HTML block (a blank line would)."""
    name = '<img src=x onerror="alert(1)"> & \n\n*loss*'
    svg = curves_svg([1, 2], {name: [1.0, 0.5]}, current_epoch=2, title="a 'title' <script>")
    got = read_svg(svg)
    assert list(got["series"]) == [name] and got["legend"] == [name] and got["texts"]["axis-left"] == name
    assert got["series"][name]["tips"] == [f"epoch 1\n{name}: 1.0000", f"epoch 2\n{name}: 0.5000"]
    assert "<img" not in svg and "<script" not in svg and "\n\n" not in svg
    assert got["root"].get("aria-label") == "a 'title' <script>"


@pytest.mark.parametrize("values", [[0.62, 0.81], [3.0, 3.0], [], [0.0], [-2.5, 140.0], [1e-4, 3e-4], [1.3, 2.9, 2.2]])
def test_value_ticks_are_round_and_inside_the_range(values) -> None:
    (lo, hi), ticks = value_ticks(values)
    assert all(lo < v < hi for v in values)  # every point inside the frame, none on it
    assert all(lo <= t <= hi for t in ticks) and 3 <= len(ticks) <= 7
    steps = np.diff(ticks)
    np.testing.assert_allclose(steps, steps[0])
    mantissa = steps[0] / 10 ** np.floor(np.log10(steps[0]))
    assert any(np.isclose(mantissa, m) for m in (1, 2, 2.5, 5))
    assert value_ticks([0.62, 0.81])[1] == [0.65, 0.7, 0.75, 0.8]  # written as round numbers


def test_epoch_ticks_are_thinned_and_metrics_named_for_people():
    epochs = list(range(1, 25))
    ticks = read_svg(curves_svg(epochs, {"train_loss": [1.0 / e for e in epochs]}))["ticks"]
    assert 2 <= len(ticks) <= MAX_TICKS and ticks[:2] == ["2", "4"]  # 24 epochs: at most 12 numbers on the axis
    assert read_svg(curves_svg([1, 2, 3], {"loss": [1.0, 0.5, 0.2]}))["ticks"] == ["1", "2", "3"]
    assert epoch_dtick(24) == 2 and epoch_dtick(12) == 1 and epoch_dtick(40) == 4
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
        {"head": "L0 H1", "distance": 0.0, "entropy": 1.5}
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
    curves = {"epoch": [1.0, 2.0], "train_loss": [2.0, 1.0], "val_accuracy": [0.6, 0.7]}
    got = read_svg(history_curves(curves, current_epoch=2, saved_epochs=[1, 2, 3]))
    assert got["texts"]["title"] == "loss and validation per epoch"
    assert {n: s["axis"] for n, s in got["series"].items()} == {"training loss": "left", "validation accuracy": "right"}
    assert got["series"]["validation accuracy"]["points"] == [(1, 0.6), (2, 0.7)]
    assert "validation accuracy (right axis)" in got["legend"] and got["marks"] == [2]
    assert got["ticks"][-1] == "3"  # the axis reaches the last epoch with saved attention
    assert read_svg(history_curves(curves, font_size=20))["root"].get("font-size") == "20"  # projector mode


def test_panels_svg_stacks_panels_on_one_snapshot_axis_with_the_moment_marked() -> None:
    from viz.history import panels_svg

    snaps = [1, 2, 3, 4]
    scores = {"induction": [0.1, 0.1, 0.9, 0.95], "previous": [0.9, 0.95, 0.97, float("nan")]}
    loss = {"repeat loss": [4.0, 4.1, 1.2, 0.4]}
    got = read_svg(panels_svg(snaps, [("scores", scores), ("loss", loss)], current=2, moment=3, moment_label="forms"))
    assert got["panels"] == ["scores", "loss"] and got["legend"] == ["induction", "previous", "repeat loss"]
    assert {n: s["panel"] for n, s in got["series"].items()} == {
        "induction": "scores",
        "previous": "scores",
        "repeat loss": "loss",
    }
    assert got["series"]["previous"]["points"] == [(1, 0.9), (2, 0.95), (3, 0.97)]  # NaN: a gap
    assert got["series"]["repeat loss"]["tips"][0] == "snapshot 1\nrepeat loss: 4.0000"
    assert got["marks"] == [2] and got["moments"] == [3]
    assert got["texts"]["moment-label"] == "forms" and got["texts"]["current-epoch-label"] == "snapshot 2"
    assert got["ticks"] == ["1", "2", "3", "4"] and got["texts"]["axis-x"] == "snapshot"
    # each panel has its own y axis: the loss's points span its own height, not the scores' 0..1
    ys = lambda name: [
        float(c.get("cy"))
        for g in got["root"].iter(f"{SVG}g")
        if g.get("data-name") == name
        for c in g.iter(f"{SVG}circle")
    ]
    assert max(ys("induction")) < min(ys("repeat loss"))  # the scores' panel above the loss's
    assert max(ys("repeat loss")) - min(ys("repeat loss")) > 100  # the loss fills its panel
    one = read_svg(panels_svg(snaps, [("scores", scores), ("loss", {})]))  # an empty panel is left out
    assert one["panels"] == ["scores"] and not one["marks"] and not one["moments"]


def test_panels_svg_escapes_and_checks_its_input() -> None:
    from viz.history import panels_svg

    svg = panels_svg([1, 2], [('<b>"p"</b>', {"<i>x</i>": [1.0, 2.0]})], moment=2, moment_label="<script>")
    got = read_svg(svg)  # parses: every text escaped
    assert got["panels"] == ['<b>"p"</b>'] and got["series"]["<i>x</i>"]["panel"] == '<b>"p"</b>'
    assert "<script>" not in svg and "<b>" not in svg
    with pytest.raises(ValueError, match="3 values for 2 snapshots"):
        panels_svg([1, 2], [("p", {"x": [1.0, 2.0, 3.0]})])
    with pytest.raises(ValueError, match="at least one panel"):
        panels_svg([1, 2], [("p", {})])
