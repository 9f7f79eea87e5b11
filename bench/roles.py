"""The head finder's scores of one long run, as a model page computes them for its "Head finder roles" caption
(``model.analysis.heads.line_sums``): seconds and peak memory on a GPT-2-shaped run (12 layers × 12 heads,
causal, random peaked heads: fixtures/long_runs.py) held as the page holds it (its causal triangle).

    python -m bench.roles [--tokens 1024] [--whole]

Each measure runs in a process of its own: the growth printed is the resident memory's peak during the
scoring (``VmHWM``, reset just before it) less the resident memory when it started. ``--whole`` also scores
the map whole (``CHUNK`` set past its size), as ``line_sums`` did before it worked a block of heads at a
time: at 1,024 tokens that takes several GB. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import emit, log  # noqa: E402


def measure(tokens: int, whole: bool) -> dict:
    """Score one run in this process: seconds and the peak's growth (MB)."""
    import model.analysis.heads as heads
    from fixtures.long_runs import long_run

    (kind,) = long_run(tokens)
    if whole:
        heads.CHUNK = 1 << 62
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) from here on (Linux)
    before, t = status_mb("VmRSS"), time.perf_counter()
    heads.line_sums(kind.weights, cross=False)
    return {
        "held_as": type(kind.weights).__name__,
        "held_mb": round(kind.weights.nbytes / 2**20, 1),
        "seconds": round(time.perf_counter() - t, 2),
        "peak_growth_mb": round(status_mb("VmHWM") - before, 1),
    }


def status_mb(field: str) -> float:
    """A memory figure of this process from ``/proc/self/status`` (MB)."""
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--whole", action="store_true", help="also the whole map at once (several GB at 1,024)")
    parser.add_argument("--child", choices=("blocks", "whole"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.tokens, args.child == "whole")))
        return
    out = {"shape": f"12 layers × 12 heads, causal, {args.tokens} tokens"}
    for mode in ("blocks", "whole") if args.whole else ("blocks",):
        log(f"scoring ({mode})…")
        child = [sys.executable, "-m", "bench.roles", "--tokens", str(args.tokens), "--child", mode]
        done = subprocess.run(
            child, capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1]
        )
        out[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    emit(out)


if __name__ == "__main__":
    main()
