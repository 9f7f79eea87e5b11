"""``python -m model average TASK``: the mean of one run's epoch snapshots, or of checkpoints fine-tuned from one
start (a model soup), shipped as a checkpoint (:mod:`model.training.averaging`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add(sub, tasks: list[str]) -> None:
    a = sub.add_parser("average", help="ship the mean of saved epoch snapshots, or of checkpoints, as a checkpoint")
    a.add_argument("task", choices=tasks, help="which of our models")
    a.add_argument("--epochs", default=None, help="a range of snapshot epochs, e.g. 9-16")
    a.add_argument("--checkpoints", nargs="+", default=None, help="checkpoint directories fine-tuned from one start")
    a.add_argument("--data", help="classifier: labelled sentences, to record the averaged model's accuracy")
    a.add_argument("--work", default=None, help="where the snapshots are (default: runs/<task>)")
    a.add_argument("--base", default=None, help="checkpoint giving config and vocabularies (default: --out)")
    a.add_argument("--out", default=None, help="where the averaged checkpoint goes (default: checkpoints/<task>)")
    a.add_argument("--src", help="translator: validation German, to record the averaged model's BLEU")
    a.add_argument("--ref", help="translator: validation English")
    a.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from model.core.checkpoint import default_dir
    from model.training.averaging import average

    if bool(args.epochs) == bool(args.checkpoints):
        sys.exit("average needs --epochs (one run's snapshots) or --checkpoints (a soup of fine-tunes), not both")
    out = Path(args.out) if args.out else default_dir(args.task)
    epochs = None
    if args.epochs:
        first, _, last = args.epochs.partition("-")
        epochs = list(range(int(first), int(last or first) + 1))
    try:
        results = average(
            args.task,
            out,
            checkpoints=args.checkpoints,
            epochs=epochs,
            work=args.work,
            base=args.base,
            data=args.data,
            src=args.src,
            ref=args.ref,
        )
    except (FileNotFoundError, ValueError) as err:
        sys.exit(str(err))
    print(json.dumps({"out": str(out), **results}))
