"""AppTest of the training-history page on tiny checkpoints with fake history files: default run,
every control, URL state, a checkpoint without history, broken history (no checkpoint: tests/test_faults.py)."""

import json
import re
import shutil
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from fixtures.tiny import CLASSIFIER, GENERATOR, HISTORY_EPOCHS, make_checkpoints, make_history
from model.training.history import load_history
from pages.explore.history_parts import LOSS_PANEL, ROLE_NAMES, SCORES_PANEL
from tests import apptest
from tests.apptest import ROOT, chart, run_on, url
from tests.test_viz_profiles_history import read_svg
from viz.common import FONT_SIZE
from viz.history import MAX_TICKS

PAGE = apptest.page("history")
run = partial(apptest.run, PAGE)
LAST = HISTORY_EPOCHS[-1]
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    return make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))


def curves(at: AppTest) -> dict:
    """The loss and validation curves: an SVG in a Markdown element (viz.history.curves_svg), read."""
    found = [
        m.value for m in at.markdown if m.value.startswith("<svg") and "loss and validation per snapshot" in m.value
    ]
    assert len(found) == 1, "no curves on the page"
    return read_svg(found[0])


def marked_epoch(at: AppTest) -> float:
    (epoch,) = curves(at)["marks"]
    return epoch


@pytest.fixture(scope="module")
def default(checkpoints) -> AppTest:
    return run_on(checkpoints, PAGE, {"hist_task": "classifier"})


def test_default_run(default, checkpoints):
    assert not default.exception
    assert not default.warning and not default.error and not default.info
    assert default.select_slider(key="hist_epoch").value == LAST
    head = chart(default, f"snapshot {LAST} · L0 H0")
    assert head["data"][0]["x"] == ["0:a", "1:good", "2:film"]
    assert head["layout"]["yaxis"]["title"]["text"] == "query (row)"
    expected = load_history(checkpoints / "classifier").attention("p0", "encoder", LAST)[0, 0]
    np.testing.assert_allclose(head["data"][0]["z"], expected, atol=1e-4)
    shown = curves(default)
    assert shown["legend"] == ["dev accuracy (right axis)", "training loss"]
    accuracy = shown["series"]["dev accuracy"]
    assert accuracy["axis"] == "right" and [v for _, v in accuracy["points"]] == pytest.approx([0.6, 0.7, 0.8])
    assert [e for e, _ in shown["series"]["training loss"]["points"]] == [1, 2, 3]
    assert shown["texts"]["axis-x"] == "snapshot" and shown["texts"]["axis-left"] == "training loss"
    assert marked_epoch(default) == LAST
    assert url(default, "hist_epoch") == str(LAST)


def test_epoch_slider_scrubs_maps_and_marker(checkpoints):
    at = run({"hist_task": "classifier"})
    at.select_slider(key="hist_epoch").set_value(1).run()
    assert not at.exception
    head = chart(at, "snapshot 1 · L0 H0")
    expected = load_history(checkpoints / "classifier").attention("p0", "encoder", 1)[0, 0]
    np.testing.assert_allclose(head["data"][0]["z"], expected, atol=1e-4)
    assert marked_epoch(at) == 1
    assert url(at, "hist_epoch") == "1"


@pytest.mark.parametrize(
    "kind, key, value, check",
    [
        (
            "selectbox",
            "hist_task",
            "generator",
            lambda at: chart(at, f"snapshot {LAST} · L0")["data"][0]["x"][:2] == ["0:R", "1:O"],
        ),
        ("selectbox", "hist_probe", "p2", lambda at: len(chart(at, f"snapshot {LAST} · L0")["data"][0]["x"]) == 9),
        (
            "radio",
            "hist_view",
            "grid",
            lambda at: (
                len(chart(at, f"snapshot {LAST}: 2 layers × 3 heads")["data"]) == CLASSIFIER.layers * CLASSIFIER.heads
            ),
        ),
        (
            "selectbox",
            "hist_lh",
            (1, 0),
            lambda at: chart(at, f"snapshot {LAST} · L1 H0") and url(at, "hist_layer") == "1",
        ),
        (
            "selectbox",
            "hist_lh",
            (0, 2),
            lambda at: chart(at, f"snapshot {LAST} · L0 H2") and url(at, "hist_head") == "2",
        ),
    ],
)
def test_each_control(kind, key, value, check):
    at = run({"hist_task": "classifier"})
    getattr(at, kind)(key=key).set_value(value).run()
    assert not at.exception
    assert check(at)
    assert key == "hist_lh" or url(at, key) == str(value)  # the head select writes hist_layer and hist_head


