"""``python -m model snapshots TASK --work DIR``: score each kept training snapshot's heads into history.json."""

from __future__ import annotations

import argparse
import json
import sys


def add(sub, tasks: list[str]) -> None:
    sn = sub.add_parser("snapshots", help="score each kept training snapshot's heads into history.json")
    sn.add_argument("task", choices=tasks, help="which of our models")
    sn.add_argument("--work", required=True, help="the training run's work directory (trained with --keep-snapshots)")
    sn.add_argument("--checkpoint", default=None, help="the checkpoint whose history.json gets the scores")
    sn.add_argument("--corpus", default=None, help="a text file, one sequence a line (default: the model's sample)")
    sn.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    sn.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    """Score every kept snapshot of a training run and add each role's best head to ``history.json``."""
    from pathlib import Path

    from model.analysis.head_scan import default_corpus, read_corpus
    from model.analysis.snapshots import score_snapshots, write_roles
    from model.core.checkpoint import CheckpointError, default_dir, load_checkpoint
    from model.core.devices import pick_device

    out = Path(args.checkpoint) if args.checkpoint else default_dir(args.task)
    try:
        ck = load_checkpoint(out, task=args.task, device=pick_device(args.device))
        lines = read_corpus(args.corpus or default_corpus(ck.spec))
        scored = score_snapshots(
            ck,
            Path(args.work),
            lines,
            progress=lambda i, n: print(f"snapshot {i} of {n}", file=sys.stderr),
            each=lambda so_far: write_roles(out, so_far, Path(args.work)),  # a stopped run keeps what it scored
        )
    except (CheckpointError, FileNotFoundError, ValueError) as err:
        sys.exit(f"error: {err}")
    print(json.dumps({str(e): v for e, v in scored.items()}))
