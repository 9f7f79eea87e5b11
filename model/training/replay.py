"""A shipped model's recipe as data: its stages (pretrain, fine-tunes, an average, the last fine-tune: whatever
it really was) in ``model/recipes/<task>.json``, replayed stage by stage through the same ``train`` and
``average`` as the command line's.

A recipe is ``{"task": ..., "stages": [stage, ...]}``. A stage has a ``name``, a ``command`` (``train`` or
``average``) and the ``settings`` the run used, as it recorded them (a train stage's are
:class:`~model.training.train.TrainConfig`'s fields; an average's ``checkpoints`` and ``data``). ``recorded``
says whether those settings are the run's own record; where they are not, ``note`` says what is missing and
``assumed`` fills it (the replay uses it; nothing claims it was run). A train stage's ``start`` names the stage
whose weights it starts from, an average's ``stages`` those it averages: the replay puts that stage's output
where the run had its own path (``init_from``, ``checkpoints``)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model.training.averaging import average
from model.training.data import data_dir as find_data
from model.training.train import Progress, TrainConfig, train
from model.zoo import MODELS

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
COMMANDS = ("train", "average")
TRAIN_FIELDS = {f.name for f in dataclasses.fields(TrainConfig)} - {"data_dir", "out_dir", "work_dir"}


def load_recipe(task: str, path: str | Path | None = None) -> dict[str, Any]:
    """The recipe of ``task`` (``model/recipes/<task>.json``, or ``path``), checked: every stage named once, a
    known command, a train stage's settings TrainConfig's fields, every stage it names an earlier one."""
    file = Path(path) if path else RECIPES / (MODELS[task].recipe if task in MODELS else f"{task}.json")
    if not file.exists():
        raise FileNotFoundError(f"no recipe {file}")
    recipe = json.loads(file.read_text(encoding="utf-8"))
    seen: list[str] = []
    for stage in recipe["stages"]:
        name, command = stage["name"], stage["command"]
        if command not in COMMANDS:
            raise ValueError(f"{file}: stage {name!r}: command {command!r} is not one of {', '.join(COMMANDS)}")
        if name in seen:
            raise ValueError(f"{file}: two stages named {name!r}")
        if command == "train" and (unknown := (set(stage["settings"]) | set(stage.get("assumed", {}))) - TRAIN_FIELDS):
            raise ValueError(f"{file}: stage {name!r}: no training setting {', '.join(sorted(unknown))}")
        if missing := [s for s in [stage.get("start"), *stage.get("stages", [])] if s and s not in seen]:
            raise ValueError(f"{file}: stage {name!r} starts from {', '.join(missing)}, not an earlier stage")
        seen.append(name)
    return recipe


def stage_config(
    task: str,
    stage: dict[str, Any],
    *,
    out: Path,
    work: Path,
    outs: dict[str, Path],
    data_dir: str | None = None,
    overrides: dict[str, Any] | None = None,
    model: dict[str, Any] | None = None,
) -> TrainConfig:
    """A train stage's TrainConfig: its settings (``assumed`` under them), its start stage's output as
    ``init_from``, then ``overrides`` (training settings) and ``model`` (model settings) over every stage."""
    settings = {**stage.get("assumed", {}), **stage["settings"], **(overrides or {})}
    if stage.get("start"):
        settings["init_from"] = str(outs[stage["start"]])
    settings["model"] = {
        **stage.get("assumed", {}).get("model", {}),
        **stage["settings"].get("model", {}),
        **(model or {}),
    }
    settings = {k: v for k, v in settings.items() if k != "task"}
    return TrainConfig(task=task, data_dir=data_dir, out_dir=str(out), work_dir=str(work), **settings)


def replay(
    task: str,
    work: str | Path,
    out: str | Path,
    *,
    data_dir: str | None = None,
    overrides: dict[str, Any] | None = None,
    model: dict[str, Any] | None = None,
    recipe: dict[str, Any] | None = None,
    on_stage: Callable[[dict[str, Any]], None] | None = None,
    on_progress: Progress | None = None,
) -> dict[str, Any]:
    """Run every stage of ``task``'s recipe in order: stage S trains (or averages) into ``work/S/out`` with its
    state and snapshots in ``work/S/work``, the last stage into ``out``. A stage stopped half-way resumes from
    its state, as ``train`` does. Returns each stage's result by name (the best validation, or the average's)."""
    recipe = recipe or load_recipe(task)
    work, out = Path(work), Path(out)
    outs: dict[str, Path] = {}
    results: dict[str, Any] = {}
    stages = recipe["stages"]
    for i, stage in enumerate(stages):
        name = stage["name"]
        stage_out = out if i == len(stages) - 1 else work / name / "out"
        (on_stage or (lambda info: None))({"stage": name, "command": stage["command"], "out": str(stage_out)})
        if stage["command"] == "train":
            cfg = stage_config(
                task,
                stage,
                out=stage_out,
                work=work / name / "work",
                outs=outs,
                data_dir=data_dir,
                overrides=overrides,
                model=model,
            )
            results[name] = train(cfg, on_progress)
        else:
            data = stage["settings"].get("data")
            results[name] = average(
                task,
                stage_out,
                checkpoints=[outs[s] for s in stage["stages"]],
                data=find_data(data_dir) / data if data else None,
            )
        outs[name] = stage_out
    return results