def test_translator_kinds_and_varying_output_length():
    at = run({"hist_task": "translator", "hist_kind": "cross", "hist_epoch": "2", "hist_layer": "2", "hist_head": "3"})
    assert not at.exception and not at.error
    assert at.radio(key="hist_kind").value == "cross"
    head = chart(at, "snapshot 2 · L2 H3")
    assert head["data"][0]["x"] == ["0:&lt;sos&gt;", "1:ein", "2:mann", "3:fährt", "4:fahrrad", "5:.", "6:&lt;eos&gt;"]
    assert len(head["data"][0]["y"]) == 5  # 3 + epoch output positions in the fake history
    assert "German" in head["layout"]["xaxis"]["title"]["text"]
    at.select_slider(key="hist_epoch").set_value(3).run()
    assert len(chart(at, "snapshot 3 · L2 H3")["data"][0]["y"]) == 6
    at.radio(key="hist_kind").set_value("encoder").run()
    assert at.selectbox(key="hist_lh").value[0] == 0  # the encoder has fewer layers: back to layer 0
    assert chart(at, "snapshot 3 · L0 H3")
    legend = curves(at)["legend"]
    assert "validation BLEU (right axis)" in legend and "training loss" in legend


def test_bad_url_values_fall_back():
    at = run({"hist_task": "zzz", "hist_epoch": "99", "hist_probe": "<script>", "hist_layer": "7", "hist_view": "x"})
    assert not at.exception
    assert at.selectbox(key="hist_task").value == "generator"  # the default model: issue 51 opens on it
    assert at.select_slider(key="hist_epoch").value == LAST  # its fake history marks no moment: the last
    assert at.selectbox(key="hist_probe").value == "p2"  # the default probe: the generator's that repeats
    assert at.selectbox(key="hist_lh").value[0] == 0
    assert at.radio(key="hist_view").value == "head"


def test_generator_probe_labels_show_whitespace():
    at = run(hist_task="generator", hist_probe="p0")
    assert not at.exception
    labels = chart(at, f"snapshot {LAST} · L0 H0")["data"][0]["x"]
    assert labels[6] == "6:⏎" and labels[7] == "7:W" and len(set(labels)) == len(labels)
    at.radio(key="hist_view").set_value("grid").run()
    assert len(chart(at, f"snapshot {LAST}: ")["data"]) == GENERATOR.layers * GENERATOR.heads


def test_checkpoint_without_history_gives_info(checkpoints, tmp_path, monkeypatch):
    shutil.copytree(checkpoints / "classifier", tmp_path / "classifier")
    for name in ("history.safetensors", "history.json"):
        (tmp_path / "classifier" / name).unlink()
    meta = json.loads((tmp_path / "classifier" / "config.json").read_text())
    meta["training"] = {}
    (tmp_path / "classifier" / "config.json").write_text(json.dumps(meta))
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    at = run({"hist_task": "classifier"})
    assert not at.exception and not at.error
    infos = " ".join(i.value for i in at.info)
    assert "no saved attention history" in infos and "python -m model train classifier" in infos
    assert "records no per-epoch metrics" in infos
    assert not at.get("plotly_chart") and not any(m.value.startswith("<svg") for m in at.markdown)


def page_words(at: AppTest) -> str:
    """Every sentence the page shows a reader (captions, Markdown other than the charts, labels, notes)."""
    texts = [c.value for c in at.caption] + [m.value for m in at.markdown if not m.value.startswith("<svg")]
    texts += [w.label for w in [*at.selectbox, *at.select_slider, *at.radio]]
    return "\n".join(texts + [i.value for i in at.info])


def test_a_snapshot_is_told_in_training_steps_and_epoch_is_never_redefined(checkpoints, tmp_path, monkeypatch):
    """Issue 51: "epoch" was redefined as the 250 steps between two snapshots. The page says "snapshot" and
    "training step" instead, from what training recorded (each snapshot's step, how often one was taken)."""
    at = run({"hist_task": "classifier"})
    assert f"Snapshot {LAST} is the model after {10 * LAST} training steps" in page_words(at)
    assert "after each pass over the training data" in page_words(at)
    shutil.copytree(checkpoints / "classifier", tmp_path / "classifier")
    meta = json.loads((tmp_path / "classifier" / "config.json").read_text())
    meta["training"]["eval_every"] = 1250
    for row in meta["training"]["history"]:
        row["step"] = 1250 * row["epoch"]
    (tmp_path / "classifier" / "config.json").write_text(json.dumps(meta))
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    at = run({"hist_task": "classifier"})
    assert not at.exception
    words = page_words(at)
    assert (
        f"Snapshot {LAST} is the model after {1250 * LAST:,} training steps; a snapshot was taken every 1,250" in words
    )
    assert "A training step is one small batch of examples read and the weights nudged once." in words
    assert not re.search(r"\bepochs?\b", words, re.IGNORECASE), words  # no epoch, let alone one redefined
    assert at.select_slider(key="hist_epoch").label == "Snapshot"


