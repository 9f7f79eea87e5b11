"""How long each shipped checkpoint takes to load (safetensors + JSON into a fresh model on CPU).

    python -m bench.load_time [--repeats 5] [--checkpoints DIR]

Each load runs in a fresh Python process, so nothing is cached in the interpreter (the operating
system's file cache stays warm after the first repeat). Reports, per task, the file size and the
median and maximum load time over the repeats, beside the target of 2 seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from bench._server import CHECKPOINTS_ENV, checkpoint_root, emit, log
from fixtures.server import ROOT

TASKS = ("classifier", "generator", "translator")
TARGET_S = 2.0
CHILD = """
import json, sys, time
import torch  # imported before the clock starts: the app has torch loaded long before a model
from model.core.checkpoint import load_checkpoint
t = time.perf_counter()
ck = load_checkpoint(sys.argv[1], task=sys.argv[2], device="cpu")
print(json.dumps({"seconds": time.perf_counter() - t, "params": sum(p.numel() for p in ck.model.parameters())}))
"""


def load_once(directory: str, task: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, directory, task], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--checkpoints", default=None, help="checkpoint root (default: $ATTENTION_CHECKPOINTS or ./checkpoints)"
    )
    args = ap.parse_args()
    root = checkpoint_root(args.checkpoints)
    results = {}
    for task in TASKS:
        directory = root / task
        weights = directory / "model.safetensors"
        if not weights.is_file():
            results[task] = {"error": f"no checkpoint at {directory}"}
            log(f"{task}: missing")
            continue
        runs = [load_once(str(directory), task) for _ in range(args.repeats)]
        seconds = [r["seconds"] for r in runs]
        results[task] = {
            "file_mb": round(weights.stat().st_size / 2**20, 2),
            "params": runs[0]["params"],
            "median_s": round(statistics.median(seconds), 3),
            "max_s": round(max(seconds), 3),
            "met": max(seconds) < TARGET_S,
        }
        log(f"{task}: {results[task]}")
    emit(
        {
            "benchmark": "load_time",
            "checkpoints": str(root),
            "env": os.environ.get(CHECKPOINTS_ENV, ""),
            "repeats": args.repeats,
            "target_s": TARGET_S,
            "tasks": results,
        }
    )


if __name__ == "__main__":
    main()
