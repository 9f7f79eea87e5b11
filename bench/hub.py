"""Load time, memory and run time of a GPT-2-small-sized Hugging Face model opened by model.hub.

    python -m bench.hub [--repeats 3] [--runs 5] [--generate 10]

No download: the model is ``GPT2Config()`` (124 M parameters, the size of ``gpt2``) with random
weights, saved as safetensors with a small byte-level BPE tokenizer (fixtures/hub_tiny.py) to a
temporary folder, then opened by path the way the "Any model" page opens one. Each repeat runs in
a fresh Python process that has already imported torch and transformers (as the app has), and
reports: the seconds ``model.hub.load.load`` takes, the process's resident memory (RSS) before
and after, its peak RSS, and the median seconds of one ``run`` on a ~20-token sentence (all
attention maps kept), of greedy generation and of one ``explain``. Prints one JSON object.

    python -m bench.hub --page [--page-runs 10] [--size small]

With ``--page``: the same model on the "Any model" page in headless Chromium (``streamlit run
app.py``, opened by its folder through the URL). After a warm-up, a new sentence (a different one
each time, so no cache answers) is typed into the page's text box; the time runs from the Enter
keydown to the moment the explorer's ``data-state`` holds the new run (its digest changes; the map
is painted in the next animation frame, which ``bench.explorer`` measures). Beside it, the floor
page (``bench/floor_app.py``: one text box, one heatmap, no model) measured the way
``bench.page_latency`` does, on the same machine and browser.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._server import emit, log, summary
from fixtures.server import ROOT, launch_chromium, streamlit_server

SENTENCE = "Life is short, eat dessert first: the cat sat on the mat in the park."
CHILD = """
import json, resource, sys, time
import torch, transformers  # the app has both imported long before anyone opens a model
torch.set_num_threads(int(sys.argv[5]))

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

from model.hub.explain import explain
from model.hub.load import load
from model.hub.run import run
before = rss_mb()
t = time.perf_counter()
hub = load(sys.argv[1])
load_s = time.perf_counter() - t
loaded = rss_mb()

