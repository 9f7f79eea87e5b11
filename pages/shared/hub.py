"""A Hugging Face model on a page: each session's own model, kept by id within a memory budget and shared
read-only with every session that opens the same one (:class:`~model.hub.cache.ModelCache`: least recently used
first out, never a model a session is using; when those fill the budget the page says so), opened with a
progress bar; its runs kept within a memory budget, explanations cached per input; a
clicked weight explained step by step; every :class:`~model.hub.errors.HubError` shown as a message,
never raised. Also the translator page's second explorer, :func:`hub_cross_attention_panel`.
"""

from __future__ import annotations

import math
import threading
import uuid
import weakref
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

import numpy as np
import streamlit as st

from model.core.explanation import Explanation
from model.core.results import RunResult
from model.hub.cache import BYTES_PER_PARAM, CacheFull, ModelCache, memory_budget, model_bytes
from model.hub.errors import HubError
from model.hub.explain import explain
from model.hub.load import HubModel, load
from model.hub.run import HubRun, run
from model.hub.tokens import hide_specials
from pages.shared import runs
from pages.shared.display import output_text
from pages.shared.explain import Explainer, explain_panel, remembered_cell
from pages.shared.explorer import attention_explorer, explorer_file, html_download, html_name
from pages.shared.models import device
from pages.shared.text import markdown_escape
from viz.explorer.payload import MAX_WEIGHTS

CHARS_PER_TOKEN = 32  # text past this many characters a token of the limit is cut before tokenising
MAX_GENERATE = 40  # tokens a page generates at most (greedy, one forward pass each)
TRANSLATOR_HUB = "Helsinki-NLP/opus-mt-de-en"  # a Marian German -> English model (74 M parameters)
FAILED = "hub_failed"  # session key: the last model this session could not open, and why
HOLDER = "_hub_holder"  # session key: this session's own name in the model cache's pins
POLL_S = 0.2  # how often the progress bar follows a load running in its own thread


def hub_key(hub: HubModel) -> tuple[str, str, str]:
    """What tells two loaded models apart in the caches: the id or folder, its files, the device."""
    return hub.source, str(hub.folder), str(hub.device)


CACHE = dict(hash_funcs={HubModel: hub_key})


@st.cache_resource(max_entries=1, show_spinner=False)  # a new budget (the host's setting) replaces the cache
def _models(budget: int) -> ModelCache:
    """The Hub models this process keeps, for every session (cleared with every other resource by
    ``st.cache_resource.clear``). A model is loaded outside any cached function because Streamlit replays what
    a cached function draws, and the progress bar one session drew does not exist in the next one's page.
    A model let go takes its kept runs with it (they hold its maps, not the model, but nobody will ask)."""
    return ModelCache(budget, on_evict=lambda key, hub: _drop_runs(hub))


def models() -> ModelCache:
    """The process's model cache, its budget read from the host's setting (a HubError when that is wrong)."""
    return _models(memory_budget())


def holder(slot: str) -> tuple[str, str]:
    """This session's name in the cache's pins, per ``slot`` (the "Any model" page and the translator's
    panel each pin a model of their own)."""
    return st.session_state.setdefault(HOLDER, uuid.uuid4().hex), slot