def test_inconsistent_history_gives_error_and_keeps_curves(checkpoints, tmp_path, monkeypatch):
    shutil.copytree(checkpoints / "classifier", tmp_path / "classifier")
    meta = json.loads((tmp_path / "classifier" / "history.json").read_text())
    meta["epochs"].append(7)
    (tmp_path / "classifier" / "history.json").write_text(json.dumps(meta))
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    at = run({"hist_task": "classifier"})
    assert not at.exception
    assert "could not be read" in at.error[0].value and "no map for epoch 7" in at.error[0].value
    shown = curves(at)  # the metrics do not need the attention files
    assert len(shown["series"]) == 2 and not shown["marks"]


@pytest.mark.parametrize("first, then", [("translator", "classifier"), ("generator", "translator")])
def test_the_probe_box_follows_the_chosen_model(first, then):
    """The browser keeps a keyed selectbox's shown text between runs unless the server sends a value:
    switching the model must send the new model's probe text, not leave the old one on screen."""
    at = run({"hist_task": first, "hist_probe": "p0"})  # the generator would open on its repeat, p2
    at.selectbox(key="hist_task").set_value(then).run()
    assert not at.exception
    probe = at.selectbox(key="hist_probe")
    shown = probe.options[probe.index]
    assert probe.proto.set_value and probe.proto.raw_value == shown  # the browser is told what to show
    assert {"translator": "ein mann", "classifier": "a good film"}.get(then, "") in shown
    assert not re.match(r"p\d+:", shown)  # the probe's text only: no internal id ("p0: a good film") before it


def test_every_layer_and_head_is_a_readable_grid():
    at = run({"hist_task": "generator", "hist_view": "grid"})
    assert not at.exception
    grid = chart(at, f"snapshot {LAST}: ")
    column_heads = [a["text"] for a in grid["layout"]["annotations"]]
    assert column_heads == [f"head {h}" for h in range(GENERATOR.heads)]  # one title per column, not per plot
    rows = [
        v["title"]["text"]
        for k, v in grid["layout"].items()
        if k.startswith("yaxis") and v.get("title", {}).get("text")
    ]
    assert rows == [f"layer {l} · query (row)" for l in range(GENERATOR.layers)]
    in_columns = {
        json.loads(c.proto.spec)["layout"]["title"]["text"] for col in at.columns for c in col.get("plotly_chart")
    }
    assert grid["layout"]["title"]["text"] not in in_columns  # the grid has the page's full width
    assert grid["layout"]["height"] >= GENERATOR.layers * 150


def test_curves_have_human_names_and_thinned_epoch_ticks():
    at = run({"hist_task": "translator"})
    shown = curves(at)
    assert "validation BLEU (right axis)" in shown["legend"] and "training loss" in shown["legend"]
    assert shown["series"]["validation BLEU"]["axis"] == "right"
    assert not any("_" in n for n in shown["series"])
    assert "_" not in shown["texts"]["axis-left"]
    assert len(shown["ticks"]) <= MAX_TICKS


def test_projector_mode_grows_the_curves_text():
    assert curves(run(projector=True))["root"].get("font-size") == f"{FONT_SIZE * 1.4:g}"


def test_a_metric_name_with_markup_is_shown_as_text(checkpoints, tmp_path, monkeypatch):
    """The curves are HTML on the page (st.markdown): a checkpoint's metric names are escaped in it."""
    shutil.copytree(checkpoints / "classifier", tmp_path / "classifier")
    meta = json.loads((tmp_path / "classifier" / "config.json").read_text())
    name = '<img src=x onerror="alert(1)">'
    for row in meta["training"]["history"]:
        row[name] = 1.0 / row["epoch"]
    (tmp_path / "classifier" / "config.json").write_text(json.dumps(meta))
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    at = run({"hist_task": "classifier"})
    assert not at.exception
    assert name in curves(at)["series"] and name in curves(at)["legend"]
    assert not any("<img" in m.value for m in at.markdown)


