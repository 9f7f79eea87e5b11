"""Page latency in a real browser: cold first render, warm render and input-change latency per page.

    python -m bench.page_latency [--runs 10] [--cold-runs N] [--pages hand,classifier,...] [--nav-from workshop]

- cold: a fresh ``streamlit run app.py`` per measurement (nothing imported, no model loaded) and
  a fresh browser context; from ``page.goto("/<page>")`` to "rendered". ``cold_router_ran`` counts
  the runs in which app.py ran at all (see ``prime``: a deep link into a fresh server skips it).
- warm: ``page.reload()`` of a page already shown on a warm server (primed through "/", models
  loaded; the same text, so ``st.cache_data`` answers and no model runs). Pages are measured one at
  a time, each in its own browser context.
- navigation: on the warm server, in the same browser tab, click the sidebar link to another page
  (``--nav-from``, untimed) and then the link back; from the mousedown to the page rendered at its
  own URL. This is how a class moves through the app; a reload (above) also restarts Streamlit's
  front end, and for every page but the root it first asks ``/<page>/_stcore/health`` (404) and
  retries at ``/`` 100 ms later (Streamlit's base-path probe, in its front end).
- interaction: type a new 20-token input (different every run, so no cache hit) into the page's
  main text input and press Enter; from the keydown to "rendered" with the *new* heatmap. Timed
  twice per round: the first change after the reload (``interaction_ms``) and a second change on
  the same document (``interaction_repeat_ms``: a student trying sentence after sentence).

"Rendered" means: connected, Streamlit's script state is ``notRunning``, no exception, and the
page's main heatmap (a plotly chart found by its widget key) holds data that differs from before
the change and, for word-level pages, contains the run's marker word. It must hold for
``--settle-ms`` (so a page that reruns itself is caught; the wait is not counted), and the time
reported is when it first became true. Both ends are read from the page's own clock
(``performance.now()``: navigation start, or the Enter keydown) by a MutationObserver at the moment
the DOM changes, so a slow benchmark process does not inflate them. The status widget
("Running…") appears about 0.5 s into a run and fades out for 200 ms after it, so its disappearance
is reported separately as ``*_status_widget_gone_ms``.

Model pages whose checkpoint is missing render the "could not be loaded" message; then only their
render times are reported (``model_loaded: false``). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, replace
from typing import Any

from bench._server import (
    add_app_options,
    checkpoint_env,
    emit,
    has_checkpoint,
    log,
    read_checkpoint_meta,
    run_on_checkpoints,
    summary,
)
from fixtures.server import launch_chromium, streamlit_server


@dataclass(frozen=True)
class PageSpec:
    input_key: str | None  # widget key of the main text input (None: no interaction measured)
    chart_key: str | None  # key of the main heatmap's st.plotly_chart (None: the first chart on the page)
    task: str | None = None  # the checkpoint the page needs
    textarea: bool = False  # st.text_area commits on Ctrl+Enter, st.text_input on Enter
    word_level: bool = True  # the input's words become the heatmap's labels (so a marker word can be found)
    path: str | None = None  # URL path when it is not the page's name
    app: str = "serve.py"  # the Streamlit script that serves the page (serve.py: app.py without the base-path probe)
    explorer: bool = False  # chart_key is an attention explorer (a component), not a plotly chart
    matrix: bool = False  # chart_key is a matrix view (a component: viz/matrixview), not a plotly chart


# Widget and chart keys as used in ui/*.py; edit here when the pages change them.
PAGES: dict[str, PageSpec] = {
    # start is app.py's default page: Streamlit serves it at "/" (and answers "/start" with "Page not found")
    "start": PageSpec(None, "start-picture", path=""),
    "hand": PageSpec("hand_sentence", "hand-weights", matrix=True),
    "reshape": PageSpec(None, "reshape-params", matrix=True),  # the page's last matrix
    # the model pages: their attention explorer (every kind, layer and head) holds the new run
    "classifier": PageSpec("cls_text", "cls-explorer", task="classifier", explorer=True),
    "generator": PageSpec(
        "gen_prompt", "gen-explorer", task="generator", textarea=True, word_level=False, explorer=True
    ),
    "translator": PageSpec("tr_text", "tr-explorer", task="translator", explorer=True),
    # the pages beyond the five: their first render (they open on the classifier). Those with an
    # explorer draw no Plotly chart on load (their heatmaps are matrix views, their bars open on
    # request: tests/test_page_*.py), so the explorer, drawn after the page's other views, is the mark
    "ablation": PageSpec(None, "abl-explorer", task="classifier", explorer=True),
    "pairs": PageSpec(None, "pair-explorer", task="classifier", explorer=True),
    "profiles": PageSpec(None, "proex-explorer-0-0", task="classifier", explorer=True),
    "history": PageSpec(None, None, task="classifier"),
    "heads": PageSpec(None, "heads_scatter", task="classifier"),  # the head finder, from the stored scores
    "workshop": PageSpec(None, "ws-hint", matrix=True),  # the first question's hint (a matrix view)
    # not a page of the app: Streamlit with one text box and one heatmap, the floor under every figure
    "floor": PageSpec("floor_text", "floor-chart", path="", app="bench/floor_app.py"),
    # the same floor at a page path, as every page of the app but the start page (see bench/floor_pages.py)
    "floor_page": PageSpec("floor_text", "floor-chart", path="floor", app="bench/floor_pages.py"),
}
APP = "serve.py"  # what `make run` serves: app.py behind serve.py's page addresses (--router app.py: without)
MISSING_MODEL_TEXT = "model could not be loaded"  # pages.shared.models.require_checkpoint's message
ROUTER_TEXT = "The models run on"  # in pages.router.sidebar.sidebar's caption: shown only when app.py (the router) ran
INPUT_TOKENS = 20
TARGETS_MS = {"warm_interaction_median": 300, "warm_render_median": 1000}
TARGET_INTERACTION_PAGES = ("classifier", "translator")

# English words for the hand page (it builds its vocabulary from the sentence itself).
HAND_WORDS = (
    "the cat sat on a warm mat while two dogs ran past an old red barn near quiet green hills by "
    "bright blue water under soft morning light with small birds singing in tall trees"
).split()
LETTERS = "abcdefghij"  # digits spelled as letters: markers stay one token for every tokenizer


def letters(n: int) -> str:
    """``n`` written digit by digit with the letters a-j: ``305`` -> ``"daf"``."""
    return "".join(LETTERS[int(d)] for d in str(n))


def marker(session: int, change: int) -> str:
    """A word no vocabulary holds, unique per (session, change): ``mk<session>x<change>``."""
    return f"mk{letters(session)}x{letters(change)}"


MARKER_PATTERN = r"mk[a-j]+x[a-j]+"


def word_pool(page: str, meta: dict[str, Any] | None) -> list[str]:
    """Words (or, for the generator, characters) the page's model knows, to build inputs from."""
    if page == "hand" or meta is None:
        return list(HAND_WORDS)
    vocabs = meta["vocabs"]
    if page == "generator":
        return [c for c in vocabs["chars"] if len(c) == 1 and (c.isalpha() and c.islower() or c == " ")]
    words = vocabs["src" if page == "translator" else "words"]
    pool = [w for w in words if w.isalpha() and not w.startswith("<")][:400]  # frequent words first
    if not pool:
        raise ValueError(f"the {page} vocabulary has no alphabetic words to build an input from")
    return pool