def page_limit(hub: HubModel) -> int:
    """The tokens a run reads here: the model's own maximum (GPT-2 1,024, BERT 512), unless every map of
    every kind at that length would pass what the explorer sends (:data:`~viz.explorer.payload.MAX_WEIGHTS`,
    a 12-layer, 12-head model at 1,024 tokens): then the longest input whose maps fit."""
    config = hub.model.config
    layers = getattr(config, "num_hidden_layers", 0) or 0
    heads = getattr(config, "num_attention_heads", 0) or getattr(config, "encoder_attention_heads", 0) or 0
    kinds = 3 if hub.shape == "encoder-decoder" else 1  # encoder, decoder and cross: about the same size each
    maps = max(1, kinds * layers * heads)
    return max(2, min(hub.max_tokens, math.isqrt(MAX_WEIGHTS // maps)))


def read_text(hub: HubModel, text: str | None) -> str | None:
    """The text for ``hub`` to read, stripped, or None after a message when it is empty. Text far past
    what the model reads (more than CHARS_PER_TOKEN characters a token) is cut before it is tokenised,
    with a note; the run then cuts it to the model's tokens and says so (:func:`input_notes`)."""
    text = (text or "").strip()
    if not text:
        st.warning("The text is empty. Type some text to see its attention.")
        return None
    most = page_limit(hub) * CHARS_PER_TOKEN
    if len(text) > most:
        st.info(
            f"The text has {len(text):,} characters, far more than the {page_limit(hub):,} tokens the model reads "
            f"here: only its first {most:,} characters are tokenised."
        )
    return cut_text(hub, text)


def cut_text(hub: HubModel, text: str) -> str:
    """What :func:`read_text` passes on, without its messages: ``text`` stripped and cut to
    CHARS_PER_TOKEN characters a token of :func:`page_limit`."""
    return (text or "").strip()[: page_limit(hub) * CHARS_PER_TOKEN]


def _failure(source: str, message: str) -> None:
    st.error(f"**{markdown_escape(source)}** could not be opened: {markdown_escape(message)}.")
    st.caption(
        "The other pages keep working. Check the id or the folder, or open a folder that "
        "`save_pretrained` wrote (config.json, model.safetensors and the tokenizer files)."
    )
    st.button(
        "Try again",
        key="hub_retry",
        on_click=lambda: st.session_state.pop(FAILED, None),
        help="This session does not try a model that failed again until asked (the Hub may be back).",
    )


def _load_with_progress(source: str, dev: str, fits=None) -> HubModel:
    """:func:`model.hub.load.load` in a thread of its own while this script thread draws its progress:
    the Hub client reports from its download threads, which cannot draw on the page. ``fits(params)`` may
    refuse the model before its weights are downloaded."""
    latest = {"fraction": 0.0, "text": f"opening {source}"}
    bar = st.progress(0.0, text=markdown_escape(latest["text"]))
    shown = dict(latest)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            report = lambda f, text: latest.update(fraction=f, text=text)
            job = pool.submit(load, source, progress=report, device=dev, fits=fits)
            while not wait([job], timeout=POLL_S).done:
                if latest != shown:
                    shown = dict(latest)
                    bar.progress(min(max(float(shown["fraction"]), 0.0), 1.0), text=markdown_escape(shown["text"]))
            return job.result()
    finally:
        bar.empty()


def _full(source: str, message: str) -> None:
    """The budget is full of models in use: said plainly, with a way to try again (nothing is remembered)."""
    st.warning(f"**{markdown_escape(source)}** cannot be opened right now: {markdown_escape(message)}.")
    st.button("Try again", key="hub_retry_full", help="Tries again; models others stop using make room.")


def open_hub(source: str, dev: str | None = None, *, slot: str = "any") -> HubModel | None:
    """The model ``source`` names (a Hub id or a folder) on ``dev`` (the sidebar's device), or None
    after a message. Kept in the process's :func:`models` and pinned for this session's ``slot`` while it uses
    it; when the models others use leave no room, a message says so and nobody's model is taken. A source
    that failed is not tried again in this session until "Try again"."""
    source, dev = (source or "").strip(), dev or device()
    failed = st.session_state.get(FAILED)
    if failed and tuple(failed[:2]) == (source, dev):
        _failure(source, failed[2])
        return None
    try:
        cache = models()
    except HubError as err:  # the host's memory setting is not a number
        _failure(source, str(err))
        return None
    key, who = (source, dev), holder(slot)
    hub = cache.get(key, who)
    if hub is None:
        with cache.loading(key):  # one load per model: a second session asking meanwhile waits, then reads it
            hub = cache.get(key, who)
            if hub is None:
                fits = lambda params: cache.check(params * BYTES_PER_PARAM, who, name=source)
                try:
                    loaded = _load_with_progress(source, dev, fits)
                    hub = cache.put(key, loaded, model_bytes(loaded.model), who, name=source)
                except CacheFull as err:  # not remembered as a failure: room may free up
                    _full(source, str(err))
                    return None
                except Exception as err:  # HubError says what to do; anything else is the model's own code failing
                    message = str(err) if isinstance(err, HubError) else f"{type(err).__name__}: {err}"
                    st.session_state[FAILED] = (source, dev, message)
                    _failure(source, message)
                    return None
    st.session_state.pop(FAILED, None)
    return hub


def describe(hub: HubModel) -> str:
    """One line about the open model, and why it predicts nothing where its checkpoint lacks its
    prediction weights (Markdown-safe)."""
    shapes = {
        "encoder": "encoder (reads the whole text at once)",
        "decoder": "decoder (causal: each token sees only earlier ones)",
        "encoder-decoder": "encoder-decoder (reads the text, then writes)",
    }
    limit = page_limit(hub)
    line = (
        f"**{markdown_escape(hub.source)}**: {markdown_escape(hub.model_type)}, {shapes[hub.shape]}, "
        f"{hub.params:,} parameters, on {hub.device}; reads up to {limit} tokens here "
        f"(the model up to {hub.max_tokens})."
    )
    return f"{line} **Attention only.** {markdown_escape(hub.missing_note)}" if hub.missing else line


# Runs kept per process, by the bytes of their maps: a room of students each on a sentence keeps all their
# runs (a 20-token run of a 12 × 12 model is 0.2 MB), so a click never makes one again; a run larger than
# BIG_RUN (a 1,024-token GPT-2 run is 300 MB, its maps' triangle) is let go before any other forward pass,
# so no two such runs are held together; all kept runs together stay under RUNS_BUDGET.
RUNS_BUDGET = 256 * 2**20
BIG_RUN = 64 * 2**20


@st.cache_resource(max_entries=1, show_spinner=False)
def _run_slot() -> dict[str, Any]:
    """The runs of Hub models this process keeps, shared by every session as the model is: key -> run,
    oldest first, which :func:`run_hub` fills under its lock (cleared with every other resource by
    ``st.cache_resource.clear``)."""
    return {"lock": threading.Lock(), "runs": {}}


def _drop_runs(hub: HubModel) -> None:
    """Let go of every kept run of ``hub`` (a model the cache let go of)."""
    slot, model = _run_slot(), hub_key(hub)
    with slot["lock"]:
        for key in [k for k in slot["runs"] if k[:3] == model]:
            del slot["runs"][key]


def run_bytes(out: HubRun) -> int:
    """The bytes of a run's maps, what keeping it costs."""
    return sum(k.weights.nbytes for k in out.result.kinds.values())


def _let_go(runs: dict, budget: int, *, keep: int = 0) -> None:
    """Drop the oldest runs of ``runs`` until they fit ``budget``; the newest ``keep`` always stay."""
    while len(runs) > keep and sum(run_bytes(r) for r in runs.values()) > budget:
        runs.pop(next(iter(runs)))


def make_run(hub: HubModel, text: str, generate: int) -> HubRun:
    """A new run of ``text`` as the page reads it (at most :func:`page_limit` tokens), kept nowhere."""
    return run(hub, text, generate=generate, max_tokens=page_limit(hub))


def run_hub(hub: HubModel, text: str, generate: int) -> HubRun:
    """``text`` through ``hub`` (generating ``generate`` tokens where it generates), at most
    :func:`page_limit` tokens. Kept as it is, not copied: at 1,024 tokens of a 12 × 12 model the maps are
    300 MB (their causal triangle), which ``st.cache_data`` would pickle and copy on every rerun. The same
    text, model and length again (a click, a toggle, a rerun) get the kept run back without a forward pass. Before a new forward
    pass every run over :data:`BIG_RUN` is let go, so no two of them (600 MB at 1,024 tokens) are held
    together; after it, the oldest go until the rest fit :data:`RUNS_BUDGET` (the newest always stays).
    Nothing changes a run once made."""
    slot, key = _run_slot(), (*hub_key(hub), text, int(generate))
    with slot["lock"]:  # one forward pass at a time: two sessions asking for the same run wait for one
        runs = slot["runs"]
        if key in runs:
            runs[key] = runs.pop(key)  # now the newest
            return runs[key]
        for old in [k for k, r in runs.items() if run_bytes(r) > BIG_RUN]:
            del runs[old]
        _let_go(runs, RUNS_BUDGET)
        with st.spinner("Running the model…"):
            runs[key] = out = make_run(hub, text, generate)
        _let_go(runs, RUNS_BUDGET, keep=1)
        return out


def attempt_run(hub: HubModel, text: str | None, generate: int = 0) -> HubRun | None:
    """:func:`run_hub` on the text as :func:`read_text` reads it, or None after a message saying why it
    could not run."""
    text = read_text(hub, text)
    if text is None:
        return None
    try:
        return run_hub(hub, text, generate)
    except HubError as err:
        st.warning(f"Nothing to show: {markdown_escape(str(err))}.")
    except Exception as err:  # the model's own code failing on this input must not take the page down
        st.error(
            f"The model failed on this text ({markdown_escape(type(err).__name__)}: "
            f"{markdown_escape(str(err))[:300]}). Try a shorter or plainer text."
        )
    return None


def hub_download(
    hub: HubModel, held: weakref.ref, text: str, generate: int, hidden: bool, title: str, rollout: np.ndarray | None
) -> None:
    """The explorer's "Download as interactive HTML" button for the run ``held`` refers to (weakly), as
    shown (``hidden``: without special tokens). Streamlit keeps a download's callable until the session's
    next run ends: holding the run there would keep its maps (300 MB at 1,024 tokens) through the next
    run's forward pass. A click after the run was let go (another run replaced it) makes it again."""

    def data() -> bytes:
        out = held() or make_run(hub, cut_text(hub, text), generate)
        result = hide_specials(out.result)[0] if hidden else out.result
        return explorer_file(list(result.kinds.values()), title, rollout)

    html_download(data, html_name(title), "hub-download")


def input_notes(hub: HubModel, result: RunResult) -> bool:
    """What the model could not read: a cut input, unknown tokens; False when it read only unknowns."""
    if result.truncated:
        st.info(
            f"The text is longer than the {result.limit:,} tokens read here; only its first {result.limit:,} "
            "tokens are used."
        )
    hint = "Try a text in the language the model was trained on."  # this page has no examples to point to
    return runs.input_notes(replace(result, truncated=False), "the text", hint=hint)


def run_id(source: str, text: str, generate: int, hidden: bool = False) -> tuple:
    """What a stored click belongs to: a click on one run's map means nothing on another's."""
    return source, text, int(generate), bool(hidden)


@st.cache_data(max_entries=64, show_spinner="Recomputing the weight…", **CACHE)
def explain_cell(
    hub: HubModel, _result: RunResult, rid: tuple, kind: str, layer: int, head: int, query: int, key: int
) -> Explanation:
    """:func:`model.hub.explain.explain` of one cell of the run ``rid`` names (``_result``)."""
    return explain(hub, _result, kind, layer, head, query, key)


def hub_explainer(hub: HubModel, result: RunResult, rid: tuple) -> Explainer:
    """How a Hugging Face model explains a cell of ``result``: its layer's own projections (cached)."""
    return lambda kind, layer, head, query, key: explain_cell(hub, result, rid, kind, layer, head, query, key)


def hub_cross_attention_panel(source: str, german: str) -> None:
    """A Hugging Face translation model (e.g. Marian ``Helsinki-NLP/opus-mt-de-en``) on the same German
    sentence: its translation and its cross-attention in a second explorer (URL prefix ``trhub``),
    a clicked weight explained. Every failure (offline, not a translation model) is a message."""
    hub = open_hub(source, slot="translator")
    if hub is None:
        return
    if hub.shape != "encoder-decoder":
        only = "an encoder-only" if hub.shape == "encoder" else "a decoder-only"
        st.warning(
            f"{markdown_escape(hub.source)} is {only} model, not a translation (encoder-decoder) one: it "
            f"has no cross-attention. Try {TRANSLATOR_HUB}."
        )
        return
    hub_run = attempt_run(hub, german)
    if hub_run is None:
        return
    result = hub_run.result
    st.caption(describe(hub))
    output_text(result.prediction or "(the model wrote nothing)")
    kinds = [result.kinds["cross"]]
    rid = run_id(hub.source, german, 0)
    cell = attention_explorer(kinds, key="trhub_explorer", url_prefix="trhub", title=f"{hub.source}: cross-attention")
    cell = remembered_cell(rid, "trhub_cell", cell, kinds)
    explain_panel(hub_explainer(hub, result, rid), result, cell, "trhub")