# Issue 51, item 5: the page opens on the moment a head forms, found in the scored snapshots by a rule.


def with_snapshots(root: Path, jump: int) -> Path:
    """Scored snapshots beside the fake histories: the generator's induction head (layer 1 · head 1) rises
    from 0.05 to 0.8 at snapshot ``jump`` while the repeat loss falls; the classifier's previous-token head
    (layer 0 · head 1) plays its role from the first snapshot, in a block its training started from an earlier
    one and held fixed."""
    for task in ("generator", "classifier"):
        path = root / task / "history.json"
        meta = json.loads(path.read_text())
        meta["snapshots"] = {}
        for e in HISTORY_EPOCHS:
            formed = e >= jump
            roles = {"previous": {"score": 0.9 + 0.01 * e, "kind": "encoder", "layer": 0, "head": 1}}
            if task == "generator":
                roles["induction"] = {"score": 0.8 if formed else 0.05, "kind": "encoder", "layer": 1, "head": 1}
                roles["duplicate"] = {"score": 0.02, "kind": "encoder", "layer": 2, "head": 0}
            meta["snapshots"][str(e)] = {
                "roles": roles,
                **({"repeat_loss": 1.2 if formed else 4.0} if task == "generator" else {}),
            }
        path.write_text(json.dumps(meta))
    config = root / "classifier" / "config.json"
    meta = json.loads(config.read_text())
    card = "Learned from: first, sentences with words blanked out, to guess the missing word; then reviews."
    meta["training"].update(init_from="runs/cls15/soup", freeze="pos_emb,blocks.0.", card=card)
    config.write_text(json.dumps(meta))
    return root


@pytest.fixture(scope="module", params=[2, 3], ids=["jump-at-2", "jump-at-3"])
def moments(request, tmp_path_factory) -> tuple[Path, int]:
    root = make_history(make_checkpoints(tmp_path_factory.mktemp("moments")))
    return with_snapshots(root, request.param), request.param


def roles_chart(at: AppTest) -> dict:
    found = [m.value for m in at.markdown if m.value.startswith("<svg") and "best head per snapshot" in m.value]
    assert len(found) == 1, "no roles chart on the page"
    return read_svg(found[0])


def test_opens_on_the_generator_at_the_snapshot_where_its_head_forms(moments):
    """No model, snapshot, probe or head in the URL: the generator, at the snapshot where the induction score
    rose most (wherever the history puts it), on the forming head and the probe whose text repeats."""
    root, jump = moments
    at = run_on(root, PAGE)
    assert not at.exception and not at.error
    assert at.selectbox(key="hist_task").value == "generator"
    slider = at.select_slider(key="hist_epoch")
    assert slider.value == jump and slider.label == "Snapshot"
    assert slider.format_func(jump) == f"{jump} · induction head forms" and slider.format_func(1) == "1"
    assert at.selectbox(key="hist_lh").value == (1, 1)
    assert chart(at, f"snapshot {jump} · L1 H1")
    assert url(at, "hist_epoch") == str(jump) and url(at, "hist_task") == "generator"
    (note,) = [m.value for m in at.markdown if m.value.startswith("**Watch a head learn its job.**")]
    assert f"Between snapshot {jump - 1} and snapshot {jump} (training steps {10 * (jump - 1)} to {10 * jump})" in note
    assert "L1 H1 (layer 1, head 1) became an induction head" in note and "from 0.05 to 0.80" in note
    assert "fell from 4.00 to 1.20 nats" in note


def test_the_chart_shows_the_induction_score_and_the_repeat_loss_in_two_panels(moments):
    root, jump = moments
    shown = roles_chart(run_on(root, PAGE))
    assert shown["panels"] == [SCORES_PANEL, LOSS_PANEL]
    induction, loss = shown["series"]["induction"], shown["series"][ROLE_NAMES["repeat_loss"]]
    assert induction["panel"] == SCORES_PANEL and loss["panel"] == LOSS_PANEL
    assert [v for _, v in induction["points"]] == [0.8 if e >= jump else 0.05 for e in HISTORY_EPOCHS]
    assert [v for _, v in loss["points"]] == [1.2 if e >= jump else 4.0 for e in HISTORY_EPOCHS]
    assert shown["moments"] == [jump] and shown["marks"] == [jump]  # the moment, and the snapshot shown
    assert shown["texts"]["moment-label"] == "induction head forms" and shown["texts"]["axis-x"] == "snapshot"
    assert "duplicate-token" not in shown["series"]  # never played (0.02): left out, and said so
    assert any("Not drawn: duplicate-token" in c.value for c in run_on(root, PAGE).caption)


