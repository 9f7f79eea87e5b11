"""The attention explorer at a model's full context: GPT-2-shaped runs (12 layers × 12 heads of causal
attention, random but peaked as trained heads are: fixtures/long_runs.py) at 128, 256, 512 and 1,024
tokens, in headless Chromium on the harness tests/browser/explorer_long_app.py, beside the floor page
measured in the same run.

    .venv/bin/python -m bench.long_inputs [--sizes 128,256,512,1024] [--runs 20] [--model-tokens 1024]

With ``--peer-sizes 128,256`` the peer too: bertviz's head view (``pip install --no-deps bertviz==1.4.1``, a
benchmark-only package) on the same runs, its CDN scripts served from local copies of their npm packages
(``--peer-libs``, see PEER_LIBS), with the ratios to ours.

Per size: the bytes the explorer's data takes (payload) and the websocket bytes the browser receives for
a new run; submit to first view (from the Enter keydown that asks for a run of that length to the
painted frame after the explorer holds it: the script reruns, the payload is built and sent, the
browser decodes it and draws the heatmap; the run itself is cached, as the Any model page caches a
model's run, so no model time is in it); the head and layer switch in the browser (keydown to the next
painted frame, bench.explorer's probe), median and p95; and that no websocket frame leaves the browser
while switching. Beside them the floor page's text change (bench/floor_app.py) and the ratios.

With ``--model-tokens N`` also the Any model page itself on a GPT-2-small-sized model with random
weights (``GPT2Config()``, 124 M parameters, no download; bench.hub builds it) reading an N-token text:
Enter to the explorer holding that run (this one includes the model's forward pass), and the server's
resident memory (VmRSS, and its peak VmHWM) with the model loaded and that run shown; then after a second
text of the same length is shown (its peak counted from that text's Enter). Targets (issue 33):
first view <= 2 s and switch p95 <= 16 ms at 1,024 tokens, server memory <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._server import emit, log, summary  # noqa: E402
from bench.explorer import PROBE, repeat  # noqa: E402
from fixtures.long_runs import long_run  # noqa: E402
from fixtures.server import launch_chromium, streamlit_server  # noqa: E402
from viz.explorer import explorer_payload, pack_payload  # noqa: E402

ROOT = '[data-testid="attention-explorer"]'
TARGETS = {"first_view_ms_at_1024": 2000, "switch_p95_ms_at_1024": 16, "server_rss_mb": 1500}
# The page clock's time of the Enter keydown, and of the first painted frame after the explorer's state
# holds a run of `a.n` queries: polled every 4 ms (the explorer lives in a shadow root, out of reach of
# a document MutationObserver), then one animation frame and a posted task (the frame is on screen).
WATCH = """(a) => {
  window.__t0 = undefined; window.__shown = undefined;
  if (!window.__enter) {
    window.__enter = true;
    document.addEventListener("keydown", (e) => { if (e.key === "Enter") window.__t0 = performance.now(); }, true);
  }
  const find = () => [...document.querySelectorAll("*")].find((h) => h.shadowRoot && h.shadowRoot.querySelector(a.sel));
  let host = find();
  const timer = setInterval(() => {
    if (!host || !host.isConnected || !host.shadowRoot.querySelector(a.sel)) host = find();
    const root = host && host.shadowRoot.querySelector(a.sel), s = root && root.dataset.state;
    if (!s) return;
    const st = JSON.parse(s);
    if (st.queries === a.n && st.digest !== a.before) {
      clearInterval(timer);
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => { window.__shown = performance.now(); };
        ch.port2.postMessage(0);
      });
    }
  }, 4);
}"""
DIGEST = "(root) => root.dataset.state ? JSON.parse(root.dataset.state).digest : null"


def rss_mb(pid: int) -> dict[str, float]:
    """Resident memory of process ``pid`` now and at its peak (MB)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return {"rss_mb": out.get("VmRSS"), "peak_rss_mb": out.get("VmHWM")}


