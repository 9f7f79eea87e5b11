"""Each page beside the floor, measured in alternation: the issue's ratios with the machine's drift taken out.

    python -m bench.paired [--runs 10] [--pages classifier,translator,ablation,...]

``bench.page_latency`` measures the floor first and each page minutes later. On this shared 2-core
machine the floor's own reload moved between 322 and 523 ms from one run of it to the next, and every
page's ratio with it. Here one server serves the floor (``bench/floor_app.py``, at the root as in
page_latency) and another the app (``serve.py``, as ``make run``), both warm, and every round measures
both, a few seconds apart: the floor's reload, its first and its next change, then the page's. Each round
gives the page's ratios to the floor of the same round; reported are the medians of those ratios, with the
medians and p95 of the times themselves. What "reload", "first change" and "next change" mean, and when a
page counts as rendered, is ``bench.page_latency``'s (its functions do the measuring).

Both pages stay open in their own browser contexts for the whole page's rounds (the one not measured is
idle). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from bench._server import add_app_options, checkpoint_env, emit, log, run_on_checkpoints, summary
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

FLOOR = "floor"


def rounds(browser: Any, urls: dict[str, str], name: str, pools: dict, args: argparse.Namespace) -> dict[str, Any]:
    """``args.runs`` rounds of the floor and page ``name``; their times and per-round ratios."""
    timeout_ms, hold = args.timeout_s * 1000, args.settle_ms
    names = (FLOOR, name)
    pages = {n: new_page(browser, PAGES[n], hold) for n in names}
    times: dict[str, dict[str, list[float]]] = {n: {"reload": [], "first": [], "next": []} for n in names}
    errors: list[str] = []
    try:
        for n in names:  # first visits and one untimed change: models loaded, first inference done
            measure_render(pages[n], page_url(urls[n], n), timeout_ms=timeout_ms)
            if n in pools:
                text = make_input(n, pools[n], -1, marker(0, 0))
                measure_interaction(pages[n], PAGES[n], text, marker(0, 0), hold_ms=hold, timeout_ms=timeout_ms)
        for r in range(args.runs):
            got: dict[str, dict[str, float]] = {n: {} for n in names}
            try:
                for n in names:
                    got[n]["reload"] = measure_render(pages[n], None, timeout_ms=timeout_ms)["ms"]
                    if n not in pools:
                        continue
                    for c, what in ((1, "first"), (2, "next")):
                        mark = marker(r + 1, c)
                        text = make_input(n, pools[n], 1000 * (r + 1) + c, mark)
                        m = measure_interaction(pages[n], PAGES[n], text, mark, hold_ms=hold, timeout_ms=timeout_ms)
                        got[n][what] = m["ms"]
            except Exception as e:  # noqa: BLE001 - counted and reported; the round is left out
                errors.append(f"round {r + 1}: {type(e).__name__}: {str(e)[:300]}")
                log(f"{name} round {r + 1}: ERROR {e}")
                continue
            for n in names:
                for what, ms in got[n].items():
                    times[n][what].append(ms)
            log(f"{name} round {r + 1}/{args.runs} done")
    finally:
        for page in pages.values():
            page.context.close()
    out: dict[str, Any] = {"errors": errors}
    for what in ("reload", "first", "next"):
        floor, page = times[FLOOR][what], times[name][what]
        if not page or len(page) != len(floor):
            continue
        ratios = [p / f for p, f in zip(page, floor)]
        out[what] = {
            "page_ms": summary(page),
            "floor_ms": summary(floor),
            "ratio_median": round(statistics.median(ratios), 3),
            "ratio_of_medians": round(statistics.median(page) / statistics.median(floor), 3),
        }
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    names = [p.strip() for p in args.pages.split(",") if p.strip()]
    bad = [p for p in names if p not in PAGES or PAGES[p].app != APP]
    if bad:
        raise SystemExit(
            f"pages {bad} are not pages of the app; choose from {[p for p in PAGES if PAGES[p].app == APP]}"
        )
    env = checkpoint_env(args.checkpoints)
    pools = input_pools([FLOOR, *names], args.checkpoints)
    result: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            with (
                streamlit_server(app=PAGES[FLOOR].app, env=env, log_name="paired-floor") as floor,
                streamlit_server(app=APP, env=env, log_name="paired-app") as app,
            ):
                log(f"primed: router ran: {prime(browser, app.url, timeout_ms=args.timeout_s * 1000)}")
                for name in names:
                    result[name] = rounds(browser, {FLOOR: floor.url, name: app.url}, name, pools, args)
                    summary_line = {
                        w: result[name][w]["ratio_median"] for w in ("reload", "first", "next") if w in result[name]
                    }
                    log(f"{name}: ratio to the floor (median of rounds): {summary_line}")
        finally:
            browser.close()
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="rounds per page (floor and page each)")
    ap.add_argument("--pages", default="classifier,translator,generator,ablation,pairs,profiles,workshop")
    add_app_options(ap)
    args = ap.parse_args()
    pages, ckpt = run_on_checkpoints(run, args)
    emit(
        {
            "benchmark": "paired",
            "runs": args.runs,
            "checkpoints": ckpt,
            "pages": pages,
            "errors": sum(len(p["errors"]) for p in pages.values()),
        }
    )


if __name__ == "__main__":
    main()
