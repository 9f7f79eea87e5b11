"""What the benchmark scripts share: a Streamlit server on a free loopback port, Debian's Chromium,
small statistics, their common options, and one JSON object on stdout (progress goes to stderr).

The browser tests (``tests/browser/conftest.py``) start their server with :func:`streamlit_server`
too (``streamlit run serve.py``, headless, no file watcher); it is stopped with its process id only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHECKPOINTS_ENV = "ATTENTION_CHECKPOINTS"  # the app's checkpoint root (model/checkpoint.py reads it)
STARTUP_SECONDS = 120  # the first start imports torch and streamlit on a busy 2-core machine
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


# ------------------------------------------------------------------------------------------- server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except (OSError, urllib.error.URLError):
        return False


@dataclass
class Server:
    url: str  # http://127.0.0.1:<port>
    proc: subprocess.Popen
    log_path: Path
    startup_s: float  # from Popen to the first healthy answer

    @property
    def pid(self) -> int:
        return self.proc.pid


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


def stop(proc: subprocess.Popen) -> None:
    """Terminate one process we started (by its id), then kill it if it will not go."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def streamlit_server(
    *,
    app: str = "serve.py",
    env: dict[str, str] | None = None,
    log_name: str = "streamlit",
    log_path: Path | None = None,
    startup_seconds: float = STARTUP_SECONDS,
) -> Iterator[Server]:
    """``streamlit run <app>`` (a path from the repository root) on a free loopback port, healthy on entry, stopped on exit.

    Its output goes to ``log_path`` (default: a file named after ``log_name`` in the temp
    directory), which errors name. A server that exits or stays unhealthy raises RuntimeError."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable, "-m", "streamlit", "run", app,
        "--server.headless", "true",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    log_path = log_path or Path(tempfile.gettempdir()) / f"bench-{log_name}-{port}.log"
    with open(log_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
        try:
            deadline = time.monotonic() + startup_seconds
            while not healthy(base):
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with code {proc.returncode}; see {log_path}")
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"streamlit did not answer {base}/_stcore/health in {startup_seconds} s; see {log_path}"
                    )
                time.sleep(0.1)
            yield Server(base, proc, log_path, time.perf_counter() - t0)
        finally:
            stop(proc)


# ------------------------------------------------------------------------------------------ browser


def chromium_options() -> dict[str, Any]:
    """Keyword arguments for ``playwright.chromium.launch`` (sync or async API)."""
    if not os.path.exists(CHROMIUM):
        raise RuntimeError(f"{CHROMIUM} is not installed (Debian: apt-get install chromium)")
    return {"executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def launch_chromium(playwright: Any) -> Any:
    """Debian's Chromium, headless. With the async API this returns an awaitable."""
    return playwright.chromium.launch(**chromium_options())


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