def make_input(page: str, pool: list[str], seed: int, mark: str | None, tokens: int = INPUT_TOKENS) -> str:
    """A ``tokens``-token input for ``page``: the marker first (so truncation keeps it), then words
    drawn from ``pool`` with ``seed``. The generator gets ``tokens`` characters instead."""
    rng = random.Random(seed)
    if page == "generator":
        letters_only = [c for c in pool if c != " "] or pool
        chars = [rng.choice(pool) for _ in range(tokens - 1)]
        return rng.choice(letters_only) + "".join(chars)
    words = [mark] if mark else []
    words += [rng.choice(pool) for _ in range(tokens - len(words))]
    return " ".join(words)


def page_url(base: str, name: str) -> str:
    path = PAGES[name].path
    return f"{base}/{name if path is None else path}"


def input_pools(pages: list[str], checkpoints: str | None) -> dict[str, list[str]]:
    """Word pools of the interactive pages that can run (a model page needs its checkpoint)."""
    pools = {}
    for name in pages:
        spec = PAGES[name]
        if spec.input_key and (spec.task is None or has_checkpoint(spec.task, checkpoints)):
            pools[name] = word_pool(name, read_checkpoint_meta(spec.task, checkpoints) if spec.task else None)
    return pools


# ------------------------------------------------------------------------------------ in the page

