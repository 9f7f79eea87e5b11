"""The head finder on a page: stored scores of our models, Hub models scored on request (cached per model and
corpus, with a progress bar), links that open the explorer on a line and a head, the drawn pattern, and
which of the finder's heads do their role on a model page's current input (● / ○)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import streamlit as st

from model.analysis import stored as stored_reports
from model.analysis.head_scan import (
    CorpusError,
    HeadScores,
    corpus_lines,
    corpus_name,
    default_corpus,
    our_reader,
    scan,
)
from model.analysis.heads import PLAYS, line_sums, pattern_scores
from model.analysis.induction import induction_here
from model.analysis.role_links import ROLES as LINK_ROLES
from model.analysis.role_links import SCALES, TARGETS, top_heads
from model.core.checkpoint import Checkpoint, default_dir
from model.core.results import RunResult
from model.core.specs import SPECS, kind_label
from model.hub.load import HubModel
from model.hub.reader import hub_reader
from pages import BY_ADDRESS
from pages import page as page_entry
from pages.shared.glossary import two_roles
from pages.shared.hub import hub_key, open_hub
from pages.shared.models import require_checkpoint
from pages.shared.runs import checkpoint_key
from pages.shared.state import bounded, on_request, one_of, select_choice, url_widget
from pages.shared.text import markdown_escape
from viz.common import head_name
from viz.heads import pattern_table

# the page a head's line opens: a model's own page (registry: its address and text key), else Any model
HUB_PAGE = "any_model"
PATTERN_LINES = 60  # lines a drawn pattern is matched on for our models (their stored scores keep no maps)
# the row roles (induction, scored on repeated probes, is named beside them); a head does its role on an input
# when its score there reaches the role's target (model.analysis.role_links.TARGETS), not a share of its corpus score
ROLES = {m: name for m, name in LINK_ROLES.items() if m != "induction"}

MAX_SCANS = 4
HUB_REPORTS = "heads_hub_reports"  # session: source -> the report the finder computed (the model pages read it)


@st.cache_data(max_entries=8, show_spinner=False)
def _read_lines(path: str, mtime: float) -> list[str]:
    return corpus_lines(Path(path).read_bytes(), name=Path(path).name)


@st.cache_data(max_entries=8, show_spinner=False)
def _stored_report(directory: str, stamps: tuple) -> dict | None:
    return stored_reports.stored_report(directory)


def stored_report(task: str) -> dict | None:
    """The scores stored beside ``task``'s checkpoint (with their corpus lines), or None
    (:func:`model.analysis.stored.stored_report`, cached until its files change)."""
    directory = default_dir(task)
    return _stored_report(str(directory), stored_reports.stamps(directory))


def read_upload(upload) -> list[str] | None:
    """An uploaded corpus as lines, or None after a message saying what is wrong."""
    try:
        return corpus_lines(upload.getvalue(), name=upload.name)
    except CorpusError as err:
        st.error(markdown_escape(str(err)))
        return None


def default_lines(hub: HubModel) -> list[str]:
    path = default_corpus(hub.spec)
    return _read_lines(str(path), path.stat().st_mtime)


class _Bar:
    """A progress bar a scan reports to."""

    def __init__(self, text: str) -> None:
        self.bar = st.progress(0.0, text=text)

    def __call__(self, fraction: float, text: str) -> None:
        self.bar.progress(min(max(fraction, 0.0), 1.0), text=text)


@st.cache_resource(show_spinner=False)
def _scans() -> dict:
    """Scans shared by every session, per model and corpus: a dict filled outside a cached function, because
    Streamlit replays what a cached function draws, and one session's progress bar is not in another's page."""
    return {}


def _cached_scan(key: tuple, reader, lines: tuple[str, ...], text: str) -> HeadScores:
    store = _scans()
    if key not in store:
        bar = _Bar(text)
        try:
            store[key] = scan(reader(), lines, progress=bar)
        finally:
            bar.bar.empty()
        while len(store) > MAX_SCANS:  # the oldest goes: a GPT-2's scan keeps ~4 MB of pattern blocks
            store.pop(next(iter(store)))
    return store[key]


def hub_scores(source: str, lines: Sequence[str] | None) -> tuple[dict, HeadScores] | None:
    """A Hub model's heads scored over ``lines`` (its default sample when None), with a progress bar the first
    time; cached per model and corpus. None after a message when the model cannot be opened."""
    hub = open_hub(source)
    if hub is None:
        return None
    lines = tuple(lines or default_lines(hub))
    text = f"scoring the heads of {markdown_escape(source)} over {len(lines)} lines"
    scores = _cached_scan(("hub", *hub_key(hub), hash(lines)), lambda: hub_reader(hub), lines, text)
    report = scores.to_json(examples=True, corpus=corpus_name(default_corpus(hub.spec)))
    report["lines"] = list(lines)
    st.session_state.setdefault(HUB_REPORTS, {})[source] = {k: v for k, v in report.items() if k != "lines"}
    return report, scores


def pattern_blocks(ck: Checkpoint, lines: Sequence[str]) -> dict[str, list[np.ndarray]]:
    """Each square kind's first blocks over the first :data:`PATTERN_LINES` lines (one scan, cached)."""
    lines = tuple(lines[:PATTERN_LINES])
    text = f"reading {len(lines)} lines for the pattern"
    scores = _cached_scan(("ours", *checkpoint_key(ck), hash(lines)), lambda: our_reader(ck), lines, text)
    return {name: t.blocks for name, t in scores.kinds.items() if t.blocks}


