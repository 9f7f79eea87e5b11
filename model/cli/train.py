"""``python -m model train TASK``: one training run, resumable from its work folder. The flags are
:class:`~model.training.train.TrainConfig`'s fields; a flag not given keeps that field's default."""

from __future__ import annotations

import argparse
import json

from model.cli.options import add_flags, flags, given, key_values
from model.training.data import data_dir
from model.training.train import TrainConfig

# (flag, value type) of every training setting `train` takes as --flag
TRAIN_OPTIONS = tuple((name, typ) for name, typ, _ in flags(TrainConfig))


def add(sub, tasks: list[str]) -> None:
    t = sub.add_parser("train", help="train a model; resumes from --work after an interruption")
    t.add_argument("task", choices=tasks, help="which of our models")
    add_flags(t, TrainConfig, helps={"data-dir": f"dataset directory (default: $ATTENTION_DATA_DIR or {data_dir()})"})
    t.add_argument("--set", action="append", metavar="KEY=JSON", help="override a model setting, e.g. --set dim=128")
    t.set_defaults(func=run)


def progress_bar(task: str):
    """A progress callback for ``train``: a tqdm bar over the steps, every other event printed as JSON.
    Returns ``(callback, close)``."""
    from tqdm import tqdm

    bar = None

    def progress(info: dict) -> None:
        nonlocal bar
        event = info["event"]
        if event == "start":
            print(f"{task}: {info['params']:,} parameters on {info['device']}, {info['total_steps']} steps", flush=True)
            if bar is not None:
                bar.close()
            bar = tqdm(total=info["total_steps"], unit="step", dynamic_ncols=True, mininterval=2.0)
        elif event == "step" and bar is not None:
            bar.n = info["step"]
            bar.set_postfix(
                loss=f"{info['loss']:.3f}", tok_s=f"{info['tokens_per_s']:.0f}", lr=f"{info['lr']:.1e}", refresh=False
            )
            bar.update(0)
        else:
            (bar.write if bar else print)(json.dumps(info))

    def close() -> None:
        if bar is not None:
            bar.close()

    return progress, close


def config(args: argparse.Namespace) -> TrainConfig:
    """The run's settings: the flags given, the dataclass's defaults for the rest."""
    return TrainConfig(task=args.task, **given(args, TrainConfig), model=key_values(args.set))


def run(args: argparse.Namespace) -> None:
    from model.training.train import train

    cfg = config(args)
    progress, close = progress_bar(cfg.task)
    best = train(cfg, progress)
    close()
    print(json.dumps({"best": best}))