# Installed in every document before the app's own scripts: the time of each Enter keydown, a cached
# content signature of a plotly chart, and __benchWatch(a), which watches every DOM change from now
# on and stores in window.__bench.done the moment the page counts as rendered (see the module
# docstring): a.chart must hold data whose hash differs from a.before (and contains a.marker), or
# a.missing must be shown; it must stay so for a.hold ms. The timestamps are taken when the DOM
# changed, not when the benchmark looked, so a busy Python driver does not inflate them.
INIT_SCRIPT = """
(() => {
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') window.__benchT0 = performance.now();
  }, true);
  document.addEventListener('mousedown', () => { window.__benchClickT0 = performance.now(); }, true);
  // "explorer:<key>" / "matrix:<key>": a component (the attention explorer, a matrix view) whose
  // root lives in a shadow root under the keyed element
  window.__benchFind = (sel) => {
    const m = sel.match(/^(explorer|matrix):(.*)$/);
    if (!m) return document.querySelector(sel);
    const box = document.querySelector('.st-key-' + m[2]);
    const host = box && [...box.querySelectorAll('*')].find((e) => e.shadowRoot);
    const testid = m[1] === 'explorer' ? 'attention-explorer' : 'matrix-view';
    return host ? host.shadowRoot.querySelector(`[data-testid="${testid}"]`) : null;
  };
  window.__benchChart = (sel) => window.__benchSig(window.__benchFind(sel));
  window.__benchSig = (gd) => {
    if (gd && gd.dataset && ['attention-explorer', 'matrix-view'].includes(gd.dataset.testid)) {  // its data's digest
      const st = gd.dataset.state ? JSON.parse(gd.dataset.state) : null;
      return st && st.digest ? {hash: st.digest, text: gd.textContent} : null;
    }
    if (!gd || !gd.data || !gd._fullLayout) return null;
    if (gd.__benchData !== gd.data) {  // plotly replaces gd.data on every new figure
      const text = JSON.stringify(gd.data.map((t) => [t.x, t.y, t.z, t.text]));
      let h = 2166136261;
      for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 16777619); }
      gd.__benchData = gd.data;
      gd.__benchSig = {hash: (h >>> 0).toString(16) + ':' + text.length, text};
    }
    return gd.__benchSig;
  };
  window.__benchWatch = (a) => {
    if (window.__benchStop) window.__benchStop();
    const b = window.__bench = {since: undefined, gone: undefined, done: null, error: null};
    const check = () => {
      if (b.done || b.error) return;
      const now = performance.now();
      const app = document.querySelector('[data-testid="stApp"]');
      const main = document.querySelector('[data-testid="stMain"]');
      let what = null;
      if (app && main && app.getAttribute('data-test-connection-state') === 'CONNECTED'
          && app.getAttribute('data-test-script-state') === 'notRunning') {
        const exc = document.querySelector('[data-testid="stException"]');
        if (exc) { b.error = 'exception shown: ' + exc.textContent.slice(0, 500); stop(); return; }
        const lost = [...document.querySelectorAll('[role="dialog"]')].find((d) => d.textContent.includes('Page not found'));
        if (lost) { b.error = 'Streamlit says: ' + lost.textContent.slice(0, 200); stop(); return; }
        const c = window.__benchChart(a.chart);
        if (c && c.hash !== a.before && !(a.beforeAll || []).includes(c.hash) && (!a.marker || c.text.includes(a.marker))) what = 'chart';
        else if (a.missing && main.textContent.includes(a.missing)) what = 'missing';
        if (a.path != null && location.pathname.replace(/[/]+$/, '') !== a.path) what = null;  // not yet there
      }
      if (what === null) { b.since = undefined; b.gone = undefined; return; }
      if (b.since === undefined) b.since = now;
      if (b.gone === undefined && !document.querySelector('[data-testid="stStatusWidget"]')) b.gone = now;
      if (b.gone !== undefined && now - b.since >= a.hold) {
        const sidebar = document.querySelector('[data-testid="stSidebar"]');
        const router = a.router ? (sidebar ? sidebar.textContent : '').includes(a.router) : null;
        b.done = {since: b.since, gone: b.gone, what, router};
        stop();
      }
    };
    const observer = new MutationObserver(check);
    observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
    const timer = setInterval(check, 20);  // to notice that the state has held for a.hold ms
    const stop = window.__benchStop = () => { observer.disconnect(); clearInterval(timer); };
    check();
  };
  if (window.__benchRenderArg) window.__benchWatch(window.__benchRenderArg);
})();
"""
DONE = "() => window.__bench && (window.__bench.done || (window.__bench.error && {error: window.__bench.error}))"
START_CHANGE = """(a) => {
  window.__benchT0 = undefined;
  const c = window.__benchChart(a.chart);
  a.before = c ? c.hash : null;
  window.__benchWatch(a);
  return a.before;
}"""