def explorer_link(source: str, line: str, kind: str, layer: int, head: int) -> str:
    """The model page's address that opens ``line`` in the explorer at ``kind``, ``layer``, ``head``. On a page
    whose explorer shows a window of the text (the generator's first characters), the window is the whole
    line, so that a repeat is never cut off. A model of ours without a page of its own: "" (no link)."""
    if source in SPECS and source not in BY_ADDRESS:
        return ""
    entry = page_entry(source if source in SPECS else HUB_PAGE)
    page, text_key = entry.address, entry.text_key
    prefix = SPECS[source].short if source in SPECS else "hub"
    params = {text_key: line, f"{prefix}_kind": kind, f"{prefix}_layer": layer, f"{prefix}_head": head}
    if source in SPECS and SPECS[source].window and SPECS[source].characters:
        params[f"{prefix}_chars"] = len(line.strip())
    if source not in SPECS:
        params = {"hub_id": source, **params}
    return f"{page}?{urlencode(params)}"


def pattern_editor(size: int) -> np.ndarray:
    """A ``size × size`` query × key grid of checkboxes the student paints (the previous token to start)."""
    start = pd.DataFrame(np.eye(size, k=-1, dtype=bool), columns=[f"key {j}" for j in range(size)])
    start.index = [f"query {i}" for i in range(size)]
    edited = st.data_editor(start, key=f"heads_pattern_{size}", width="content")
    return edited.to_numpy(dtype=float)


CORPUS_TITLES = {  # the finder's sample corpora (model/analysis/corpora/README.md), named for people
    "sst2.txt": "SST-2 movie-review sentences",
    "shakespeare.txt": "Tiny Shakespeare",
    "multi30k_de.txt": "Multi30k German captions",
    "english.txt": "English sentences",
}
PTB = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}", "``": "“", "''": "”"}


def corpus_title(path: str) -> str:
    """A corpus as people name it: one of ours by its title, an uploaded or other file by its name only."""
    name = Path(path).name
    return CORPUS_TITLES.get(name, name or "the corpus")


def readable(line: str) -> str:
    """A corpus line for reading: the Penn Treebank escapes of SST-2 (``-lrb-``, ``-rrb-``, ``` `` ```) as the
    brackets and quotes they stand for. Only shown: the model still reads the line as stored."""
    return " ".join(PTB.get(w, w) for w in line.split(" "))


def examples_markdown(table: pd.DataFrame) -> str:
    """:func:`viz.heads.decile_table` as a Markdown table of three columns, each corpus line (escaped) the link
    that opens it in the explorer: a relative address whose query is URL-encoded, so a line cannot break out
    of it. A fourth column holding only "open in the explorer" left a 390-px phone's line column 130 px."""
    opens = " (a tap or click opens it in the explorer)" if any(table["open"]) else ""
    head = f"| decile | score | line{opens} |\n|---|---|---|\n"
    rows = [
        f"| {r.which.removeprefix('decile ')} | {r.score:.3f} | {linked(markdown_escape(readable(r.line)), r.open)} |"
        for r in table.itertuples()
    ]
    return head + "\n".join(rows)


def linked(text: str, address: str) -> str:
    """``text`` as a Markdown link to ``address``, or as it is where there is no address."""
    return f"[{text}]({address})" if address else text


