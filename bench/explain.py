"""Click any weight: the time from a click on a cell of the explorer to the explanation shown, beside
the floor page's input change (Streamlit with one text box and one heatmap) measured in the same run.

    python -m bench.explain [--runs 10] [--pages classifier,translator]

Each run clicks a different cell (so no cached explanation answers) and waits until the panel's
heading carries that cell's weight; both ends are read from the page's clock (the mousedown and the
heading's appearance, seen by a MutationObserver). Prints one JSON object: medians and p95 per page,
the floor's change, and their ratio (the target: click to panel median <= 1.5x the floor's change).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from bench._server import add_app_options, checkpoint_env, emit, log, run_on_checkpoints, summary
from bench.page_latency import PAGES, input_pools, make_input, marker, measure_interaction, new_page, page_url, prime
from fixtures.server import launch_chromium, streamlit_server

ROOT = '[data-testid="attention-explorer"]'
# Installed before each click: the page-clock time at which an explanation heading ("How ... computed
# ...") with text other than the current one appears (a MutationObserver, so the benchmark's own
# polling does not count); window.__explain = {t, text}.
WATCH = """() => {
  const heading = () => [...document.querySelectorAll('h3')].map((h) => h.innerText.trim())
    .find((t) => t.startsWith('How ') && t.includes(' computed ')) || null;
  const before = heading();
  window.__explain = null;
  const obs = new MutationObserver(() => {
    const now = heading();
    if (now && now !== before) { window.__explain = {t: performance.now(), text: now}; obs.disconnect(); }
  });
  obs.observe(document, {subtree: true, childList: true, characterData: true});
}"""


def state(page: Any) -> dict:
    return json.loads(page.locator(ROOT).get_attribute("data-state") or "null") or {}


def cell_point(page: Any, q: int, k: int) -> tuple[float, float]:
    lay = json.loads(page.locator(ROOT).get_attribute("data-layout") or "{}")
    box = page.locator(f"{ROOT} .ae-pane:not([hidden]) canvas.ae-base").bounding_box()
    return box["x"] + lay["x0"] + (k + 0.5) * lay["c"], box["y"] + lay["y0"] + (q + 0.5) * lay["c"]


def clicks(browser: Any, url: str, name: str, runs: int, timeout_ms: float) -> tuple[list[float], list[str]]:
    page = new_page(browser, PAGES[name], 300)
    times, errors = [], []
    try:
        page.goto(page_url(url, name), wait_until="domcontentloaded")
        page.locator(ROOT).wait_for(timeout=timeout_ms)
        deadline = time.monotonic() + timeout_ms / 1000
        while not page.locator(ROOT).get_attribute("data-layout") and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        page.locator(f"{ROOT} canvas").first.scroll_into_view_if_needed()
        cells = [(q, k) for q in range(1, 6) for k in range(0, 6) if q != k]
        for r in range(runs + 1):  # the first click is not timed (the first explanation warms the path)
            q, k = cells[r % len(cells)]
            try:
                page.evaluate(WATCH)
                page.mouse.click(*cell_point(page, q, k))
                deadline = time.monotonic() + timeout_ms / 1000
                while not (seen := page.evaluate("() => window.__explain")):
                    if time.monotonic() > deadline:
                        raise TimeoutError("no explanation appeared")
                    page.wait_for_timeout(20)
                weight = f"{state(page)['clicked']['weight']:.4f}"
                if not seen["text"].endswith(weight):
                    raise AssertionError(f"the panel says {seen['text']!r}, the explorer {weight}")
                if r:
                    times.append(seen["t"] - page.evaluate("() => window.__benchClickT0"))
            except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                errors.append(f"{name} click {r}: {type(e).__name__}: {str(e)[:200]}")
    finally:
        page.context.close()
    return times, errors


def floor_changes(browser: Any, runs: int, env: dict, timeout_ms: float) -> list[float]:
    spec, pool = PAGES["floor"], input_pools(["floor"], None)["floor"]
    out = []
    with streamlit_server(app=spec.app, env=env, log_name="floor") as server:
        page = new_page(browser, spec, 300)
        try:
            page.goto(page_url(server.url, "floor"), wait_until="commit")
            page.wait_for_selector(".js-plotly-plot", timeout=timeout_ms)
            for r in range(runs + 1):
                mark = marker(0, r)
                m = measure_interaction(
                    page, spec, make_input("floor", pool, r, mark), mark, hold_ms=300, timeout_ms=timeout_ms
                )
                if r:
                    out.append(m["ms"])
        finally:
            page.context.close()
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    env, timeout_ms = checkpoint_env(args.checkpoints), args.timeout_s * 1000
    result: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            floor = floor_changes(browser, args.runs, env, timeout_ms)
            result["floor_change_ms"] = summary(floor)
            with streamlit_server(env=env, log_name="explain") as server:
                log(f"primed: {prime(browser, server.url, timeout_ms=timeout_ms)}")
                for name in args.pages.split(","):
                    times, errors = clicks(browser, server.url, name, args.runs, timeout_ms)
                    s = summary(times)
                    ratio = round(s["median"] / result["floor_change_ms"]["median"], 2) if times and floor else None
                    result[name] = {"click_to_panel_ms": s, "ratio_to_floor_change": ratio, "errors": errors}
                    log(f"{name}: click to panel median {s['median']} ms ({ratio}x the floor's change)")
        finally:
            browser.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pages", default="classifier,translator")
    add_app_options(ap, timeout_s=120)
    result, checkpoints = run_on_checkpoints(run, ap.parse_args())
    emit({"benchmark": "explain", "checkpoints": checkpoints, **result})


if __name__ == "__main__":
    main()
