"""Input-change latency of the app's pages with torch using 1 or 2 CPU threads in the server.

    python -m bench.threads [--threads 1,2] [--runs 10]

One ``streamlit run app.py`` per setting, all up at once, each started with
``ATTENTION_TORCH_THREADS=n`` (for the app to apply) and ``OMP_NUM_THREADS=n`` (which torch itself
reads at start-up, so the setting works even where the app ignores the first variable; pass
``--no-omp`` to test the app's variable alone). The thread count each server really uses is read
from the sidebar caption ("... N CPU threads") and reported. After one untimed visit and change
per page, the changes are timed as in ``bench.page_latency`` (keydown to the updated heatmap),
alternating between the servers every round so that drifting machine load hits all settings alike.
Prints one JSON object with the medians and the recommended default.
"""

from __future__ import annotations

import argparse
import math
import re
from contextlib import ExitStack
from typing import Any

from bench._server import (
    THREADS_ENV,
    add_app_options,
    checkpoint_env,
    emit,
    launch_chromium,
    log,
    percentile,
    run_on_checkpoints,
    streamlit_server,
    summary,
)
from bench.page_latency import (
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

DEFAULT_PAGES = ("classifier", "translator", "hand")
SAME_WITHIN = 0.05  # settings whose latency is within 5% of the best count as equally fast


def recommend(medians: dict[int, dict[str, float]]) -> dict[str, Any]:
    """The fewest threads whose geometric-mean latency over the pages (those measured for every
    setting) is within ``SAME_WITHIN`` of the best: fewer threads leave cores to other sessions and
    to the server's own work."""
    common = set.intersection(*(set(per_page) for per_page in medians.values())) if medians else set()
    if not common:
        return {"threads": None, "reason": "no page was measured with every setting"}
    score = {n: math.exp(sum(math.log(per_page[p]) for p in common) / len(common)) for n, per_page in medians.items()}
    best = min(score.values())
    pick = min(n for n, s in score.items() if s <= best * (1 + SAME_WITHIN))
    geo = {n: round(s, 1) for n, s in score.items()}
    if score[pick] == best:
        reason = f"lowest geometric-mean latency over the pages ({geo})"
    else:
        reason = f"within {SAME_WITHIN:.0%} of the fastest ({geo}) with fewer threads"
    return {"threads": pick, "geometric_mean_ms": geo, "reason": reason}


SIDEBAR_THREADS = re.compile(r"(\d+) CPU threads")


def sidebar_threads(page: Any) -> int | None:
    text = page.locator('[data-testid="stSidebar"]').first.text_content(timeout=30_000) or ""
    m = SIDEBAR_THREADS.search(text)
    return int(m.group(1)) if m else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    timeout_ms, hold = args.timeout_s * 1000, args.settle_ms
    pools = input_pools(args.pages, args.checkpoints)
    pages = [p for p in args.pages if p in pools]
    lat = {n: {p: [] for p in pages} for n in args.threads}
    effective, errors = {}, []
    with ExitStack() as stack:
        pw = stack.enter_context(sync_playwright())
        servers = {}
        for n in args.threads:
            env = {**checkpoint_env(args.checkpoints), THREADS_ENV: str(n)}
            if args.omp:
                env["OMP_NUM_THREADS"] = str(n)
            servers[n] = stack.enter_context(streamlit_server(env=env, log_name=f"threads{n}"))
        browser = launch_chromium(pw)
        stack.callback(browser.close)
        tabs, active = {}, set()
        for n, server in servers.items():
            if not prime(browser, server.url, timeout_ms=timeout_ms):
                errors.append(f"{n} threads: app.py (the router) did not run on the root page")
            for name in pages:  # first visit and one change: untimed
                tab = tabs[n, name] = new_page(browser, PAGES[name], hold)
                try:
                    if not measure_render(tab, page_url(server.url, name), timeout_ms=timeout_ms)["model_loaded"]:
                        errors.append(f"{n} threads, {name}: no model loaded; skipped")
                        continue
                    mark = marker(0, 0)
                    text = make_input(name, pools[name], -1, mark)
                    measure_interaction(tab, PAGES[name], text, mark, hold_ms=hold, timeout_ms=timeout_ms)
                    active.add((n, name))
                except Exception as e:  # noqa: BLE001 - the page is left out and the error reported
                    errors.append(f"{n} threads, {name}, first visit: {type(e).__name__}: {str(e)[:200]}")
            effective[n] = sidebar_threads(tabs[n, pages[0]]) if pages else None
            log(f"server with {n} thread(s) requested: sidebar says {effective[n]}")
        for r in range(args.runs):
            order = args.threads if r % 2 == 0 else args.threads[::-1]
            for n in order:
                for name in (p for p in pages if (n, p) in active):
                    mark = marker(0, r + 1)
                    try:
                        m = measure_interaction(tabs[n, name], PAGES[name], make_input(name, pools[name], r, mark), mark,
                                                hold_ms=hold, timeout_ms=timeout_ms)  # fmt: skip
                        lat[n][name].append(m["ms"])
                    except Exception as e:  # noqa: BLE001 - counted and reported
                        errors.append(f"{n} threads, {name}, run {r + 1}: {type(e).__name__}: {str(e)[:200]}")
            log(
                f"round {r + 1}/{args.runs}: "
                + "; ".join(
                    f"{n}t " + ", ".join(f"{p} {lat[n][p][-1]:.0f}" for p in pages if lat[n][p]) for n in args.threads
                )
            )
        for tab in tabs.values():
            errors += [f"javascript: {e}" for e in tab.bench_errors]
    medians = {n: {p: percentile(v, 50) for p, v in per.items() if v} for n, per in lat.items()}
    return {
        "pages": pages,
        "effective_threads": {str(n): effective.get(n) for n in args.threads},
        "interaction_ms": {str(n): {p: summary(v) for p, v in per.items()} for n, per in lat.items()},
        "median_ms": {str(n): {p: round(v, 1) for p, v in per.items()} for n, per in medians.items()},
        "recommendation": recommend(medians),
        "errors": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2", help="comma-separated torch thread counts to compare")
    ap.add_argument("--runs", type=int, default=10, help="timed changes per page and setting")
    ap.add_argument("--pages", default=",".join(DEFAULT_PAGES))
    ap.add_argument("--no-omp", dest="omp", action="store_false", help=f"set only ${THREADS_ENV}, not OMP_NUM_THREADS")
    add_app_options(ap)
    args = ap.parse_args()
    args.threads = [int(n) for n in args.threads.split(",")]
    args.pages = args.pages.split(",")
    r, ckpt = run_on_checkpoints(run, args)
    emit({
        "benchmark": "threads",
        "runs": args.runs,
        "env": {"app": THREADS_ENV, "also_omp_num_threads": args.omp},
        "checkpoints": ckpt,
        **r,
    })  # fmt: skip


if __name__ == "__main__":
    main()
