"""Each shipped model's recipe is data (model/recipes/<task>.json): ``python -m model recipe TASK --json`` prints
its stages, ``--run`` replays them through ``train`` and ``average``, and its last stage is the shipped
checkpoint's own training record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from model.__main__ import main
from model.core.checkpoint import load_checkpoint
from model.training.train import TrainConfig
from tests.test_cli import data  # noqa: F401  (a fixture: tiny SST-2, Tiny Shakespeare and Multi30k)

ROOT = Path(__file__).resolve().parents[1]
TASKS = ("classifier", "generator", "translator")
FIELDS = {f.name for f in dataclasses.fields(TrainConfig)}
# what a checkpoint's record holds beside the settings: what the run measured, and the card's words (the model
# card's sentence, edited for students on its own; the recipe keeps the words the run was given)
MEASURED = ("history", "params", "device_name", "card")


def recipe(task: str, capsys) -> dict:
    capsys.readouterr()
    main(["recipe", task, "--json"])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("task", TASKS)
def test_json_prints_the_stages_in_order(task: str, capsys) -> None:
    stages = recipe(task, capsys)["stages"]
    names = [s["name"] for s in stages]
    assert len(set(names)) == len(names) and stages[-1]["command"] == "train"
    for i, stage in enumerate(stages):
        assert stage["command"] in ("train", "average") and isinstance(stage["settings"], dict)
        assert isinstance(stage["recorded"], bool) and stage["source"]
        if not stage["recorded"]:
            assert stage["note"], f"{stage['name']}: an unrecorded stage says what is missing"
        if stage["command"] == "train":
            assert set(stage["settings"]) | set(stage.get("assumed", {})) <= FIELDS
        for earlier in [stage.get("start"), *stage.get("stages", [])]:
            assert earlier is None or earlier in names[:i], f"{stage['name']} starts from a later stage"


def test_the_stages_are_the_ones_the_docs_describe(capsys) -> None:
    classifier = recipe("classifier", capsys)["stages"]
    assert [s["command"] for s in classifier] == ["train", "train", "train", "average", "train"]
    assert classifier[0]["settings"]["objective"] == "mlm" and classifier[0]["settings"]["pos_init"] == "word"
    assert classifier[3]["stages"] == [classifier[1]["name"], classifier[2]["name"]]
    assert classifier[4]["start"] == classifier[3]["name"]
    assert [s["command"] for s in recipe("generator", capsys)["stages"]] == ["train"]
    ta, tuned = recipe("translator", capsys)["stages"]
    assert ta["settings"]["init_from"] is None and tuned["start"] == ta["name"]


@pytest.mark.parametrize("task", TASKS)
def test_the_last_stage_is_the_shipped_checkpoints_record(task: str, capsys) -> None:
    """A model retrained and shipped without its recipe fails here."""
    training = json.loads((ROOT / "checkpoints" / task / "config.json").read_text(encoding="utf-8"))["training"]
    last = recipe(task, capsys)["stages"][-1]
    assert last["recorded"] is True
    settings = {k: v for k, v in last["settings"].items() if k not in MEASURED}
    assert settings == {k: v for k, v in training.items() if k not in MEASURED}


def test_a_bad_recipe_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    stage = {"name": "a", "command": "train", "settings": {"epochs": 1}}
    for stages, message in (
        ([{**stage, "command": "fit"}], "command 'fit'"),
        ([stage, stage], "two stages named 'a'"),
        ([{**stage, "settings": {"epoch": 1}}], "no training setting epoch"),
        ([{**stage, "start": "b"}], "starts from b"),
    ):
        bad.write_text(json.dumps({"stages": stages}))
        with pytest.raises(SystemExit, match=message):
            main(["recipe", "classifier", "--json", "--recipe", str(bad)])


# tiny sizes and one short epoch for every stage; the device and threads are this machine's
TINY = {
    "classifier": (["dim=16", "heads=2", "ff_dim=32", "max_len=16"], ["batch_size=4"]),
    "generator": (["dim=16", "heads=2", "layers=1", "ff_dim=32", "block_size=16"], ["batch_size=4", "eval_every=3"]),
    "translator": (
        ["dim=16", "heads=2", "enc_layers=1", "dec_layers=1", "ff_dim=32", "min_freq=1"],
        ["batch_size=60", "eval_every=2"],
    ),
}
LEXICON = "good\t1.9\t0.9\t[2]\ndull\t-1.7\t0.5\t[-2]\nwonderful\t2.7\t0.6\t[3]\nawful\t-2.0\t0.7\t[-2]\n"


def replay(task: str, data: Path, tmp_path: Path, capsys) -> tuple[list[dict], Path, Path]:  # noqa: F811
    model, train = TINY[task]
    (tmp_path / "lexicon.txt").write_text(LEXICON, encoding="utf-8")
    every = ["epochs=2", "warmup=1", "max_minutes=0", "threads=0", 'device="cpu"']
    every += [f"lexicon={json.dumps(str(tmp_path / 'lexicon.txt'))}"] if task == "classifier" else []
    work, out = tmp_path / "work", tmp_path / "out"
    argv = ["recipe", task, "--run", "--work", str(work), "--out", str(out), "--data-dir", str(data)]
    for kv in every + train:
        argv += ["--override", kv]
    for kv in model:
        argv += ["--set", kv]
    capsys.readouterr()
    main(argv)
    return recipe(task, capsys)["stages"], work, out


@pytest.mark.parametrize("task", TASKS)
def test_run_replays_every_stage_and_keeps_snapshots_where_the_shipped_run_did(
    task: str,
    data: Path,  # noqa: F811
    tmp_path: Path,
    capsys,
) -> None:
    stages, work, out = replay(task, data, tmp_path, capsys)
    assert load_checkpoint(out, task=task, device="cpu").training["epochs"] == 2  # the shipped kind of checkpoint
    for i, stage in enumerate(stages):
        where = out if i == len(stages) - 1 else work / stage["name"] / "out"
        record = json.loads((where / "config.json").read_text(encoding="utf-8"))["training"]
        assert (where / "model.safetensors").exists()
        if stage["command"] == "average":
            assert record["averaged_checkpoints"] == [str(work / s / "out") for s in stage["stages"]]
            continue
        settings = {**stage.get("assumed", {}), **stage["settings"]}
        snapshots = sorted((work / stage["name"] / "work").glob("epoch*.safetensors"))
        assert len(snapshots) == (2 if settings["keep_snapshots"] or settings["average_last"] else 0), stage["name"]
        assert record["epochs"] == 2 and record["device"] == "cpu" and len(record["history"]) >= 1
        assert record["objective"] == settings["objective"] and record["pos_init"] == settings["pos_init"]
        if stage.get("start"):  # started from the stage it names, not from the path the shipped run had
            assert record["init_from"] == str(work / stage["start"] / "out")


def test_the_classifiers_replay_averages_its_fine_tunes_and_keeps_the_frozen_block(
    data: Path,  # noqa: F811
    tmp_path: Path,
    capsys,
) -> None:
    stages, work, out = replay("classifier", data, tmp_path, capsys)
    soup, tunes = stages[3], stages[3]["stages"]
    weights = [load_file(str(work / t / "out" / "model.safetensors")) for t in tunes]
    averaged = load_file(str(work / soup["name"] / "out" / "model.safetensors"))
    for name, value in averaged.items():
        torch.testing.assert_close(value, (weights[0][name] + weights[1][name]) / 2)
    assert load_checkpoint(work / soup["name"] / "out", task="classifier").results["dev_accuracy"] >= 0
    final = load_file(str(out / "model.safetensors"))
    frozen = [n for n in averaged if n.startswith(("pos_emb", "blocks.0."))]
    assert frozen and all(torch.equal(final[n], averaged[n]) for n in frozen)
    assert not torch.equal(final["head.weight"], averaged["head.weight"])
    lexicon = load_checkpoint(out, task="classifier").training["lexicon"]
    assert lexicon == str(tmp_path / "lexicon.txt")
