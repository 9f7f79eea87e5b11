"""The head finder's corpus pass on a GPT-2-small-shaped Hugging Face model (12 layers × 12 heads, random
weights, built locally as ``bench.hub`` builds it): seconds for ``--lines`` lines of at most ``--max-tokens``
tokens, and memory.

    python -m bench.heads [--lines 200] [--max-tokens 64] [--threads 2] [--size small]

The lines are the shipped English sample (model/analysis/corpora/english.txt), consecutive captions joined until a
line reaches ``--max-tokens`` tokens, so most lines are read at the full length. Reports the scan's seconds
(every line run through the model, every head scored, the induction probes), the throughput, the process's
resident memory before and after and its peak, and for scale what keeping every line's maps would take
(``lines × layers × heads × tokens² × 4`` bytes), which the streaming pass never holds. Target: ≤ 30 s for
200 lines of ≤ 64 tokens. The process's CPU time and the load average are printed beside the wall time: on
a machine whose cores others use too, the wall time waits for them. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from bench._server import emit, log


def rss_mb() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def long_lines(tokenizer, n: int, max_tokens: int) -> list[str]:
    """``n`` lines of the English sample, each joined from consecutive captions up to ``max_tokens`` tokens."""
    from model.analysis.head_scan import CORPORA, read_corpus

    captions = read_corpus(CORPORA / "english.txt")
    out, i = [], 0
    while len(out) < n:
        line = captions[i % len(captions)]
        i += 1
        while len(tokenizer(line + " " + captions[i % len(captions)])["input_ids"]) <= max_tokens:
            line += " " + captions[i % len(captions)]
            i += 1
        out.append(line)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", default="small", choices=("small", "tiny"), help="tiny: the smoke test's model")
    args = parser.parse_args()

    import torch

    from bench.hub import build
    from model.analysis.head_scan import scan
    from model.hub.load import load
    from model.hub.reader import hub_reader

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "gpt2-random"
        log("building the model…")
        built = build(folder, args.size)
        hub = load(str(folder))
        lines = long_lines(hub.tokenizer, args.lines, args.max_tokens)
        tokens = [min(len(hub.tokenizer(line)["input_ids"]), args.max_tokens) for line in lines]
        reader = hub_reader(hub, args.max_tokens)
        reader.read(lines[0])  # warm-up: first-call costs are not the pass's
        before, peak_before = rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        log(f"scanning {len(lines)} lines…")
        t, cpu = time.perf_counter(), time.process_time()
        scores = scan(reader, lines)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        after, peak = rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    L, H = scores.kinds["decoder"].shape
    every_map = sum(L * H * n * n * 4 for n in tokens) / 2**20
    emit(
        {
            "model": f"GPT-2-shaped, random weights ({args.size}): {L} layers × {H} heads, {hub.params:,} parameters",
            **built,
            "threads": args.threads,
            "lines": len(lines),
            "tokens_per_line": {"mean": round(sum(tokens) / len(tokens), 1), "max": max(tokens)},
            "scan_s": round(seconds, 2),
            "scan_cpu_s": round(cpu, 2),  # every thread's CPU time: on a shared machine, wall time also waits
            "load_average_1min": round(os.getloadavg()[0], 2),
            "lines_per_s": round(len(lines) / seconds, 1),
            "target_s": 30,
            "met": seconds <= 30,
            "rss_before_mb": round(before, 1),
            "rss_after_mb": round(after, 1),
            "peak_rss_mb": round(peak, 1),
            "peak_growth_during_scan_mb": round(max(0.0, peak - peak_before), 1),
            "every_map_would_take_mb": round(every_map, 1),
        }
    )


if __name__ == "__main__":
    main()
