"""The page-latency benchmark itself, run once on the tiny checkpoints: every kind of measurement it
reports (reload, in-app navigation, first and repeated input change) completes without an error.
Its timings are not checked: benchmarks, not timed tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fixtures.server import CHROMIUM, ROOT
from fixtures.tiny import make_checkpoints


def run_bench(*args: str) -> dict:
    """``python -m <args>`` from the repository root; its JSON report (skips without Chromium)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed")
    out = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def test_page_latency_measures_every_kind_on_tiny_models(tmp_path) -> None:
    report = run_bench(
        "bench.page_latency",
        "--runs",
        "1",
        "--cold-runs",
        "0",
        "--checkpoints",
        str(make_checkpoints(tmp_path)),
        "--pages",
        "classifier,translator,pairs",
        "--nav-from",
        "workshop",
        "--timeout-s",
        "120",
    )
    assert report["errors"] == 0, json.dumps({p: v["errors"] for p, v in report["pages"].items()})
    for name, page in report["pages"].items():
        assert page["model_loaded"] is True, name
        assert page["warm_ms"]["n"] == 1, name
        assert page["navigation_ms"]["n"] == 1, name  # the sidebar link back, timed
    for name in ("classifier", "translator"):
        assert report["pages"][name]["interaction_ms"]["n"] == 1
        assert report["pages"][name]["interaction_repeat_ms"]["n"] == 1
    assert "pairs" not in {k.split("_")[0] for k in report["targets"] if "interaction" in k}
    assert report["targets"]["translator_in_app_navigation_median_le_1000ms"]["median_ms"] > 0


def test_paired_measures_page_and_floor_in_the_same_rounds(tmp_path) -> None:
    report = run_bench(
        "bench.paired",
        "--runs",
        "2",
        "--checkpoints",
        str(make_checkpoints(tmp_path)),
        "--pages",
        "classifier,ablation",
        "--timeout-s",
        "120",
    )
    assert report["errors"] == 0, json.dumps({p: v["errors"] for p, v in report["pages"].items()})
    classifier, ablation = report["pages"]["classifier"], report["pages"]["ablation"]
    for what in ("reload", "first", "next"):  # a page with a text box: all three, each round beside the floor
        assert classifier[what]["page_ms"]["n"] == classifier[what]["floor_ms"]["n"] == 2
        assert classifier[what]["ratio_median"] > 0
    assert set(ablation) == {"errors", "reload"} and ablation["reload"]["floor_ms"]["n"] == 2  # no text box of its own