def chart_selector(spec: PageSpec) -> str:
    if spec.explorer or spec.matrix:  # see __benchFind
        return f"{'explorer' if spec.explorer else 'matrix'}:{spec.chart_key}"
    return f".st-key-{spec.chart_key} .js-plotly-plot" if spec.chart_key else ".js-plotly-plot"


def input_selector(spec: PageSpec) -> str:
    return f".st-key-{spec.input_key} input, .st-key-{spec.input_key} textarea"


def watch_arg(spec: PageSpec, *, mark: str | None = None, hold_ms: float = 300, path: str | None = None) -> dict:
    """What counts as rendered (see INIT_SCRIPT); with ``path`` the browser must also be at that URL
    path (no trailing slash: "" for the root), as after a click on a sidebar link."""
    return {
        "path": path,
        "chart": chart_selector(spec),
        "before": None,
        "marker": mark if spec.word_level else None,
        "missing": MISSING_MODEL_TEXT if spec.task else None,
        "hold": hold_ms,
        "router": ROUTER_TEXT if spec.app == APP else None,
    }


def install(context: Any, render_arg: dict | None = None) -> None:
    """Add the measuring script to a browser context; with ``render_arg`` every new document
    (goto, reload) is watched from its first moment."""
    if render_arg is not None:
        context.add_init_script(f"window.__benchRenderArg = {json.dumps(render_arg)};")
    context.add_init_script(INIT_SCRIPT)


def new_page(browser: Any, spec: PageSpec, hold_ms: float) -> Any:
    """A fresh context (no shared cache, cookies or session) with one page that watches ``spec``."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    install(context, watch_arg(spec, hold_ms=hold_ms))
    page = context.new_page()
    page.bench_errors = []  # JavaScript errors, reported beside the numbers
    page.on("pageerror", lambda exc: page.bench_errors.append(str(exc)[:300]))
    return page


def wait_done(page: Any, timeout_ms: float) -> dict:
    result = page.wait_for_function(DONE, polling=50, timeout=timeout_ms).json_value()
    if "error" in result:
        raise RuntimeError(result["error"])
    return result


def measure_render(page: Any, url: str | None, *, timeout_ms: float) -> dict:
    """Open ``url`` (or reload when None); time from navigation start to rendered (page clock)."""
    if url is None:
        page.reload(wait_until="commit", timeout=timeout_ms)
    else:
        page.goto(url, wait_until="commit", timeout=timeout_ms)
    r = wait_done(page, timeout_ms)
    return {"ms": r["since"], "gone_ms": r["gone"], "model_loaded": r["what"] == "chart", "router_ran": r["router"]}


def prime(browser: Any, url: str, *, timeout_ms: float) -> bool:
    """Open the root URL once, so that app.py runs ``st.navigation``; returns whether the router ran.

    Until some session has run app.py, Streamlit 1.67 serves a deep link such as ``/classifier`` in
    its legacy mode for apps with a ``ui/`` folder: it runs ``pages/models/classifier.py`` alone (no
    app.py, no shared sidebar) and lists every file of ``ui/`` in the navigation. The warm
    measurements prime the server so that they time the app as designed."""
    page = new_page(browser, PageSpec(None, None), 300)
    try:
        return bool(measure_render(page, url + "/", timeout_ms=timeout_ms)["router_ran"])
    finally:
        page.context.close()


def measure_interaction(
    page: Any, spec: PageSpec, text: str, mark: str | None, *, hold_ms: float, timeout_ms: float
) -> dict:
    """Type ``text`` into the page's main input, commit it, and time keydown -> new heatmap rendered."""
    page.evaluate(START_CHANGE, watch_arg(spec, mark=mark, hold_ms=hold_ms))
    box = page.locator(input_selector(spec)).first
    box.fill(text, timeout=timeout_ms)
    box.press("Control+Enter" if spec.textarea else "Enter", timeout=timeout_ms)
    r = wait_done(page, timeout_ms)
    t0 = page.evaluate("() => window.__benchT0")
    if t0 is None:
        raise RuntimeError("the page saw no Enter keydown")
    if r["what"] != "chart":
        raise RuntimeError("the page showed no heatmap after the change")
    return {"ms": r["since"] - t0, "gone_ms": r["gone"] - t0}


