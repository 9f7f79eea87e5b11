"""Where a warm reload's time goes, per page: the moments between the reload and the page drawn.

    python -m bench.reload_timeline [--runs 6] [--pages classifier,hand,floor,...]

On a warm server (primed as in ``bench.page_latency``), each page is reloaded ``--runs`` times and
these moments are read from the page's own clock (milliseconds from navigation start), median over
the runs: ``document_loaded`` (DOMContentLoaded), each request to Streamlit's health check
(``health_requests``: path and start; for a page other than the root the front end first tries
``/<page>/_stcore/health``, which answers 404, and then ``/_stcore/health``), ``websocket_open``,
the ``first_message`` and ``last_message`` from the server with their ``messages`` and ``bytes``,
and ``rendered`` (as ``bench.page_latency`` defines it). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from bench._server import (
    add_app_options,
    checkpoint_env,
    emit,
    launch_chromium,
    log,
    run_on_checkpoints,
    streamlit_server,
)
from bench.page_latency import PAGES, measure_render, new_page, page_url, parse_pages, prime

# Installed before the app's scripts: the time the websocket opened and of every message it received.
RECORD_WEBSOCKET = """(() => {
  const Native = window.WebSocket;
  window.__benchWs = {opened: null, messages: []};
  window.WebSocket = function (...args) {
    const socket = new Native(...args);
    window.__benchWs.opened = performance.now();
    socket.addEventListener('message', (e) => window.__benchWs.messages.push(
      [performance.now(), e.data.byteLength || e.data.size || e.data.length || 0]));
    return socket;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, Native);
})();"""
READ_TIMELINE = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const health = performance.getEntriesByType('resource').filter((r) => r.name.includes('_stcore/health'))
    .map((r) => [new URL(r.name).pathname, r.startTime, r.responseEnd]);
  const ws = window.__benchWs;
  const msgs = ws.messages;
  return {document_loaded: nav.domContentLoadedEventEnd, health, websocket_open: ws.opened,
          first_message: msgs.length ? msgs[0][0] : null, last_message: msgs.length ? msgs[msgs.length - 1][0] : null,
          messages: msgs.length, bytes: msgs.reduce((s, m) => s + m[1], 0)};
}"""
MOMENTS = ("document_loaded", "websocket_open", "first_message", "last_message", "rendered", "messages", "bytes")


def page_timeline(browser: Any, base: str, name: str, args: argparse.Namespace) -> dict[str, Any]:
    spec, timeout_ms = PAGES[name], args.timeout_s * 1000
    page = new_page(browser, spec, args.settle_ms)
    page.context.add_init_script(RECORD_WEBSOCKET)
    try:
        measure_render(page, page_url(base, name), timeout_ms=timeout_ms)  # first visit: untimed
        runs = []
        for _ in range(args.runs):
            rendered = measure_render(page, None, timeout_ms=timeout_ms)["ms"]
            runs.append(page.evaluate(READ_TIMELINE) | {"rendered": rendered})
    finally:
        page.context.close()
    out: dict[str, Any] = {}
    for key in MOMENTS:
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = round(statistics.median(values), 1) if values else None
    requests = [[path for path, _, _ in r["health"]] for r in runs]
    out["health_requests"] = [
        {"path": path, "start": round(statistics.median(r["health"][i][1] for r in runs), 1),
         "end": round(statistics.median(r["health"][i][2] for r in runs), 1)}
        for i, path in enumerate(requests[0])
    ] if all(p == requests[0] for p in requests) else {"varied between runs": requests}  # fmt: skip
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    pages = parse_pages(args.pages)
    result: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            for app in dict.fromkeys(PAGES[p].app for p in pages):
                with streamlit_server(app=app, env=checkpoint_env(args.checkpoints), log_name="timeline") as server:
                    prime(browser, server.url, timeout_ms=args.timeout_s * 1000)
                    for name in (p for p in pages if PAGES[p].app == app):
                        try:
                            result[name] = page_timeline(browser, server.url, name, args)
                            log(f"{name}: {result[name]}")
                        except Exception as e:  # noqa: BLE001 - reported beside the others
                            result[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
        finally:
            browser.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=6, help="reloads per page")
    ap.add_argument("--pages", default="floor,hand,classifier,translator,workshop", help="comma-separated pages")
    add_app_options(ap, timeout_s=120)
    args = ap.parse_args()
    pages, ckpt = run_on_checkpoints(run, args)
    errors = sum(1 for p in pages.values() if "error" in p)
    emit({"benchmark": "reload_timeline", "runs": args.runs, "checkpoints": ckpt, "pages": pages, "errors": errors})


if __name__ == "__main__":
    main()
