"""Concurrent sessions on one server: errors, latency per input change, and cross-talk between sessions.

    python -m bench.load [--sessions 20] [--changes 10]

One Streamlit server, one Chromium, ``--sessions`` browser contexts driven together (asyncio
Playwright). Each session moves between the pages in ``--pages`` with the sidebar links (one
Streamlit session throughout) and on each visit types a 20-token input into the page's main text
input. Every input starts with a marker word unique to the session and the change
(``mk<session>x<change>``, letters only, so each tokenizer keeps it whole).

Per change it records the latency (Enter keydown to the updated heatmap rendered, timed in the page
as in ``bench.page_latency``) and checks the result: the page's heatmap must contain this change's
marker, and neither the heatmap nor the page text may contain a marker of another session
(cross-talk) or an older change of its own (a stale result). Errors are exceptions shown on the page,
JavaScript errors, timeouts, and failed checks. The server is warmed first (every page shown once,
untimed), so model loading is not counted. Prints one JSON object; the target is 0 errors.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections import Counter
from typing import Any

from bench._server import add_app_options, checkpoint_env, emit, log, run_on_checkpoints, summary
from bench.page_latency import (
    APP,
    DONE,
    INIT_SCRIPT,
    MARKER_PATTERN,
    PAGES,
    START_CHANGE,
    PageSpec,
    chart_selector,
    input_pools,
    input_selector,
    make_input,
    marker,
    page_url,
    watch_arg,
)
from fixtures.server import launch_chromium, streamlit_server

DEFAULT_PAGES = ("classifier", "translator", "hand")
FOUND_MARKERS = """(sel) => {
  const c = window.__benchChart(sel);
  const main = document.querySelector('[data-testid="stMain"]');
  return {chart: c ? c.text : '', page: main ? main.textContent : ''};
}"""


def check_markers(chart_text: str, page_text: str, session: int, change: int) -> list[str]:
    """What is wrong with one result: its own marker missing from the heatmap, another session's
    marker anywhere (cross-talk), or an older marker of its own in the heatmap (stale)."""
    own = marker(session, change)
    problems = []
    if own not in re.findall(MARKER_PATTERN, chart_text):
        problems.append(f"own marker {own} not in the heatmap")
    prefix = own[: own.index("x") + 1]  # mk<session>x
    foreign = sorted({m for m in re.findall(MARKER_PATTERN, chart_text + " " + page_text) if not m.startswith(prefix)})
    if foreign:
        problems.append(f"cross-talk: markers of other sessions {foreign[:5]}")
    stale = sorted({m for m in re.findall(MARKER_PATTERN, chart_text) if m.startswith(prefix) and m != own})
    if stale:
        problems.append(f"stale: older markers of this session {stale[:5]}")
    return problems


class Session:
    def __init__(self, index: int, browser: Any, url: str, pools: dict[str, list[str]], args: argparse.Namespace):
        self.i, self.browser, self.url, self.pools, self.args = index, browser, url, pools, args
        self.latency: dict[str, list[float]] = {p: [] for p in pools}
        self.switch: list[float] = []
        self.errors: list[str] = []
        self.checked = Counter()

    async def wait_done(self, page: Any) -> dict:
        handle = await page.wait_for_function(DONE, polling=100, timeout=self.args.timeout_s * 1000)
        result = await handle.json_value()
        if "error" in result:
            raise RuntimeError(result["error"])
        return result

    async def show(self, page: Any, name: str, first: bool) -> None:
        """Go to page ``name``: the URL the first time, then the sidebar link (same session)."""
        arg = watch_arg(PAGES[name], hold_ms=self.args.settle_ms)
        if first:
            await page.goto(page_url(self.url, name), wait_until="domcontentloaded", timeout=self.args.timeout_s * 1000)
            await page.wait_for_function("() => window.__benchWatch !== undefined")
            await page.evaluate("(a) => window.__benchWatch(a)", arg)
            await self.wait_done(page)
            return
        t0 = await page.evaluate("(a) => { window.__benchWatch(a); return performance.now(); }", arg)
        await page.locator(f'[data-testid="stSidebarNavLink"][href="{page_url(self.url, name)}"]').first.click(
            timeout=self.args.timeout_s * 1000
        )
        r = await self.wait_done(page)
        self.switch.append(r["since"] - t0)

    async def change(self, page: Any, name: str, c: int) -> None:
        spec, mark = PAGES[name], marker(self.i, c)
        text = make_input(name, self.pools[name], self.i * 1000 + c, mark)
        await page.evaluate(START_CHANGE, watch_arg(spec, mark=mark, hold_ms=self.args.settle_ms))
        box = page.locator(input_selector(spec)).first
        await box.fill(text, timeout=self.args.timeout_s * 1000)
        await box.press("Control+Enter" if spec.textarea else "Enter", timeout=self.args.timeout_s * 1000)
        r = await self.wait_done(page)
        t0 = await page.evaluate("() => window.__benchT0")
        if r["what"] != "chart" or t0 is None:
            raise RuntimeError("no updated heatmap after the change")
        self.latency[name].append(r["since"] - t0)
        found = await page.evaluate(FOUND_MARKERS, chart_selector(spec))
        self.checked[name] += 1
        for problem in check_markers(found["chart"], found["page"], self.i, c):
            self.errors.append(f"session {self.i} change {c} ({name}): {problem}")

    async def run(self) -> None:
        context = await self.browser.new_context(viewport={"width": 1400, "height": 1000})
        await context.add_init_script(INIT_SCRIPT)
        page = await context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"session {self.i}: javascript: {str(exc)[:200]}"))
        cycle = [p for p in self.args.pages if p in self.pools]
        current = None
        try:
            for c in range(self.args.changes):
                name = cycle[(self.i + c) % len(cycle)]  # sessions start on different pages
                try:
                    if name != current:
                        await self.show(page, name, first=current is None)
                        current = name
                    await self.change(page, name, c)
                except Exception as e:  # noqa: BLE001 - counted; the session goes on
                    self.errors.append(f"session {self.i} change {c} ({name}): {type(e).__name__}: {str(e)[:200]}")
                    current = None if current is None else "?"  # re-navigate next time
        finally:
            await context.close()


async def warm_up(browser: Any, url: str, pages: list[str], args: argparse.Namespace) -> dict[str, bool]:
    """Show the root page (so app.py runs, see ``bench.page_latency.prime``), then every page once
    (loads the models); returns which pages drew their heatmap."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    await context.add_init_script(INIT_SCRIPT)
    loaded = {}
    try:
        for name in ["", *pages]:
            arg = watch_arg(PAGES[name] if name else PageSpec(None, None), hold_ms=args.settle_ms)
            page = await context.new_page()
            await page.goto(
                page_url(url, name) if name else url + "/", wait_until="domcontentloaded", timeout=args.timeout_s * 1000
            )
            await page.wait_for_function("() => window.__benchWatch !== undefined")
            await page.evaluate("(a) => window.__benchWatch(a)", arg)
            handle = await page.wait_for_function(DONE, polling=100, timeout=args.timeout_s * 1000)
            r = await handle.json_value()
            if name:
                loaded[name] = r.get("what") == "chart"
            elif not r.get("router"):
                raise RuntimeError("app.py (the router) did not run on the root page")
            await page.close()
    finally:
        await context.close()
    return loaded


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    with streamlit_server(env=checkpoint_env(args.checkpoints), log_name="load") as server:
        async with async_playwright() as pw:
            browser = await launch_chromium(pw)
            try:
                loaded = await warm_up(browser, server.url, args.pages, args)
                log(f"warm: {loaded}")
                pools = {p: pool for p, pool in input_pools(args.pages, args.checkpoints).items() if loaded.get(p)}
                if not pools:
                    raise SystemExit("no page could be driven (missing checkpoints and no hand page?)")
                sessions = [Session(i, browser, server.url, pools, args) for i in range(args.sessions)]
                await asyncio.gather(*(s.run() for s in sessions))
            finally:
                await browser.close()
    errors = [e for s in sessions for e in s.errors]
    all_latency = [v for s in sessions for vs in s.latency.values() for v in vs]
    return {
        "pages_driven": sorted(pools),
        "pages_skipped": sorted(p for p in args.pages if p not in pools),
        "latency_ms": summary(all_latency),
        "latency_ms_by_page": {p: summary([v for s in sessions for v in s.latency[p]]) for p in sorted(pools)},
        "page_switch_ms": summary([v for s in sessions for v in s.switch]),
        "changes_checked": sum(sum(s.checked.values()) for s in sessions),
        "cross_talk": sum("cross-talk" in e for e in errors),
        "stale": sum("stale:" in e for e in errors),
        "own_marker_missing": sum("not in the heatmap" in e for e in errors),
        "timeouts": sum("Timeout" in e for e in errors),
        "exceptions_on_page": sum("exception shown" in e for e in errors),
        "errors": len(errors),
        "error_samples": errors[:20],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--changes", type=int, default=10, help="input changes per session")
    ap.add_argument("--pages", default=",".join(DEFAULT_PAGES), help="pages to cycle through")
    add_app_options(ap, timeout_s=300, timeout_help="per change (20 sessions share the CPU)")
    args = ap.parse_args()
    args.pages = args.pages.split(",")
    usable = [p for p, s in PAGES.items() if s.input_key and s.app == APP]  # pages of app.py with a text input
    bad = [p for p in args.pages if p not in usable]
    if bad:
        raise SystemExit(f"pages {bad} are not pages of app.py with a main text input; choose from {usable}")
    r, ckpt = run_on_checkpoints(lambda a: asyncio.run(run(a)), args)
    emit(
        {
            "benchmark": "load",
            "sessions": args.sessions,
            "changes_per_session": args.changes,
            "checkpoints": ckpt,
            **r,
            "target_errors": 0,
            "met": r["errors"] == 0,
        }
    )


if __name__ == "__main__":
    main()
