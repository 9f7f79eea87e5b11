"""What the benchmark scripts share: small statistics, the checkpoints the app reads, their common
options, and one JSON object on stdout (progress goes to stderr). The Streamlit server and Chromium
they drive are the browser tests' too, in :mod:`fixtures.server`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from fixtures.server import ROOT

CHECKPOINTS_ENV = "ATTENTION_CHECKPOINTS"  # the app's checkpoint root (model/checkpoint.py reads it)
T = TypeVar("T")


def log(*parts: Any) -> None:
    """Progress for the person running the script (stderr, so stdout stays one JSON object)."""
    print(*parts, file=sys.stderr, flush=True)


def emit(result: dict[str, Any]) -> None:
    """The script's one result: a JSON object on stdout."""
    print(json.dumps(result, indent=1, ensure_ascii=False), flush=True)


# ---------------------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation between order statistics
    (numpy's default method). Raises ValueError on an empty sequence."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0..100, not {q}")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: Sequence[float], digits: int = 1) -> dict[str, Any]:
    """Median, p95, min, max and count of ``values`` (None for each when there are none)."""
    if not values:
        return {"n": 0, "median": None, "p95": None, "min": None, "max": None}
    r = lambda v: round(v, digits)
    return {
        "n": len(values),
        "median": r(percentile(values, 50)),
        "p95": r(percentile(values, 95)),
        "min": r(min(values)),
        "max": r(max(values)),
    }


def median_time(fn: Callable[[], Any], repeats: int, *, unit: float = 1e3, warmup: int = 1, digits: int = 2) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls after ``warmup`` untimed ones, in seconds ×
    ``unit`` (1e3: milliseconds, 1e6: microseconds), rounded to ``digits``."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * unit)
    return round(statistics.median(times), digits)


# -------------------------------------------------------------------------------------- checkpoints


def checkpoint_env(checkpoints: str | os.PathLike | None) -> dict[str, str]:
    """Environment that points the app at another checkpoint root (nothing when None)."""
    return {CHECKPOINTS_ENV: str(Path(checkpoints).resolve())} if checkpoints else {}


def checkpoint_root(checkpoints: str | os.PathLike | None = None) -> Path:
    """The root the app reads: the argument, else $ATTENTION_CHECKPOINTS, else ./checkpoints."""
    return Path(checkpoints or os.environ.get(CHECKPOINTS_ENV) or ROOT / "checkpoints")


def has_checkpoint(task: str, checkpoints: str | os.PathLike | None = None) -> bool:
    d = checkpoint_root(checkpoints) / task
    return (d / "model.safetensors").is_file() and (d / "config.json").is_file()


def read_checkpoint_meta(task: str, checkpoints: str | os.PathLike | None = None) -> dict[str, Any] | None:
    """The parsed ``config.json`` of ``task``'s checkpoint, or None when there is none."""
    path = checkpoint_root(checkpoints) / task / "config.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------ options


def add_app_options(
    ap: argparse.ArgumentParser, *, timeout_s: float = 240, timeout_help: str = "per measurement"
) -> None:
    """The options of every browser benchmark: how long a result must hold, the timeout, and the
    checkpoints the app reads (see :func:`run_on_checkpoints`). A smoke test passes the tiny
    random-weight checkpoints it built as ``--checkpoints``."""
    ap.add_argument("--settle-ms", type=float, default=300, help="how long 'rendered' must hold (not counted)")
    ap.add_argument("--timeout-s", type=float, default=timeout_s, help=timeout_help)
    ap.add_argument(
        "--checkpoints",
        default=None,
        help="checkpoint root for the app (default: $ATTENTION_CHECKPOINTS or ./checkpoints)",
    )


def run_on_checkpoints(run: Callable[[argparse.Namespace], T], args: argparse.Namespace) -> tuple[T, str]:
    """``run(args)`` and which checkpoints the app read, for the report."""
    return run(args), str(args.checkpoints or "default (./checkpoints or $ATTENTION_CHECKPOINTS)")
