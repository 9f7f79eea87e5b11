"""Memory of the Streamlit server after every page has been shown (so all three models are loaded).

    python -m bench.memory [--changes 1]

Starts ``streamlit run app.py``, records its resident memory when idle, opens the root page (so
app.py's sidebar loads the models, see ``bench.page_latency.prime``) and every page in a real browser and waits until each has rendered (optionally changing each page's main input
``--changes`` times, so inference on a 20-token input has run too), then reads ``VmRSS`` (now) and
``VmHWM`` (peak since start) from ``/proc/<pid>/status`` for the server and any child processes.
The peak of several processes is reported as the sum of their peaks (an upper bound: they need
not peak together). Prints one JSON object; the target is a peak of at most 700 MB.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from bench._server import add_app_options, checkpoint_env, emit, log, run_on_checkpoints
from bench.page_latency import (
    APP,
    PAGES,
    input_pools,
    make_input,
    marker,
    measure_interaction,
    measure_render,
    new_page,
    page_url,
    prime,
)
from fixtures.server import launch_chromium, streamlit_server

TARGET_MB = 700


def proc_status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in kB (0 when the kernel does not report them)."""
    fields = {"VmRSS": 0, "VmHWM": 0}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in fields:
            fields[key] = int(value.split()[0])
    return fields


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])  # the field after the state; comm may hold spaces


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...)."""
    parents = {int(p): parent_of(int(p)) for p in os.listdir("/proc") if p.isdigit()}
    found, frontier = [], [pid]
    while frontier:
        kids = [p for p, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def tree_memory_mb(pid: int) -> dict[str, Any]:
    """Current and peak RSS (MB) of ``pid`` and its descendants."""
    procs = {pid: proc_status(pid)}
    for child in descendants(pid):
        try:
            procs[child] = proc_status(child)
        except OSError:  # exited meanwhile
            pass
    mb = lambda kb: round(kb / 1024, 1)
    return {
        "rss_mb": mb(sum(p["VmRSS"] for p in procs.values())),
        "peak_rss_mb": mb(sum(p["VmHWM"] for p in procs.values())),
        "server_rss_mb": mb(procs[pid]["VmRSS"]),
        "server_peak_rss_mb": mb(procs[pid]["VmHWM"]),
        "processes": len(procs),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    pages = args.pages.split(",")
    timeout_ms = args.timeout_s * 1000
    loaded, errors = {}, []
    with streamlit_server(env=checkpoint_env(args.checkpoints), log_name="memory") as server:
        idle = tree_memory_mb(server.pid)
        log(f"idle server: {idle['rss_mb']} MB")
        pools = input_pools(pages, args.checkpoints)
        with sync_playwright() as pw:
            browser = launch_chromium(pw)
            try:
                if not prime(browser, server.url, timeout_ms=timeout_ms):
                    errors.append("app.py (the router) did not run on the root page")
                for name in pages:
                    page = new_page(browser, PAGES[name], args.settle_ms)
                    try:
                        loaded[name] = measure_render(page, page_url(server.url, name), timeout_ms=timeout_ms)[
                            "model_loaded"
                        ]
                        for i in range(args.changes if loaded[name] and name in pools else 0):
                            mark = marker(0, i)
                            text = make_input(name, pools[name], i, mark)
                            measure_interaction(
                                page, PAGES[name], text, mark, hold_ms=args.settle_ms, timeout_ms=timeout_ms
                            )
                    except Exception as e:  # noqa: BLE001 - reported, the memory is still read
                        errors.append(f"{name}: {type(e).__name__}: {str(e)[:300]}")
                    finally:
                        errors += [f"{name}: javascript: {e}" for e in page.bench_errors]
                        page.context.close()
                    log(
                        f"{name}: shown (model loaded: {loaded.get(name)}); server {tree_memory_mb(server.pid)['rss_mb']} MB"
                    )
            finally:
                browser.close()
        after = tree_memory_mb(server.pid)
    return {"idle": idle, "after": after, "loaded": loaded, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    app_pages = [p for p, spec in PAGES.items() if spec.app == APP]  # not the floor app
    ap.add_argument("--pages", default=",".join(app_pages), help="comma-separated url paths to open")
    ap.add_argument("--changes", type=int, default=0, help="main-input changes per page after it renders")
    add_app_options(ap)
    args = ap.parse_args()
    bad = [p for p in args.pages.split(",") if p not in app_pages]
    if bad:
        raise SystemExit(f"pages {bad} are not pages of app.py; choose from {app_pages}")
    r, ckpt = run_on_checkpoints(run, args)
    after = r["after"]
    emit(
        {
            "benchmark": "memory",
            "checkpoints": ckpt,
            "pages_with_chart": r["loaded"],
            "models_loaded": sorted(p for p, ok in r["loaded"].items() if ok and PAGES[p].task),
            "changes_per_page": args.changes,
            "idle_rss_mb": r["idle"]["rss_mb"],
            **after,
            "target_peak_rss_mb": TARGET_MB,
            "met": after["peak_rss_mb"] <= TARGET_MB,
            "errors": r["errors"],
        }
    )


if __name__ == "__main__":
    main()