def nav_path(name: str) -> str:
    """The URL path (no trailing slash) the browser shows for page ``name``."""
    return ("/" + (PAGES[name].path if PAGES[name].path is not None else name)).rstrip("/")


def navigable(name: str) -> bool:
    """Whether the page has a sidebar link of its own (not a URL variant, not another app)."""
    spec = PAGES[name]
    return spec.app == APP and "?" not in (spec.path or "")


def click_link(page: Any, base: str, name: str, *, hold_ms: float, timeout_ms: float) -> float:
    """Click the sidebar link to ``name`` (same browser session, no reload); the time from the
    mousedown to ``name`` rendered at its own URL (page clock)."""
    spec = PAGES[name]
    # every chart on screen before the click is the other page's: none of them counts as rendered
    start = """(a) => {
      window.__benchClickT0 = undefined;
      a.beforeAll = [...document.querySelectorAll('.js-plotly-plot')].map((gd) => (window.__benchSig(gd) || {}).hash);
      window.__benchWatch(a);
    }"""
    page.evaluate(start, watch_arg(spec, hold_ms=hold_ms, path=nav_path(name)))
    page.locator(f'[data-testid="stSidebarNavLink"][href="{page_url(base, name)}"]').first.click(timeout=timeout_ms)
    r = wait_done(page, timeout_ms)
    t0 = page.evaluate("() => window.__benchClickT0")
    if t0 is None:
        raise RuntimeError("the page saw no mousedown on the link")
    return r["since"] - t0


def measure_navigation(page: Any, base: str, name: str, origin: str, *, hold_ms: float, timeout_ms: float) -> dict:
    """In-app navigation: from page ``name``, click the sidebar link to ``origin`` (untimed), then
    the link back to ``name``; time from that mousedown to ``name`` rendered."""
    click_link(page, base, origin, hold_ms=hold_ms, timeout_ms=timeout_ms)
    return {"ms": click_link(page, base, name, hold_ms=hold_ms, timeout_ms=timeout_ms)}


# --------------------------------------------------------------------------------------- the runs


def cold_renders(browser: Any, pages: list[str], runs: int, env: dict, args: argparse.Namespace) -> dict:
    out: dict[str, dict[str, list]] = {
        p: {"ms": [], "gone_ms": [], "startup_s": [], "errors": [], "router": []} for p in pages
    }
    for r in range(runs):
        for name in pages:
            with streamlit_server(app=PAGES[name].app, env=env, log_name=f"cold-{name}") as server:
                page = new_page(browser, PAGES[name], args.settle_ms)
                try:
                    m = measure_render(page, page_url(server.url, name), timeout_ms=args.timeout_s * 1000)
                    out[name]["ms"].append(m["ms"])
                    out[name]["gone_ms"].append(m["gone_ms"])
                    out[name]["router"].append(bool(m["router_ran"]))
                    log(f"cold {name} run {r + 1}/{runs}: {m['ms']:.0f} ms (router ran: {m['router_ran']})")
                except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                    out[name]["errors"].append(f"cold run {r + 1}: {type(e).__name__}: {str(e)[:300]}")
                    log(f"cold {name} run {r + 1}: ERROR {e}")
                finally:
                    out[name]["errors"] += [f"javascript: {e}" for e in page.bench_errors]
                    page.context.close()
                out[name]["startup_s"].append(server.startup_s)
    return out


