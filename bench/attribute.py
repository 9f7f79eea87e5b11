"""Contributions beside attention: every method for one query row, timed, beside the floor page's change.

    python -m bench.attribute [--runs 5] [--hub-tokens 128] [--no-floor] [--hub-size small]

For each shipped model (``checkpoints/``, or ``--checkpoints``), every kind of attention, the last query
row: the seconds of one :func:`model.analysis.attribute.attribute` (attention, the norms, value zeroing,
rollout and gradient × attention together), median over ``--runs`` after one warm-up, in this process
with ``--threads`` torch threads. Then a GPT-2-small-shaped Hugging Face model (12 layers × 12 heads,
random weights, no download: ``bench.hub.build``) on a text of ``--hub-tokens`` tokens: the seconds of
:func:`model.hub.attribute.attribute` for its last row, beside the issue's 3 s. Unless ``--no-floor``, the
floor page's input change (``bench/floor_app.py``, one text box and one heatmap, in headless Chromium, as
``bench.explain`` measures it) is measured in the same run, and each model's median is given as a ratio to
the floor's median change (the issue's target: within 2×). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._server import checkpoint_root, emit, log, summary

TEXTS = {
    "classifier": "the acting is wonderful but the plot is thin and the ending far too long",
    "generator": "ROMEO:\nBut soft, what light through yonder window breaks? It is the east, and Juliet is the sun.",
    "translator": "ein mann fährt fahrrad im park und zwei hunde spielen im schnee .",
}


def timed(fn, runs: int) -> list[float]:
    """Milliseconds of ``runs`` calls after one warm-up call."""
    fn()
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def ours(root: Path, runs: int) -> dict[str, Any]:
    from model.analysis.attribute import attribute
    from model.analysis.runs import run
    from model.core.checkpoint import load_checkpoint

    out = {}
    for task, text in TEXTS.items():
        ck = load_checkpoint(root / task, task=task)
        result = run(ck, text)
        for name, kind in result.kinds.items():
            query = len(kind.queries) - 1
            times = timed(lambda ck=ck, r=result, n=name, q=query, v=kind: attribute(ck, r.inputs, n, q, view=v), runs)
            out[f"{task}/{name}"] = {
                "keys": len(kind.keys),
                "layers": kind.layers,
                "heads": kind.heads,
                "ms": summary(times),
            }
            log(f"{task} {name}: {statistics.median(times):.1f} ms")
    return out


def hub(tokens: int, runs: int, size: str) -> dict[str, Any]:
    from bench.hub import build
    from model.hub.attribute import attribute
    from model.hub.load import load
    from model.hub.run import run

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "gpt2"
        built = build(folder, size)
        h = load(str(folder))
        words = " ".join(f"word{i}" for i in range(4 * tokens))  # more than enough; cut to --hub-tokens
        result = run(h, words, max_tokens=tokens).result
        kind = result.kinds["decoder"]
        query = len(kind.queries) - 1
        times = timed(lambda: attribute(h, result, "decoder", query), runs)
        log(f"hub {size}: {statistics.median(times):.0f} ms at {len(kind.keys)} tokens")
        return {
            "model": f"GPT-2 {size} shape, random weights",
            **built,
            "layers": kind.layers,
            "heads": kind.heads,
            "tokens": len(kind.keys),
            "ms": summary(times),
            "target_ms": 3000,
        }


def floor(runs: int) -> list[float]:
    from playwright.sync_api import sync_playwright

    from bench.explain import floor_changes
    from fixtures.server import launch_chromium

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            return floor_changes(browser, runs, {}, 120_000)
        finally:
            browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the app's default is torch's)")
    ap.add_argument(
        "--checkpoints", default=None, help="checkpoint root (default: $ATTENTION_CHECKPOINTS or ./checkpoints)"
    )
    ap.add_argument("--hub-tokens", type=int, default=128)
    ap.add_argument("--hub-size", default="small", choices=["small", "tiny"], help="tiny: for the smoke test")
    ap.add_argument("--no-floor", action="store_true", help="skip the browser floor (no ratios)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    result: dict[str, Any] = {"threads": args.threads, "runs": args.runs}
    if not args.no_floor:
        result["floor_change_ms"] = summary(floor(args.runs))
    result["ours"] = ours(checkpoint_root(args.checkpoints), args.runs)
    result["hub"] = hub(args.hub_tokens, args.runs, args.hub_size)
    base = result.get("floor_change_ms", {}).get("median")
    if base:
        for entry in result["ours"].values():
            entry["ratio_to_floor_change"] = round(entry["ms"]["median"] / base, 2)
    emit(result)


if __name__ == "__main__":
    main()
