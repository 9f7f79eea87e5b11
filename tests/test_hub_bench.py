"""bench/hub.py runs end to end on a tiny GPT-2 and prints the JSON it promises (no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

from fixtures.server import ROOT


def test_hub_benchmark_runs_on_a_tiny_model() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.hub", "--size", "tiny", "--repeats", "1", "--runs", "1", "--generate", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["params"] < 1_000_000 and out["tokens"] > 10 and out["generated_tokens"] == 2
    assert out["rss_loaded_mb"] >= out["rss_before_load_mb"] > 0 and out["peak_rss_mb"] >= out["rss_loaded_mb"]
    for key in ("load_s_median", "run_ms_median", "generate_2_ms_median", "explain_ms_median"):
        assert out[key] > 0