def test_the_default_probe_writes_a_phrase_twice(moments):
    root, _ = moments
    at = run_on(root, PAGE)
    probe = at.selectbox(key="hist_probe").value
    text = "".join(load_history(root / "generator").probes[probe])
    first, second = text.split("\n")
    assert first == second and len(first) >= 8  # a phrase written twice, one line each
    assert chart(at, "snapshot ")["data"][0]["x"][len(first) + 1] == f"{len(first) + 1}:T"  # the repeat, on the axes


def test_the_classifier_says_where_its_head_formed_without_run_details(moments):
    root, _ = moments
    at = run_on(root, PAGE, {"hist_task": "classifier"})
    assert not at.exception
    (note,) = [m.value for m in at.markdown if m.value.startswith("**Where its previous-token head formed.**")]
    assert "L0 H1 (layer 0, head 1) already scores 0.91 at snapshot 1" in note and "0.93 at the last" in note
    assert "masked-word pretraining" in note and "kept as it was" in note
    assert "runs/" not in note and "soup" not in note and "blocks" not in note  # no run names or code
    assert at.select_slider(key="hist_epoch").value == LAST  # no head forms in these snapshots: the last
    assert at.selectbox(key="hist_lh").value == (0, 1)  # the head the note is about


@pytest.mark.parametrize(
    "query, task, snapshot",
    [
        ({"hist_model": "generator", "hist_snapshot": "1"}, "generator", 1),
        ({"hist_model": "classifier", "hist_snapshot": "2"}, "classifier", 2),
        (
            {"hist_task": "translator", "hist_model": "classifier", "hist_epoch": "3", "hist_snapshot": "1"},
            "translator",
            3,
        ),
        ({"hist_model": "zzz", "hist_snapshot": "x"}, "generator", LAST),
    ],
)
def test_second_url_names_open_exact_states(query, task, snapshot):
    """Links may say ``hist_model`` and ``hist_snapshot``; ``hist_task`` and ``hist_epoch`` win when both are there,
    a bad value falls back, and the page writes the first names only."""
    at = run(query)
    assert not at.exception
    assert at.selectbox(key="hist_task").value == task and at.select_slider(key="hist_epoch").value == snapshot
    assert url(at, "hist_task") == task and url(at, "hist_epoch") == str(snapshot)
    assert url(at, "hist_model") is None and url(at, "hist_snapshot") is None


SHIPPED = ROOT / "checkpoints"


@pytest.mark.skipif(not (SHIPPED / "generator" / "history.json").is_file(), reason="no shipped generator history")
def test_the_shipped_generator_opens_where_the_stripe_appears(monkeypatch):
    """On the shipped generator: the page opens at the snapshot its history marks, where the forming head's
    stripe (each character of the second copy looking at the one after its twin in the first) is the row's
    largest weight on most rows of the repeat, and the snapshot before has it on a minority, fainter."""
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(SHIPPED))
    moment = load_history(SHIPPED / "generator").moment()
    at = run()
    assert not at.exception and at.select_slider(key="hist_epoch").value == moment.epoch
    assert at.selectbox(key="hist_lh").value == (moment.layer, moment.head)

    def stripe(at: AppTest, epoch: int) -> tuple[float, float]:
        z = np.array(chart(at, f"snapshot {epoch} · L{moment.layer} H{moment.head}")["data"][0]["z"])
        labels = [x.split(":", 1)[1] for x in chart(at, f"snapshot {epoch} ·")["data"][0]["x"]]
        period = len(labels) // 2 + (len(labels) % 2)  # "phrase⏎phrase": the second copy starts here
        assert labels[period:] == labels[: len(labels) - period]
        q = np.arange(period + 1, len(labels))
        k = q - period + 1
        return float(z[q, k].mean()), float((z[q].argmax(-1) == k).mean())

    weight, share = stripe(at, moment.epoch)
    at.select_slider(key="hist_epoch").set_value(moment.before_epoch).run()
    weight_before, share_before = stripe(at, moment.before_epoch)
    assert share > 0.5 > share_before and weight > weight_before + 0.1, (weight, share, weight_before, share_before)