def timed(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, sorted(times)[len(times) // 2]

sentence, runs, new = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
run(hub, sentence)  # warm-up: first-call costs are not what a user waits for on the next input
out, run_s = timed(lambda: run(hub, sentence), runs)
gen, gen_s = timed(lambda: run(hub, sentence, generate=new), max(1, runs // 2))
kind = out.result.kinds["decoder"]
_, explain_s = timed(lambda: explain(hub, out.result, "decoder", kind.layers - 1, 0, len(kind.queries) - 1, 0), runs)
print(json.dumps({"load_s": load_s, "rss_before_mb": before, "rss_loaded_mb": loaded, "rss_after_runs_mb": rss_mb(),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "run_s": run_s,
                  "generate_s": gen_s, "explain_s": explain_s, "tokens": len(kind.queries),
                  "generated": len(gen.steps), "params": hub.params}))
"""


SIZES = {"small": {}, "tiny": {"n_layer": 2, "n_head": 2, "n_embd": 32, "vocab_size": 512}}  # tiny: smoke tests
# Llama-3.2-1B's shape (16 layers, width 2048, 32 query heads sharing 8 key/value heads, rotary positions) with
# the small tokenizer's vocabulary instead of 128,256 words: the attention and the layers are the real size,
# the embedding table is not (it costs memory, not attention work).
LLAMA_1B = {
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "num_hidden_layers": 16,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 64,
    "max_position_embeddings": 2048,
    "rope_theta": 500000.0,
    "tie_word_embeddings": True,
}
SHAPES = (*SIZES, "llama1b")


def build(folder: Path, size: str = "small") -> dict:
    """GPT-2 small's architecture (or a tiny one), or Llama-3.2-1B's (``llama1b``), with random weights and a
    small tokenizer, saved to ``folder``. The weights are drawn on a GPU when there is one (a 1B model's
    random start takes minutes on a CPU)."""
    import torch
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    from fixtures.hub_tiny import gpt2_tokenizer

    torch.manual_seed(0)
    t = time.perf_counter()
    tok = gpt2_tokenizer()
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        if size == "llama1b":
            model = LlamaForCausalLM(
                LlamaConfig(
                    **LLAMA_1B, vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id
                )
            )
        else:
            model = GPT2LMHeadModel(GPT2Config(**SIZES[size]))
    transformers.utils.logging.disable_progress_bar()
    model.save_pretrained(folder)
    tok.model_max_length = model.config.max_position_embeddings
    tok.save_pretrained(folder)
    size_bytes = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    return {"build_s": round(time.perf_counter() - t, 1), "weights_mb": round(size_bytes / 2**20, 1)}


EXPLORER = '[data-testid="attention-explorer"]'
DIGEST = "(root) => root.dataset.state ? JSON.parse(root.dataset.state).digest : null"
# From now on: the page clock's time at which the explorer's state first holds another run (digest).
# The explorer lives in its component's shadow root (out of reach of document.querySelector and of a
# document MutationObserver) and a new run mounts a new element, so the host is polled every 4 ms
# (the browser's shortest timer), scanned for again only when it left the page.
WATCH = """(a) => {
  window.__hubDone = undefined; window.__benchT0 = undefined;
  const find = () => [...document.querySelectorAll("*")].find((h) => h.shadowRoot && h.shadowRoot.querySelector(a.sel));
  let host = find();
  const timer = setInterval(() => {
    if (!host || !host.isConnected || !host.shadowRoot.querySelector(a.sel)) host = find();
    const root = host && host.shadowRoot.querySelector(a.sel), s = root && root.dataset.state;
    if (s && JSON.parse(s).digest !== a.before) { window.__hubDone = performance.now(); clearInterval(timer); }
  }, 4);
}"""
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


def sentence(i: int) -> str:
    """A different ~20-token sentence for every ``i``."""
    return f"{SENTENCE} {WORDS[i % len(WORDS)]} {WORDS[(i // len(WORDS)) % len(WORDS)]} number {i}"


def tokens(folder: Path, text: str) -> int:
    from transformers import AutoTokenizer

    return len(AutoTokenizer.from_pretrained(folder)(text)["input_ids"])


def page_times(browser, folder: Path, runs: int, timeout_ms: float) -> list[float]:
    """Enter keydown -> the explorer holds the new run, ``runs`` times after two untimed changes."""
    from urllib.parse import urlencode

    from bench.page_latency import install, prime

    with streamlit_server(log_name="hub-page") as server:
        prime(browser, server.url, timeout_ms=timeout_ms)  # app.py has run: the router serves the page
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        install(context)  # the Enter keydown's time (page clock)
        page = context.new_page()
        page.goto(f"{server.url}/any_model?{urlencode({'hub_id': str(folder), 'hub_text': sentence(0)})}")
        root = page.locator(EXPLORER)
        root.wait_for(timeout=timeout_ms)
        box = page.locator(".st-key-hub_text input")
        times = []
        for i in range(1, runs + 3):
            page.evaluate(WATCH, {"sel": EXPLORER, "before": root.evaluate(DIGEST)})
            box.fill(sentence(i))
            box.press("Enter")
            page.wait_for_function("() => window.__hubDone !== undefined", timeout=timeout_ms)
            ms = page.evaluate("() => window.__hubDone - window.__benchT0")
            log(f"page change {i}{' (warm-up)' if i <= 2 else ''}: {ms:.0f} ms")
            if i > 2:
                times.append(ms)
        context.close()
    return times


def floor_times(browser, runs: int, timeout_ms: float) -> list[float]:
    """The floor page's input change -> new heatmap, as bench.page_latency measures it."""
    from bench.page_latency import PAGES, measure_interaction, measure_render, new_page

    spec = PAGES["floor"]
    with streamlit_server(app=spec.app, log_name="hub-floor") as server:
        page = new_page(browser, spec, 300)
        measure_render(page, server.url + "/", timeout_ms=timeout_ms)
        times = [
            measure_interaction(page, spec, sentence(i), None, hold_ms=300, timeout_ms=timeout_ms)["ms"]
            for i in range(1, runs + 3)
        ][2:]
        page.context.close()
    return times


def measure_page(folder: Path, args: argparse.Namespace) -> dict:
    from playwright.sync_api import sync_playwright

    timeout_ms = args.timeout_s * 1000
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = page_times(browser, folder, args.page_runs, timeout_ms)
            floor = floor_times(browser, args.page_runs, timeout_ms)
        finally:
            browser.close()
    return {"new_sentence_to_explorer_ms": summary(page), "floor_new_sentence_to_heatmap_ms": summary(floor)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="fresh processes, each loading the model once")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per process (median reported)")
    ap.add_argument("--generate", type=int, default=10, help="tokens to generate greedily")
    ap.add_argument("--size", choices=list(SIZES), default="small", help="tiny: a 2-layer model, to test the script")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads in the child (the app uses 1)")
    ap.add_argument("--page", action="store_true", help="time a new sentence on the Any model page in Chromium")
    ap.add_argument("--page-runs", type=int, default=10, help="timed sentence changes (--page)")
    ap.add_argument("--timeout-s", type=float, default=240, help="per step in the browser (--page)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hub-") as tmp:
        folder = Path(tmp) / "gpt2-random"
        log(f"building a random GPT-2 ({args.size}) ...")
        made = build(folder, args.size)
        if args.page:
            return emit(
                {
                    "model": f"GPT2Config({', '.join(f'{k}={v}' for k, v in SIZES[args.size].items())}) "
                    "with random weights, opened by path on the Any model page",
                    **made,
                    "sentence_tokens": tokens(folder, sentence(1)),
                    **measure_page(folder, args),
                }
            )
        samples = []
        for i in range(args.repeats):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    str(folder),
                    SENTENCE,
                    str(args.runs),
                    str(args.generate),
                    str(args.threads),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
            )
            if proc.returncode:
                sys.exit(f"the measuring process failed:\n{proc.stderr[-3000:]}")
            samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
            log(f"repeat {i + 1}: load {samples[-1]['load_s']:.2f} s, run {samples[-1]['run_s'] * 1000:.0f} ms")

    def median(key: str, digits: int = 3) -> float:
        return round(statistics.median(s[key] for s in samples), digits)

    first = samples[0]
    emit(
        {
            "model": f"GPT2Config({', '.join(f'{k}={v}' for k, v in SIZES[args.size].items())}) with random weights "
            "(safetensors, opened by path)",
            "params": first["params"],
            **made,
            "threads": args.threads,
            "repeats": args.repeats,
            "sentence": SENTENCE,
            "tokens": first["tokens"],
            "load_s_median": median("load_s"),
            "load_s_max": round(max(s["load_s"] for s in samples), 3),
            "rss_before_load_mb": median("rss_before_mb", 1),
            "rss_loaded_mb": median("rss_loaded_mb", 1),
            "rss_added_by_model_mb": round(
                statistics.median(s["rss_loaded_mb"] - s["rss_before_mb"] for s in samples), 1
            ),
            "rss_after_runs_mb": median("rss_after_runs_mb", 1),
            "peak_rss_mb": median("peak_rss_mb", 1),
            "run_ms_median": round(1000 * median("run_s", 5), 1),
            f"generate_{args.generate}_ms_median": round(1000 * median("generate_s", 5), 1),
            "generated_tokens": first["generated"],
            "explain_ms_median": round(1000 * median("explain_s", 5), 1),
        }
    )


if __name__ == "__main__":
    main()
