"""``python -m model recipe TASK``: the stages that made the shipped model (model/recipes/TASK.json); ``--json``
prints them, ``--run`` replays them stage by stage through ``train`` and ``average``
(:mod:`model.training.replay`)."""

from __future__ import annotations

import argparse
import json
import sys

from model.cli.options import key_values


def add(sub, tasks: list[str]) -> None:
    r = sub.add_parser("recipe", help="print (--json) or replay (--run) the stages that made a shipped model")
    r.add_argument("task", choices=tasks, help="which of our models")
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument("--json", action="store_true", help='print {"stages": [{"name", "command", "settings"}, ...]}')
    what.add_argument("--run", action="store_true", help="replay every stage in order (a stopped one resumes)")
    r.add_argument(
        "--work", default=None, help="each stage's output, state and snapshots (default: runs/recipe/<task>)"
    )
    r.add_argument("--out", default=None, help="where the last stage's checkpoint goes (default: checkpoints/<task>)")
    r.add_argument(
        "--data-dir", default=None, help="dataset directory (default: $ATTENTION_DATA_DIR or the shared data)"
    )
    r.add_argument("--recipe", default=None, metavar="FILE", help="another recipe file (default: the shipped one's)")
    r.add_argument(
        "--override",
        action="append",
        metavar="KEY=JSON",
        help="a training setting for every train stage, e.g. --override device='\"cpu\"' or --override epochs=1",
    )
    r.add_argument("--set", action="append", metavar="KEY=JSON", help="a model setting for every train stage")
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from pathlib import Path

    from model.core.checkpoint import default_dir
    from model.training.replay import load_recipe, replay

    try:
        recipe = load_recipe(args.task, args.recipe)
    except (FileNotFoundError, ValueError) as err:
        sys.exit(f"error: {err}")
    if args.json:
        print(json.dumps(recipe, indent=1, ensure_ascii=False))
        return
    from model.cli.train import progress_bar

    progress, close = progress_bar(args.task)
    results = replay(
        args.task,
        Path(args.work) if args.work else Path("runs") / "recipe" / args.task,
        Path(args.out) if args.out else default_dir(args.task),
        data_dir=args.data_dir,
        overrides=key_values(args.override),
        model=key_values(args.set),
        recipe=recipe,
        on_stage=lambda info: print(json.dumps({"event": "stage", **info}), flush=True),
        on_progress=progress,
    )
    close()
    print(json.dumps({"stages": results}))