def submit(page: Any, box: Any, n: int, timeout_ms: float, variant: int = 0) -> float:
    """Enter a run length of ``n`` (its ``variant``: new data, the same weights) in the harness;
    milliseconds to the first painted frame showing it."""
    root = page.locator(ROOT)
    page.evaluate(WATCH, {"sel": ROOT, "n": n, "before": root.evaluate(DIGEST)})
    box.fill(f"{n}:{variant}" if variant else str(n))
    box.press("Enter")
    page.wait_for_function("() => window.__shown !== undefined && window.__t0 !== undefined", timeout=timeout_ms)
    return page.evaluate("() => window.__shown - window.__t0")


def switch_times(page: Any, runs: int) -> dict[str, Any]:
    """Head and layer switches in the heatmap view (keydown to the next painted frame), and the
    websocket frames the browser sent meanwhile."""
    page.evaluate(PROBE)
    root = page.locator(ROOT)
    root.focus()
    sent: list[int] = page.bench_sent
    before = len(sent)
    key = lambda k: ("keydown", lambda: page.keyboard.press(k))
    head = repeat(page, [key("]"), key("[")], runs)
    layer = repeat(page, [key("PageDown"), key("PageUp")], runs)
    page.wait_for_timeout(300)
    return {
        "head": summary(head),
        "layer": summary(layer),
        "switch": summary(head + layer),
        "frames_sent": len(sent) - before,
    }