def warm_runs(browser: Any, pages: list[str], runs: int, env: dict, args: argparse.Namespace) -> dict:
    """On one server (of the pages' one app), one page at a time in its own browser context, closed
    before the next page opens: a first visit and one input change (not timed), then ``runs``
    rounds of a reload and an input change. One page at a time, as a user has it: with every page
    open at once in one browser (this script's first design), warm renders measured up to 70 % and
    interactions up to 20 % slower, though the idle pages used almost no CPU; we did not find why."""
    timeout_ms, hold = args.timeout_s * 1000, args.settle_ms
    keys = ("warm", "warm_gone", "inter", "inter_gone", "repeat", "nav", "errors")
    out: dict[str, dict[str, Any]] = {p: {k: [] for k in keys} | {"loaded": None} for p in pages}
    pools = input_pools(pages, args.checkpoints)
    (app,) = {PAGES[p].app for p in pages}
    with streamlit_server(app=app, env=env, log_name="warm") as server:
        if app == APP:  # the other apps have no router to prime (and may show no chart at "/")
            log(f"primed: router ran: {prime(browser, server.url, timeout_ms=timeout_ms)}")
        for name in pages:
            spec = PAGES[name]
            page = new_page(browser, spec, hold)
            try:
                m = measure_render(page, page_url(server.url, name), timeout_ms=timeout_ms)  # loads the model
                out[name]["loaded"] = m["model_loaded"]
                if app == APP and not m["router_ran"]:
                    out[name]["errors"].append("app.py (the router) did not run: its sidebar is missing")
                log(f"first visit {name}: {m['ms']:.0f} ms, model loaded: {m['model_loaded']}")
                interactive = bool(spec.input_key and out[name]["loaded"] and name in pools)
                if interactive:  # one untimed change: the first inference after loading
                    mark = marker(0, 0)
                    text = make_input(name, pools[name], -1, mark)
                    measure_interaction(page, spec, text, mark, hold_ms=hold, timeout_ms=timeout_ms)
                for r in range(runs):
                    try:
                        m = measure_render(page, None, timeout_ms=timeout_ms)
                        out[name]["warm"].append(m["ms"])
                        out[name]["warm_gone"].append(m["gone_ms"])
                    except Exception as e:  # noqa: BLE001 - every failure is counted and reported
                        out[name]["errors"].append(f"warm run {r + 1}: {type(e).__name__}: {str(e)[:300]}")
                    if interactive:  # the first change after the reload, then a second one
                        for session, what in ((0, "interaction"), (1, "repeated interaction")):
                            mark = marker(session, r + 1)
                            text = make_input(name, pools[name], r + 1000 * session, mark)
                            try:
                                m = measure_interaction(page, spec, text, mark, hold_ms=hold, timeout_ms=timeout_ms)
                                if session == 0:
                                    out[name]["inter"].append(m["ms"])
                                    out[name]["inter_gone"].append(m["gone_ms"])
                                else:
                                    out[name]["repeat"].append(m["ms"])
                            except Exception as e:  # noqa: BLE001
                                out[name]["errors"].append(f"{what} run {r + 1}: {type(e).__name__}: {str(e)[:300]}")
                    if navigable(name) and args.nav_from:
                        origin = args.nav_from if name != args.nav_from else "hand"
                        try:
                            m = measure_navigation(page, server.url, name, origin, hold_ms=hold, timeout_ms=timeout_ms)
                            out[name]["nav"].append(m["ms"])
                        except Exception as e:  # noqa: BLE001
                            out[name]["errors"].append(f"navigation run {r + 1}: {type(e).__name__}: {str(e)[:300]}")
                med = {k: summary(out[name][k])["median"] for k in ("warm", "nav", "inter", "repeat")}
                log(
                    f"{name}: medians (ms): reload {med['warm']}, in-app navigation {med['nav']}, "
                    f"first change {med['inter']}, repeated change {med['repeat']}"
                )
            except Exception as e:  # noqa: BLE001
                out[name]["errors"].append(f"first visit: {type(e).__name__}: {str(e)[:300]}")
            finally:
                out[name]["errors"] += [f"javascript: {e}" for e in page.bench_errors]
                page.context.close()
    return out


