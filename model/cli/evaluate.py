"""``python -m model evaluate TASK``: one JSON object of metrics, chosen by what the model predicts."""

from __future__ import annotations

import argparse
import json
import sys


def add(sub, tasks: list[str]) -> None:
    e = sub.add_parser("evaluate", help="print one JSON object of metrics")
    e.add_argument("task", choices=tasks, help="which of our models")
    e.add_argument("--checkpoint", default=None, help="checkpoint directory (default: the shipped one)")
    e.add_argument("--src", help="translator: German sentences, one per line (plain or .gz)")
    e.add_argument("--ref", help="translator: English references, one per line (plain or .gz)")
    e.add_argument("--beam", type=int, default=1, help="translator: beam size (1 = greedy)")
    e.add_argument("--data", help="classifier: 'label sentence' lines")
    e.add_argument("--text", help="generator: a text file")
    e.add_argument(
        "--tail",
        type=float,
        default=None,
        metavar="FRACTION",
        help="generator: score only the last FRACTION of the text (0.1 = the validation split)",
    )
    e.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    e.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    from model.core.checkpoint import default_dir, load_checkpoint
    from model.core.devices import pick_device
    from model.training import evaluate

    ck = load_checkpoint(args.checkpoint or default_dir(args.task), task=args.task, device=pick_device(args.device))
    # what the model predicts decides what it is scored on: the flags that kind needs, and its scorer
    scoring = {
        "text": (("src", "ref"), "--src FILE and --ref FILE", evaluate.evaluate_translator, dict(beam_size=args.beam)),
        "classes": (("data",), "--data FILE (lines of 'label sentence')", evaluate.evaluate_classifier, {}),
        "next": (("text",), "--text FILE", evaluate.evaluate_generator, dict(tail=args.tail)),
    }
    flags, usage, score, options = scoring[ck.spec.output]
    if not all(getattr(args, f) for f in flags):
        sys.exit(f"evaluate {args.task} needs {usage}")
    print(json.dumps(score(ck, *(getattr(args, f) for f in flags), **options)))