def harness_cases(browser: Any, sizes: list[int], runs: int, timeout_ms: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with streamlit_server(app="tests/browser/explorer_long_app.py", log_name="long-inputs") as server:
        for n in sizes:  # build each run once (the harness caches it), as a model page caches its run
            warm = browser.new_page()
            warm.goto(f"{server.url}/?n={n}", wait_until="domcontentloaded")
            warm.locator(ROOT).wait_for(timeout=timeout_ms)
            warm.close()
        context = browser.new_context(viewport={"width": 1400, "height": 1200})
        page = context.new_page()
        received: list[int] = []
        page.bench_sent = []
        page.on(
            "websocket",
            lambda ws: (
                ws.on("framereceived", lambda p: received.append(len(p))),
                ws.on("framesent", lambda p: page.bench_sent.append(len(p))),
            ),
        )
        page.goto(f"{server.url}/?n=2", wait_until="domcontentloaded")
        page.locator(ROOT).wait_for(timeout=timeout_ms)
        box = page.locator(".st-key-tokens input")
        for n in sizes:
            (kind,) = long_run(n, seed=n)
            t = time.perf_counter()
            payload = explorer_payload([kind])
            build_ms = (time.perf_counter() - t) * 1000
            case: dict[str, Any] = {
                "weights": int(kind.weights.size),
                "float32_bytes": int(kind.weights.size) * 4,
                "payload_bytes": len(pack_payload(payload)),
                "encoding": payload["kinds"][0]["encoding"],
                "payload_build_ms": round(build_ms, 1),
            }
            firsts, sizes_received = [], []
            for i in range(3):  # each a first view: new data (a variant), sent whole, decoded, drawn
                mark = len(received)
                firsts.append(submit(page, box, n, timeout_ms, variant=i + 1))
                sizes_received.append(sum(received[mark:]))
            case["websocket_bytes_received"] = sizes_received
            case["first_view_ms"] = summary(firsts)
            case.update(switch_times(page, runs))
            log(f"{n} tokens: first view {case['first_view_ms']['median']} ms, switch p95 {case['switch']['p95']} ms")
            out[str(n)] = case
        out["harness_server"] = rss_mb(server.pid)
        context.close()
    return out


def model_page(browser: Any, tokens: int, timeout_ms: float) -> dict[str, Any]:
    """The Any model page on a random GPT-2-small reading ``tokens`` tokens: Enter to the explorer
    showing the run, and the server's memory."""
    from bench.hub import build

    with tempfile.TemporaryDirectory(prefix="bench-long-") as tmp:
        folder = Path(tmp) / "gpt2-random"
        build(folder, "small")
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(folder)
        words, text = "the cat sat on the mat and looked at the dog".split(), ""
        i = 0
        while len(tok(text)["input_ids"]) < tokens:
            text += f" {words[i % len(words)]}{i}"
            i += 1
        with streamlit_server(log_name="long-any-model") as server:
            context = browser.new_context(viewport={"width": 1400, "height": 1200})
            page = context.new_page()
            page.goto(f"{server.url}/any_model?{urlencode({'hub_id': str(folder), 'hub_text': 'a short text'})}")
            page.locator(ROOT).wait_for(timeout=timeout_ms)
            loaded = rss_mb(server.pid)
            box = page.locator(".st-key-hub_text input, .st-key-hub_text textarea").first
            page.evaluate(WATCH, {"sel": ROOT, "n": tokens, "before": page.locator(ROOT).evaluate(DIGEST)})
            box.fill(text)
            box.press("Enter")
            page.wait_for_function("() => window.__shown !== undefined", timeout=timeout_ms)
            ms = page.evaluate("() => window.__shown - window.__t0")
            page.wait_for_timeout(2000)
            shown = rss_mb(server.pid)
            # a second text of the same length: the page keeps one run, so this should not hold two
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # the peak from here on (Linux)
            page.evaluate(WATCH, {"sel": ROOT, "n": tokens, "before": page.locator(ROOT).evaluate(DIGEST)})
            box.fill("a" + text)
            box.press("Enter")
            page.wait_for_function("() => window.__shown !== undefined", timeout=timeout_ms)
            page.wait_for_timeout(2000)
            second = rss_mb(server.pid)
            context.close()
    return {
        "tokens": tokens,
        "model": "GPT2Config() with random weights (124 M parameters)",
        "enter_to_first_view_ms": round(ms, 1),
        "server_with_model_loaded": loaded,
        "server_after_the_run_shown": shown,
        "server_after_a_second_run_shown": second,
    }


# bertviz's head view loads require.js, d3 5 and jQuery from cdnjs; the peer is served local copies of
# their npm packages (``npm pack requirejs@2.3.6 d3@5.7.0 jquery@2.1.0`` in --peer-libs, each unpacked
# into a folder named after its tarball; jQuery 2.0.0, which bertviz names, is not on npm: 2.1.0 is the
# nearest). They are a benchmark's download, not the project's: they stay outside the repository.
PEER_LIBS = {
    "require.js/2.3.6/require.min.js": "requirejs-2.3.6/package/require.js",
    "d3/5.7.0/d3.min.js": "d3-5.7.0/package/dist/d3.min.js",
    "jquery/2.0.0/jquery.min.js": "jquery-2.1.0/package/dist/jquery.min.js",
}
PEER_SWITCH = """async (layer) => {
  const sel = document.querySelector("#layer"), t0 = performance.now();
  sel.value = String(layer);
  sel.dispatchEvent(new Event("change"));  // bertviz (jQuery) redraws the SVG in this handler
  await new Promise((done) => requestAnimationFrame(() => { const ch = new MessageChannel(); ch.port1.onmessage = done; ch.port2.postMessage(0); }));
  return performance.now() - t0;
}"""


def _ipython_display() -> None:
    """bertviz imports ``IPython.display`` for notebooks; with ``html_action="return"`` it only wraps
    strings in ``HTML`` and ``Javascript`` and reads their ``.data``. Where IPython is not installed (it
    is no dependency of ours), a stand-in with just that is registered: the page bertviz builds is the
    same."""
    import importlib.util
    import types

    if importlib.util.find_spec("IPython") is not None:
        return

    class Text:
        def __init__(self, data: str = "") -> None:
            self.data = data

    display = types.ModuleType("IPython.display")
    display.HTML, display.Javascript, display.display = Text, Text, lambda *a, **k: None
    package = types.ModuleType("IPython")
    package.display = display
    sys.modules.update({"IPython": package, "IPython.display": display})


def _serve(path: Path) -> Any:
    """A route handler answering with the file at ``path`` (Playwright passes the route, then the request)."""
    return lambda route, request: route.fulfill(path=str(path))


def peer(browser: Any, sizes: list[int], libs: Path, runs: int, timeout_ms: float) -> dict[str, Any]:
    """bertviz's head view on the same runs: its page's bytes, load to the drawn SVG (its token texts
    all there), and a layer switch (the select's change to the next painted frame)."""
    from importlib.metadata import version

    import torch

    _ipython_display()
    from bertviz import head_view

    out: dict[str, Any] = {"bertviz": version("bertviz")}
    for n in sizes:
        (kind,) = long_run(n, seed=n)
        attention = [torch.from_numpy(kind.weights[layer][None]) for layer in range(kind.layers)]
        html = head_view(attention, kind.queries, html_action="return").data
        del attention
        page_html = f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{html}</body></html>"
        case: dict[str, Any] = {"page_bytes": len(page_html.encode())}
        with tempfile.TemporaryDirectory(prefix="bench-peer-") as tmp:
            path = Path(tmp) / "head_view.html"
            path.write_text(page_html, encoding="utf-8")
            del html, page_html
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            for url, local in PEER_LIBS.items():
                page.route(f"**/ajax/libs/{url}", _serve(libs / local))
            t = time.perf_counter()
            try:
                page.goto(path.as_uri(), timeout=timeout_ms)
                page.wait_for_function(
                    f"() => document.querySelectorAll('#vis svg text').length >= {2 * n}",
                    timeout=timeout_ms,
                    polling=100,
                )
                case["load_to_view_ms"] = round((time.perf_counter() - t) * 1000, 1)
                times = [page.evaluate(PEER_SWITCH, (i + 1) % kind.layers) for i in range(runs)]
                case["layer_switch_ms"] = summary(times)
            except Exception as err:  # a page that does not open in time is the finding
                case["failed"] = f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
            page.close()
        log(f"bertviz {n} tokens: {case}")
        out[str(n)] = case
    return out


def floor(browser: Any, runs: int, timeout_ms: float) -> dict[str, Any]:
    from bench.hub import floor_times

    return summary(floor_times(browser, runs, timeout_ms))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="128,256,512,1024", help="token counts, comma-separated")
    ap.add_argument("--runs", type=int, default=20, help="timed switches per kind of switch")
    ap.add_argument("--floor-runs", type=int, default=10, help="timed text changes on the floor page")
    ap.add_argument("--model-tokens", type=int, default=0, help="also the Any model page at this many tokens")
    ap.add_argument("--timeout-s", type=float, default=240)
    ap.add_argument("--peer-sizes", default="", help="also bertviz's head view at these sizes (e.g. 128,256)")
    ap.add_argument("--peer-libs", default=str(Path.home() / ".cache" / "attention-explorer-peer"))
    ap.add_argument("--peer-runs", type=int, default=5, help="timed bertviz layer switches per size")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    timeout_ms = args.timeout_s * 1000
    result: dict[str, Any] = {"shape": "12 layers × 12 heads, causal", "targets": TARGETS}
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            result["sizes"] = harness_cases(browser, sizes, args.runs, timeout_ms)
            result["floor_text_change_ms"] = fl = floor(browser, args.floor_runs, timeout_ms)
            for n in sizes:
                case = result["sizes"][str(n)]
                case["first_view_vs_floor"] = round(case["first_view_ms"]["median"] / fl["median"], 2)
            if args.model_tokens:
                result["any_model_page"] = model_page(browser, args.model_tokens, timeout_ms)
            peer_sizes = [int(s) for s in args.peer_sizes.split(",") if s.strip()]
            if peer_sizes:
                result["peer"] = peer(browser, peer_sizes, Path(args.peer_libs), args.peer_runs, timeout_ms)
                for n in peer_sizes:
                    ours, theirs = result["sizes"].get(str(n)), result["peer"][str(n)]
                    if ours and "load_to_view_ms" in theirs:
                        theirs["bytes_vs_ours"] = round(theirs["page_bytes"] / ours["payload_bytes"], 1)
                        theirs["view_vs_ours"] = round(theirs["load_to_view_ms"] / ours["first_view_ms"]["median"], 1)
                        theirs["switch_p95_vs_ours"] = round(theirs["layer_switch_ms"]["p95"] / ours["layer"]["p95"], 1)
        finally:
            browser.close()
    emit(result)


if __name__ == "__main__":
    main()
