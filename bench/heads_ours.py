"""The head finder on one of our shipped models, each line through the page's run (the per-line path) against
one padded pass per batch of lines (``our_reader``'s ``maps``, issue 44), timed in one run.

    python -m bench.heads_ours [--task generator] [--max-tokens 128] [--threads 0] [--rounds 3] [--device cpu] [--cli]

Times, for both paths in the same process on the model's default corpus: the work of ``python -m model heads
TASK --json`` (the scan and its JSON; loading the checkpoint is left out, it is the same for both) and of one
``score_snapshot`` call (what ``python -m model snapshots`` does per training snapshot: the scan, and the
repeat loss of a causal model), with the ratio per-line / batched, and the largest difference between the two
paths' scores (the batched path must stay within 1e-6), and for scale the floor: the same lines' bare forward
passes with their maps, in the scan's batches. A warm-up scan of two lines runs first; each of
``--rounds`` rounds times both paths, and the medians are reported beside every round's time. ``--cli``
also times the command itself in a fresh process (the batched path: the command as it now runs). Prints one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from statistics import median

from bench._server import emit, log


def timed(fn, *args, **kwargs) -> tuple[float, float, object]:
    """Wall seconds, CPU seconds (every thread) and the result of ``fn(*args, **kwargs)``."""
    t, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t, time.process_time() - cpu, out


def heads_command(reader, lines):
    """What ``python -m model heads TASK --json`` does once the checkpoint is loaded: the scan, then its JSON."""
    from model.analysis.head_scan import scan

    scores = scan(reader, lines)
    json.dumps(scores.to_json(), ensure_ascii=False)
    return scores


def forward_passes(model, batches: list[list[list[int]]]) -> None:
    """The floor: the lines' bare forward passes, maps included, in the scan's own batches of token ids."""
    import torch

    device, pad = next(model.parameters()).device, getattr(model.config, "pad_id", 0)
    with torch.inference_mode():
        for ids in batches:
            T = max(map(len, ids))
            model(torch.tensor([x + [pad] * (T - len(x)) for x in ids], device=device), return_attention=True)


def largest_difference(a, b) -> float:
    """The largest absolute difference between two scans' scores (:class:`HeadScores`), every kind and metric,
    unrounded; infinite where one is NaN and the other not."""
    import numpy as np

    out = 0.0
    for name, tally in a.kinds.items():
        theirs = b.kinds[name].scores()
        for m, mine in tally.scores().items():
            if not np.array_equal(np.isnan(mine), np.isnan(theirs[m])):
                return float("inf")
            out = max(out, float(np.nanmax(np.abs(mine - theirs[m]), initial=0.0)))
    return out


def medians(by_path: dict[str, list[tuple[float, float]]]) -> dict:
    """Per path the median wall and CPU seconds over the rounds and every round's wall seconds; the ratio
    per-line / batched of the medians' wall seconds (and of their CPU seconds)."""
    out: dict = {}
    for path, rounds in by_path.items():
        walls, cpus = zip(*rounds)
        out[path] = {"wall_s": round(median(walls), 3), "cpu_s": round(median(cpus), 3), "walls_s": rounded(walls)}
    out["ratio"] = round(out["per_line"]["wall_s"] / out["batched"]["wall_s"], 2)
    out["cpu_ratio"] = round(out["per_line"]["cpu_s"] / out["batched"]["cpu_s"], 2)
    return out


def rounded(values) -> list[float]:
    return [round(v, 3) for v in values]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="generator", choices=("classifier", "generator"))
    parser.add_argument("--max-tokens", type=int, default=128, help="as python -m model heads (default 128)")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default, as the CLI)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--rounds", type=int, default=3, help="each round times both paths; medians reported")
    parser.add_argument("--cli", action="store_true", help="also time python -m model heads TASK --json")
    args = parser.parse_args()

    import torch

    from model.analysis.head_scan import corpus_name, default_corpus, our_reader, plan, read_corpus, scan
    from model.analysis.snapshots import score_snapshot
    from model.core.checkpoint import default_dir, load_checkpoint

    if args.threads:
        torch.set_num_threads(args.threads)
    ck = load_checkpoint(default_dir(args.task), task=args.task, device=args.device)
    corpus = default_corpus(ck.spec)
    lines = read_corpus(corpus)
    batched = our_reader(ck, args.max_tokens)
    readers = {"per_line": replace(batched, maps=None, length=len, cells=0), "batched": batched}
    for reader in readers.values():  # warm-up: first-call costs are not the pass's
        scan(reader, lines[:2], probes=0)
    ids = [r.inputs["ids"] for r, _ in batched.read(lines)]
    batches = [[ids[i] for i in batch] for batch in plan(batched, lines)]
    times = {part: {path: [] for path in readers} for part in ("heads", "score_snapshot")}  # (wall, cpu) a round
    floor = []
    scores = {}
    for r in range(args.rounds):  # the paths alternate, so a busy spell on a shared machine hits both
        for path, reader in readers.items():
            log(f"round {r + 1}, {path}: heads, then score_snapshot…")
            wall, cpu, scores[path] = timed(heads_command, reader, lines)
            times["heads"][path].append((wall, cpu))
            wall, cpu, _ = timed(score_snapshot, ck, lines, reader)
            times["score_snapshot"][path].append((wall, cpu))
        floor.append(timed(forward_passes, ck.model, batches)[:2])
    summary = {part: medians(by_path) for part, by_path in times.items()}
    model = ck.model.config
    report = {
        "task": args.task,
        "model": f"{model.layers} layers × {model.heads} heads",
        "device": str(batched.device),
        "threads": torch.get_num_threads(),
        "corpus": corpus_name(corpus),
        "lines": len(lines),
        "max_tokens": args.max_tokens,
        "rounds": args.rounds,
        **summary,
        "forward_passes": {
            "wall_s": round(median(w for w, _ in floor), 3),
            "cpu_s": round(median(c for _, c in floor), 3),
        },
        "largest_score_difference": largest_difference(scores["per_line"], scores["batched"]),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    if args.cli:
        log("python -m model heads …")
        command = [sys.executable, "-m", "model", "heads", args.task, "--json", "--device", args.device]
        command += ["--max-tokens", str(args.max_tokens)]
        wall, _, done = timed(subprocess.run, command, capture_output=True, text=True)
        report["cli"] = {
            "command": " ".join(["python", *command[1:]]),
            "wall_s": round(wall, 3),
            "ok": not done.returncode,
        }
    emit(report)


if __name__ == "__main__":
    main()
