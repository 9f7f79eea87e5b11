"""What one Streamlit widget (or one plotly chart) costs a page's warm render in the browser, by kind.

    python -m bench.widgets [--count 20] [--runs 8] [--rounds 2] [--kinds selectbox,radio,...]

For each kind, ``bench/widgets_app.py`` (the floor page: one text box and one 20 × 20 heatmap) is
served with ``--count`` widgets of that kind above the heatmap, and reloaded ``--runs`` times in
Chromium, timed as ``bench.page_latency`` times a warm render (navigation start to the heatmap drawn
and the script finished, on the page's clock). ``none`` is the floor itself. Kinds are measured in
turn, ``--rounds`` times over, so a slow spell of the machine falls on every kind; each kind's runs
are pooled. ``per_widget_ms`` = (median of the kind − median of ``none``) / ``--count``. Prints one
JSON object.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench._server import emit, launch_chromium, log, percentile, streamlit_server, summary
from bench.page_latency import PageSpec, measure_render, new_page

APP = "bench/widgets_app.py"
SPEC = PageSpec("floor_text", "floor-chart", path="", app=APP)
KINDS = (
    "none", "caption", "markdown", "text", "button", "columns", "progress", "metric", "toggle", "selectbox",
    "radio", "segmented_control", "select_slider", "chart", "chart_without_toolbar",
    "chart_without_colorbar", "chart_without_cell_text",
)  # fmt: skip


def reloads(browser: Any, kind: str, count: int, runs: int, args: argparse.Namespace) -> list[float]:
    """``runs`` warm reload times (ms) of the widgets app showing ``count`` widgets of ``kind``."""
    env = {"BENCH_WIDGET_KIND": kind, "BENCH_WIDGET_COUNT": str(count)}
    timeout_ms = args.timeout_s * 1000
    with streamlit_server(app=APP, env=env, log_name=f"widgets-{kind}") as server:
        page = new_page(browser, SPEC, args.settle_ms)
        try:
            measure_render(page, server.url + "/", timeout_ms=timeout_ms)  # first visit: untimed
            return [measure_render(page, None, timeout_ms=timeout_ms)["ms"] for _ in range(runs)]
        finally:
            page.context.close()


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    kinds = ["none", *[k for k in args.kinds.split(",") if k and k != "none"]]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise SystemExit(f"unknown kind(s) {unknown}; choose from {list(KINDS)}")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            for r in range(args.rounds):
                for kind in kinds:
                    try:
                        times[kind] += reloads(browser, kind, 0 if kind == "none" else args.count, args.runs, args)
                        log(f"round {r + 1}/{args.rounds} {kind}: median {percentile(times[kind], 50):.0f} ms so far")
                    except Exception as e:  # noqa: BLE001 - counted and reported
                        errors.append(f"round {r + 1}, {kind}: {type(e).__name__}: {str(e)[:300]}")
        finally:
            browser.close()
    floor = percentile(times["none"], 50) if times["none"] else None
    result = {}
    for kind, values in times.items():
        entry: dict[str, Any] = {"reload_ms": summary(values)}
        if kind != "none" and values and floor is not None:
            entry["per_widget_ms"] = round((percentile(values, 50) - floor) / args.count, 1)
        result[kind] = entry
    return {"kinds": result, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=20, help="widgets of one kind on the page")
    ap.add_argument("--runs", type=int, default=8, help="reloads per kind and round")
    ap.add_argument("--rounds", type=int, default=2, help="passes over every kind")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds (none, the floor, is always measured)")
    ap.add_argument("--settle-ms", type=float, default=300, help="how long 'rendered' must hold (not counted)")
    ap.add_argument("--timeout-s", type=float, default=120, help="per measurement")
    args = ap.parse_args()
    out = run(args)
    emit({"benchmark": "widgets", "count": args.count, "runs": args.runs, "rounds": args.rounds, **out})


if __name__ == "__main__":
    main()