def targets(pages: dict[str, dict]) -> dict[str, Any]:
    """Each target beside the measured median, for each way of measuring it (the first change after a
    reload and a repeated change; a reload and an in-app navigation); ``met`` is None when not measured."""
    res: dict[str, Any] = {}

    def target(label: str, med: float | None, limit: float) -> None:
        res[label] = {"median_ms": med, "met": None if med is None else med <= limit}

    limit = TARGETS_MS["warm_interaction_median"]
    for name in TARGET_INTERACTION_PAGES:
        p = pages.get(name, {})
        target(f"{name}_warm_interaction_median_le_{limit}ms", p.get("interaction_ms", {}).get("median"), limit)
        target(
            f"{name}_repeated_interaction_median_le_{limit}ms", p.get("interaction_repeat_ms", {}).get("median"), limit
        )
    limit = TARGETS_MS["warm_render_median"]
    for name, p in pages.items():
        target(f"{name}_warm_render_median_le_{limit}ms", p.get("warm_ms", {}).get("median"), limit)
        if "navigation_ms" in p:
            target(f"{name}_in_app_navigation_median_le_{limit}ms", p["navigation_ms"].get("median"), limit)
    return res


def parse_pages(text: str) -> list[str]:
    """The comma-separated page names of a ``--pages`` option; exits naming any unknown one."""
    pages = text.split(",")
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        raise SystemExit(f"unknown page(s) {unknown}; choose from {list(PAGES)}")
    return pages


def run(args: argparse.Namespace) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    pages = parse_pages(args.pages)
    env = checkpoint_env(args.checkpoints)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            cold = cold_renders(browser, pages, args.cold_runs, env, args) if args.cold_runs else None
            warm = {}
            for app in dict.fromkeys(PAGES[p].app for p in pages):  # one warm server per app
                warm.update(warm_runs(browser, [p for p in pages if PAGES[p].app == app], args.runs, env, args))
        finally:
            browser.close()
    result: dict[str, Any] = {}
    for name in pages:
        w = warm[name]
        entry: dict[str, Any] = {"model_loaded": w["loaded"]}
        if cold:
            entry["cold_ms"] = summary(cold[name]["ms"])
            entry["cold_status_widget_gone_ms"] = summary(cold[name]["gone_ms"])
            if PAGES[name].app == APP:
                entry["cold_router_ran"] = f"{sum(cold[name]['router'])}/{len(cold[name]['router'])}"
            entry["server_startup_s"] = summary(cold[name]["startup_s"], 2)
        entry["warm_ms"] = summary(w["warm"])
        entry["warm_status_widget_gone_ms"] = summary(w["warm_gone"])
        if w["nav"] or (navigable(name) and args.nav_from):
            entry["navigation_ms"] = summary(w["nav"])
        if PAGES[name].input_key:
            entry["interaction_ms"] = summary(w["inter"])
            entry["interaction_status_widget_gone_ms"] = summary(w["inter_gone"])
            entry["interaction_repeat_ms"] = summary(w["repeat"])
        entry["errors"] = (cold[name]["errors"] if cold else []) + w["errors"]
        result[name] = entry
    return result


def use_router(script: str) -> None:
    """Serve the app's pages with ``script`` (``serve.py`` or ``app.py``) in this run."""
    global APP
    for name, spec in PAGES.items():
        if spec.app == APP:
            PAGES[name] = replace(spec, app=script)
    APP = script


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="warm renders and input changes per page")
    ap.add_argument(
        "--cold-runs", type=int, default=None, help="fresh-server renders per page (default: --runs; 0 skips)"
    )
    ap.add_argument("--pages", default=",".join(PAGES), help="comma-separated url paths")
    ap.add_argument(
        "--nav-from",
        default="workshop",
        choices=[p for p in PAGES if navigable(p)] + [""],
        help="the page in-app navigation starts from (its own timing: from 'hand'); '' skips navigation",
    )
    ap.add_argument(
        "--router",
        default=APP,
        choices=(APP, "app.py"),
        help="serve the app's pages with serve.py (as `make run`) or with plain `streamlit run app.py`",
    )
    add_app_options(ap)
    args = ap.parse_args()
    use_router(args.router)
    if args.cold_runs is None:
        args.cold_runs = args.runs
    pages, ckpt = run_on_checkpoints(run, args)
    emit(
        {
            "benchmark": "page_latency",
            "runs": args.runs,
            "cold_runs": args.cold_runs,
            "input_tokens": INPUT_TOKENS,
            "checkpoints": ckpt,
            "pages": pages,
            "targets": targets(pages),
            "errors": sum(len(p["errors"]) for p in pages.values()),
        }
    )


if __name__ == "__main__":
    main()