def top_markdown(table: pd.DataFrame) -> str:
    """:func:`viz.heads.top_heads` as a Markdown table, scores to three decimals."""
    cols = list(table.columns)
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else markdown_escape(str(v))
    rows = ["| " + " | ".join(cell(v) for v in r) + " |" for r in table.itertuples(index=False)]
    return "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols), *rows])


# each run's scores on the finder's metrics, held as long as the run: a 1,024-token GPT-2 run takes
# seconds to score, and a page reruns many times on one run (a toggle, a widget elsewhere)
_SCORED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SCORED_LOCK = threading.Lock()


def run_sums(result: RunResult) -> dict[str, dict]:
    """:func:`~model.analysis.heads.line_sums` of each kind of ``result``, and on causal self-attention
    ``induction`` (:func:`model.analysis.induction.induction_here`, when the text repeats a pair of tokens),
    computed once per run."""
    with _SCORED_LOCK:
        hit = _SCORED.get(result)
    if hit is None:
        hit = {name: dict(line_sums(kind.weights, cross=kind.cross)) for name, kind in result.kinds.items()}
        for name, kind in result.kinds.items():
            tokens = _position_tokens(result, name)
            scores, n = induction_here(kind.weights, tokens) if tokens is not None else (None, 0)
            if n:
                hit[name]["induction"] = (scores, np.ones_like(scores))
        with _SCORED_LOCK:
            _SCORED[result] = hit
    return hit


def _position_tokens(result: RunResult, name: str) -> list[str] | None:
    """The token each position of kind ``name`` reads (its key tokens), when the kind is causal
    self-attention (where induction applies)."""
    kind = result.kinds[name]
    Tq = kind.weights.shape[-2]
    if kind.cross or np.triu(np.asarray(kind.mask), 1).any() or len(kind.keys) < Tq:
        return None
    return list(kind.keys[:Tq])


def roles_here(result: RunResult, report: dict) -> list[dict]:
    """For each role (:data:`ROLES`, and ``induction`` on causal self-attention) of each kind that has a head
    for it (corpus score at least :data:`PLAYS`), the finder's top head over the corpus and its score on
    ``result``: ``{"role", "metric", "kind", "layer", "head", "corpus", "here", "target", "active"}``, active
    when ``here`` reaches the role's target (:data:`TARGETS`). Induction's score here is
    :func:`model.analysis.induction.induction_here` (its corpus score is the probe's); a text that repeats no
    pair of tokens gives it none."""
    out = []
    sums = run_sums(result) if any(r["kind"] in result.kinds for r in report["heads"]) else {}
    for top in top_heads(report, per_kind=True):
        name, metric = top["kind"], top["metric"]
        if name not in result.kinds or metric not in sums[name]:
            continue
        s, c = sums[name][metric]
        l, h = top["layer"], top["head"]
        if l >= s.shape[0] or h >= s.shape[1] or c[l, h] == 0:
            continue
        value = float(s[l, h] / c[l, h])
        target = TARGETS[metric]
        role = LINK_ROLES[metric]
        out.append(
            dict(
                role=role,
                metric=metric,
                kind=name,
                layer=l,
                head=h,
                corpus=top["corpus"],
                here=value,
                target=target,
                active=value >= target,
            )
        )
    return out


def role_inputs(source: str, report: dict) -> list[dict]:
    """The role links stored beside the scores (``links`` in heads.json, chosen by
    :func:`model.analysis.role_links.choose_links`: an input the model reads whole and gets right, on which
    the role's top head reaches its target in what the page shows), each still naming the finder's top head:
    ``{"role", "metric", "kind", "layer", "head", "score", "input", "link"}``."""
    tops = {t["metric"]: t for t in top_heads(report)}
    out = []
    for stored in report.get("links") or []:
        top = tops.get(stored.get("metric"))
        if top is None or (top["kind"], top["layer"], top["head"]) != (stored["kind"], stored["layer"], stored["head"]):
            continue  # the scores were recomputed and another head tops the role now: no link until it is chosen
        if stored["score"] < TARGETS[stored["metric"]]:
            continue
        link = explorer_link(source, stored["input"], top["kind"], top["layer"], top["head"])
        out.append(
            dict(
                role=LINK_ROLES[stored["metric"]],
                metric=stored["metric"],
                kind=top["kind"],
                layer=top["layer"],
                head=top["head"],
                score=stored["score"],
                input=stored["input"],
                link=link,
            )
        )
    return out


