"""How fast the attention explorer answers in headless Chromium: from the key, click or mouse event to
the next painted frame, for switching layer, head, kind and view and for hovering, on a
translator-sized run (3 kinds × 6 layers × 8 heads at 25 tokens) and a generator-sized one (1 kind ×
4 layers × 6 heads at 128 characters); also the bytes sent.

The clock starts at the input event's own timestamp (a capture listener on the window sees it before
the explorer does) and stops in a task posted from the next animation frame, which runs once that
frame (with the explorer's drawing, done in its own animation-frame callback) has been rendered.

    .venv/bin/python -m bench.explorer --runs 20            # in the Streamlit harness app
    .venv/bin/python -m bench.explorer --runs 20 --standalone  # the exported HTML file, no server
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import emit, log, summary  # noqa: E402
from fixtures.explorer_runs import generator_run, translator_run  # noqa: E402
from fixtures.server import launch_chromium, streamlit_server  # noqa: E402
from viz.explorer import asset, explorer_html, explorer_payload, pack_payload, script  # noqa: E402

CASES = {
    "translator": lambda: translator_run(src=25, tgt=25, layers=6, heads=8),
    "generator": lambda: generator_run(n=128),
}
ROOT = '[data-testid="attention-explorer"]'
CANVAS = f"{ROOT} .ae-pane:not([hidden]) canvas.ae-base"  # the shown view's map
TARGET_P95_MS = 50
PROBE = """() => {
  if (window.__aeSamples) return;
  window.__aeSamples = [];
  for (const type of ["keydown", "click", "mousemove"]) {
    window.addEventListener(type, (e) => {
      const t0 = e.timeStamp;
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => window.__aeSamples.push({ type, ms: performance.now() - t0 });
        ch.port2.postMessage(0);
      });
    }, true);
  }
}"""


def measure(page: Any, act: tuple[str, Any]) -> float:
    """Milliseconds from the event of type ``act[0]`` that ``act[1]()`` sends to the next painted frame
    (a click is preceded by a mouse move to the button, which is not counted)."""
    kind, send = act
    n = page.evaluate("() => window.__aeSamples.length")
    send()
    find = f"window.__aeSamples.slice({n}).find((s) => s.type === '{kind}')"
    page.wait_for_function(f"() => {find}", timeout=10_000)
    page.wait_for_timeout(40)  # let this frame go before the next event
    return page.evaluate(f"() => {find}.ms")


def repeat(page: Any, acts: list[tuple[str, Any]], runs: int, warmup: int = 2) -> list[float]:
    """``runs`` timings cycling through ``acts`` after ``warmup`` untimed ones."""
    for i in range(warmup):
        measure(page, acts[i % len(acts)])
    return [measure(page, acts[i % len(acts)]) for i in range(runs)]


def click_button(page: Any, name: str) -> tuple[str, Any]:
    button = page.locator(ROOT).get_by_role("button", name=name, exact=True)
    return "click", lambda: button.click()


def cell_points(page: Any, n: int) -> list[tuple[float, float]]:
    """Page coordinates of ``n`` heatmap cells, each different from the one before, all on screen."""
    lay = page.locator(ROOT).evaluate("e => JSON.parse(e.dataset.layout)")
    assert lay["type"] == "heat", lay
    page.locator(CANVAS).scroll_into_view_if_needed()
    box = page.locator(CANVAS).bounding_box()
    rows = int((page.viewport_size["height"] - 10 - box["y"] - lay["y0"]) // lay["c"])  # rows on screen
    rows = max(2, min(20, rows))
    x, y, c = box["x"] + lay["x0"], box["y"] + lay["y0"], lay["c"]
    return [(x + ((i * 7) % 20 + 0.5) * c, y + (i % rows + 0.5) * c) for i in range(n)]


def bench_case(page: Any, kinds: list, runs: int) -> dict[str, Any]:
    page.evaluate(PROBE)
    root = page.locator(ROOT)
    root.focus()
    key = lambda k: ("keydown", lambda: page.keyboard.press(k))
    move = lambda x, y: ("mousemove", lambda: page.mouse.move(x, y))
    out: dict[str, Any] = {}
    out["layer"] = summary(repeat(page, [key("PageDown"), key("PageUp")], runs))
    out["head"] = summary(repeat(page, [key("]"), key("[")], runs))
    if len(kinds) > 1:
        out["kind"] = summary(repeat(page, [click_button(page, k.title) for k in kinds[1:] + kinds[:1]], runs))
        click_button(page, kinds[0].title)[1]()
    else:
        out["kind"] = None  # one kind: nothing to switch
    views = ["lines", "grid", "mean", "heatmap"]
    by_view = {v: [] for v in views}
    for i in range(len(views) + runs):  # one untimed round, then each view reached runs / 4 times
        v = views[i % len(views)]
        ms = measure(page, click_button(page, v))
        if i >= len(views):
            by_view[v].append(ms)
    out["view"] = summary([ms for v in views for ms in by_view[v]])
    out["view_to"] = {v: summary(ms) for v, ms in by_view.items()}
    click_button(page, "heatmap")[1]()
    page.wait_for_timeout(100)
    points = cell_points(page, runs + 2)
    out["hover_heatmap"] = summary(repeat(page, [move(*p) for p in points], runs))
    click_button(page, "lines")[1]()
    page.wait_for_timeout(100)
    lay = page.locator(ROOT).evaluate("e => JSON.parse(e.dataset.layout)")
    page.locator(CANVAS).scroll_into_view_if_needed()
    box = page.locator(CANVAS).bounding_box()
    seen = int((page.viewport_size["height"] - 10 - box["y"] - lay["top"]) // lay["rowH"])  # rows on screen
    n = max(2, min(kinds[0].weights.shape[-2], seen))
    rows = [box["y"] + lay["top"] + ((i * 3) % n + 0.5) * lay["rowH"] for i in range(runs + 2)]
    x = box["x"] + lay["left"] - 8  # a new query token each time: the lines are redrawn for it alone
    out["hover_lines"] = summary(repeat(page, [move(x, y) for y in rows], runs))
    return out


def open_case(browser: Any, url: str | None, name: str, html: str, tmp: Path, width: int) -> tuple[Any, list[int]]:
    """A page showing case ``name`` (in the app at ``url``, else the exported file) and the sizes of the
    websocket frames it receives."""
    page = browser.new_page(viewport={"width": width, "height": 1000})
    received: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda p: received.append(len(p))))
    if url:
        page.goto(f"{url}/?case=bench_{name}", wait_until="domcontentloaded")
    else:
        path = tmp / f"{name}.html"
        path.write_text(html, encoding="utf-8")
        page.goto(path.as_uri())
    page.locator(ROOT).wait_for(timeout=120_000)
    page.wait_for_timeout(1000)
    return page, received


def run_cases(browser: Any, url: str | None, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    cases = {}
    for name, make in CASES.items():
        kinds = make()
        payload = explorer_payload(kinds, title=name)
        html = explorer_html(payload, name)
        case: dict[str, Any] = {
            "shape": [[k.name, *k.weights.shape] for k in kinds],
            "payload_bytes": len(pack_payload(payload)),
            "weights_bytes": len(payload["weights"]),
            "export_html_bytes": len(html.encode()),
        }
        page, received = open_case(browser, url, name, html, tmp, args.width)
        if url:
            case["websocket_bytes_on_load"] = sum(received)
        log(f"{name}: measuring")
        case.update(bench_case(page, kinds, args.runs))
        page.close()
        cases[name] = case
    return cases


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    result: dict[str, Any] = {
        "mode": "standalone HTML file" if args.standalone else "Streamlit harness (tests/browser/explorer_app.py)",
        "runs": args.runs,
        "target_p95_ms": TARGET_P95_MS,
        "component_js_css_bytes": len(script().encode()) + len(asset("explorer.css").encode()),
    }
    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="bench-explorer-") as tmp:
        browser = launch_chromium(pw)
        try:
            if args.standalone:
                result["cases"] = run_cases(browser, None, args, Path(tmp))
            else:
                with streamlit_server(app="tests/browser/explorer_app.py", log_name="explorer") as server:
                    result["cases"] = run_cases(browser, server.url, args, Path(tmp))
        finally:
            browser.close()
    p95s = [
        s["p95"]
        for case in result["cases"].values()
        for s in case.values()
        if isinstance(s, dict) and s.get("p95") is not None
    ]
    result["worst_p95_ms"] = max(p95s)
    result["meets_target"] = max(p95s) <= TARGET_P95_MS
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="timed events per action (>= 10)")
    ap.add_argument("--standalone", action="store_true", help="measure the exported HTML file instead of the app")
    ap.add_argument("--width", type=int, default=1400, help="viewport width in CSS pixels")
    emit(run(ap.parse_args()))


if __name__ == "__main__":
    main()
