"""The head finder's corpus pass against the same lines' bare forward passes, in one run (issue 44): on a
GPT-2-small-shaped Hugging Face model with random weights (12 layers × 12 heads), or with ``--size llama1b``
a Llama-3.2-1B-shaped one (16 layers × 32 query heads on 8 key/value heads), built locally as ``bench.hub``
builds it, for each ``LINESxTOKENS`` of ``--sizes``.

    python -m bench.heads_device [--sizes 10x512,200x64] [--rounds 3] [--threads 2] [--device auto] [--size small]

The lines are the shipped English sample joined up to the length (``bench.heads.long_lines``). The forward
passes read the lines in the scan's own batches (:func:`model.analysis.head_scan.plan`: the same padding),
tokenised and with every layer's maps returned (``output_attentions``), as the scan reads them; the scan
adds every head's scores, the per-line examples and the induction probes. Each round times the forward
passes, then the scan; the ratio is the median of the rounds' ratios (a machine whose cores others use
moves both, and a round's two timings are seconds apart); ``cpu_ratio`` is the same of the process's CPU
seconds, which waits less on others' work. Wall and CPU seconds of each round are printed. Target on a
CPU: scan ≤ 1.2 × the forward passes; on one GPU ≤ 2 ×. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench._server import emit, log
from bench.hub import SHAPES

MODELS = {"small": "GPT-2-small-shaped", "tiny": "GPT-2-shaped", "llama1b": "Llama-3.2-1B-shaped"}


def hub_params(built: dict) -> int:
    """A parameter cap that lets the built model in: its float32 weights' size in bytes over 4, and 150M at least."""
    return max(150_000_000, int(built["weights_mb"] * 2**20 / 4))


def forward_passes(hub, reader, lines, batches) -> None:
    """Every batch of lines through the base model with its maps, as the scan reads them, maps let go."""
    import torch

    tok, pad = hub.tokenizer, hub.tokenizer.pad_token_id or 0
    for batch in batches:
        ids = [list(tok(lines[i], truncation=True, max_length=reader.max_tokens)["input_ids"]) for i in batch]
        T = max(len(x) for x in ids)
        x = torch.tensor([i + [pad] * (T - len(i)) for i in ids], device=hub.device)
        mask = torch.tensor([[1] * len(i) + [0] * (T - len(i)) for i in ids], device=hub.device)
        with torch.inference_mode():
            maps = hub.model.base_model(input_ids=x, attention_mask=mask, output_attentions=True).attentions
        maps[-1].sum().item()  # waits for the device
        del maps


def timed(fn, *args) -> tuple[float, float]:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - t, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10x512,200x64", help="LINESxTOKENS, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    parser.add_argument(
        "--size",
        default="small",
        choices=SHAPES,
        help="small: GPT-2 small; llama1b: Llama-3.2-1B; tiny: the smoke test's",
    )
    args = parser.parse_args()

    import torch

    from bench.heads import long_lines
    from bench.hub import build
    from model.analysis.head_scan import plan, scan
    from model.core.devices import choose
    from model.hub.load import load
    from model.hub.reader import hub_reader

    torch.set_num_threads(args.threads)
    device = choose(args.device)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "gpt2-random"
        log("building the model…")
        built = build(folder, args.size)
        hub = load(str(folder), device=device, limit=2 * hub_params(built))
        for size in args.sizes.split(","):
            n, tokens = (int(x) for x in size.lower().split("x"))
            lines = long_lines(hub.tokenizer, n, tokens)
            reader = hub_reader(hub, tokens)
            batches = plan(reader, lines)
            lengths = [reader.length(line) for line in lines]
            scan(reader, lines[:2])  # warm-up: first-call costs are neither's
            forward_passes(hub, reader, lines, batches[:1])
            rounds = []
            for r in range(args.rounds):
                log(f"{n} × {tokens}: round {r + 1} of {args.rounds}")
                f = timed(forward_passes, hub, reader, lines, batches)
                s = timed(scan, reader, lines)
                rounds.append((f, s))
            ratios = [s[0] / f[0] for f, s in rounds]
            forward_s = statistics.median(f[0] for f, _ in rounds)
            scan_s = statistics.median(s[0] for _, s in rounds)
            target = 1.2 if device.type == "cpu" else 2.0
            results.append(
                {
                    "lines": n,
                    "max_tokens": tokens,
                    "tokens_per_line": {"mean": round(sum(lengths) / n, 1), "max": max(lengths)},
                    "batches": len(batches),
                    "forward_s": round(forward_s, 3),
                    "scan_s": round(scan_s, 3),
                    "ratio": round(statistics.median(ratios), 3),
                    "cpu_ratio": round(statistics.median(s[1] / max(f[1], 1e-9) for f, s in rounds), 3),
                    "rounds": [
                        {
                            "forward_s": round(f[0], 3),
                            "scan_s": round(s[0], 3),
                            "forward_cpu_s": round(f[1], 2),
                            "scan_cpu_s": round(s[1], 2),
                            "ratio": round(s[0] / f[0], 3),
                        }
                        for f, s in rounds
                    ],
                    "scan_lines_per_s": round(n / scan_s, 2),
                    "target_ratio": target,
                    "met": statistics.median(ratios) <= target,
                }
            )
    emit(
        {
            "model": f"{MODELS[args.size]}, random weights ({args.size}), {hub.params:,} parameters",
            **built,
            "device": str(device) if device.type != "cuda" else torch.cuda.get_device_name(device),
            "threads": args.threads,
            "load_average_1min": round(os.getloadavg()[0], 2),
            "sizes": results,
        }
    )


if __name__ == "__main__":
    main()