def score_words(metric: str, value: float) -> str:
    """A score with what it measures and its scale: "0.62 of the weight on the token before (0–1)"."""
    what, scale = SCALES[metric]
    return f"{value:.2f} {what} ({scale})"


def head_roles(result: RunResult, source: str) -> None:
    """On a model page, under the explorer: links that open each role at work, and one caption of which of
    the head finder's heads do their role on ``result``, the run the explorer shows (● / ○)."""
    report = stored_report(source) if source in SPECS else st.session_state.get(HUB_REPORTS, {}).get(source)
    if not report:
        if source not in SPECS:
            st.caption("Score this model's heads on the Head finder page to see which roles they play here.")
        return
    roles = roles_here(result, report)
    name = lambda r: head_name(r["layer"], r["head"], kind_label(source, r["kind"]) if len(result.kinds) > 1 else None)
    if source in SPECS:
        shown = role_inputs(source, report)
        if shown:
            st.markdown(
                "**See each role at work** (opens this page on an input where the head does it): "
                + " · ".join(f"[{r['role']}: {name(r)}]({r['link']})" for r in shown)
            )
    if roles:
        parts = [
            f"{'●' if r['active'] else '○'} {r['role']}: {name(r)} — {score_words(r['metric'], r['here'])} here, "
            f"target {r['target']:.2f}; {r['corpus']:.2f} over the corpus"
            for r in roles
        ]
        st.caption(
            "**Head finder roles on this input** (● the head does its role here: its score on this input reaches "
            "the role's target; ○ it does not): " + " · ".join(parts)
        )
        for line in two_roles(roles):  # a head named twice: how it does both
            st.caption(line)
    elif report.get("heads"):
        st.caption(
            f"**Head finder roles:** no head of this model plays one of them (each role's best head puts less "
            f"than {PLAYS:.0%} of its weight on the role's key over the corpus), so none is named here."
        )


def load_scores(source: str):
    """The report (rows, lines, notes) and a function giving each square kind's pattern blocks; None after a message."""
    if source in SPECS:
        report = stored_report(source)
        if report is None:
            st.error(f"No stored head scores for the {source}. Compute them with:")
            st.code(f"python -m model heads {source} --examples --json > checkpoints/{source}/heads.json")
            return None
        ck = require_checkpoint(source)
        return report, lambda: pattern_blocks(ck, report["lines"])
    if not source:
        st.info("Type a model id (e.g. gpt2) or a folder.")
        return None
    upload = st.file_uploader(
        "Corpus (optional): a UTF-8 text file, one sequence a line", type=["txt"], key="heads_corpus"
    )
    lines = read_upload(upload) if upload is not None else None
    got = None if upload is not None and lines is None else hub_scores(source, lines)
    return got and (got[0], lambda: {n: t.blocks for n, t in got[1].kinds.items() if t.blocks})


def draw_pattern(blocks) -> None:
    """Draw a pattern; every head ranked by TransformerLens's detect_head score against it over the corpus."""
    section = on_request("Draw a pattern: which heads attend like this?", "heads_draw")
    if not section.open:
        return
    with section:
        st.caption(
            "Tick the keys each query should attend to. Each head's first rows and columns on every line long enough are scored as TransformerLens's `detect_head` does: **mul** = the share of the head's weight on the ticked cells; **abs** = 1 − Σ|attention − pattern| / size."
        )
        a, b, c = st.columns(3)
        size = int(url_widget(a.slider, "Size", "heads_size", 5, bounded(2, 8), min_value=2, max_value=8))
        measure = url_widget(
            b.radio, "Score", "heads_measure", "mul", one_of(("mul", "abs")), options=("mul", "abs"), horizontal=True
        )
        bos = url_widget(c.toggle, "Exclude the first key", "heads_bos", False)
        pattern = pattern_editor(size)
        kinds = blocks()
        kind = select_choice("heads_draw_kind", list(kinds), next(iter(kinds)), label="Attention")
        try:
            ranked = pattern_scores(kinds[kind], pattern, measure=measure, exclude_bos=bos)
        except ValueError as err:
            st.warning(markdown_escape(str(err)))
            return
        st.table(pattern_table(ranked, kind, 10).style.format({"score": "{:.3f}"}).hide(axis="index"))
