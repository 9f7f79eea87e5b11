"""What a learner reads carries no development detail, and the words match (issue 51, items 4 and 7).

Every page of the registry opens as a learner opens it (through the router, the shipped models, default
state) and everything it writes is read: Markdown, captions, text, messages, headings, expander and widget
labels, tables, metrics and chart titles. None may name a run's history, hardware, a model soup, a file or
module path, a code identifier or the code's word "unify"; a head is named one way (L3 H2). Every role and
measure the pages name has a glossary entry, and each shipped model's card is written for a student, its
results read from its own config.json.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict

import pytest

from model.core.checkpoint import CHECKPOINTS_ENV, load_checkpoint
from model.training.card import CARD_PARTS, card_parts, model_card
from pages import PAGES
from pages.shared.glossary import ROLE_WORDS, TERMS, two_roles
from pages.shared.heads import ROLES
from tests import apptest
from viz.attribute import LABELS
from viz.common import head_name

SHIPPED = apptest.ROOT / "checkpoints"
APP = str(apptest.ROOT / "app.py")
TASKS = ("classifier", "generator", "translator")
# what a learner must never read, each with what it catches
DENIED = {
    "a module path": re.compile(r"\b(?:model|pages|viz|rooms|fixtures|bench|tests)\.[a-z_]+"),
    "a code identifier": re.compile(r"\b[a-z]{2,}(?:_[a-z0-9]{2,})+\b"),  # norm_layer, value_zeroing (not W_q, q_i)
    "hardware": re.compile(r"\bH200\b|\bNVIDIA\b|\bGPU\b|\bCPU\b|\b\d+-core\b"),
    "a model soup": re.compile(r"\bsoups?\b", re.IGNORECASE),
    "run history": re.compile(r"\bsession \d+|\bruns/|\bepoch \d+ of \d+ kept\b", re.IGNORECASE),
    "a file path": re.compile(r"checkpoints/|\.safetensors\b|\b[\w-]+\.(?:py|json|md)\b"),
    "the code's 'unify'": re.compile(r"\bunif(?:y|ies|ied|ying)\b", re.IGNORECASE),
}
# ways of naming a head other than head_name's "L3 H2"
OTHER_HEAD_NAMES = re.compile(r"\blayer \d+ · head \d+|\bhead \d+ \(\d+(?:st|nd|rd|th) of \d+\)")
# the words for roles and measures, as a page may write them, and the glossary entry each needs
NAMED = {
    r"\bprevious-token\b": "previous-token head",
    r"\binduction\b": "induction head",
    r"\bfirst-token\b|\bsink\b": "first-token (sink) head",
    r"\brollout\b": "rollout",
    r"\bcontributions?\b": "contribution",
    r"\bvalue zeroing\b": "value zeroing",
    r"gradient × attention": "gradient × attention",
    r"\bweighted-value norm\b": "weighted-value norm",
    r"\bcross-attention\b": "cross-attention",
    r"\bcausal\b": "causal mask",
    r"\bmonotonic alignment\b": "monotonic alignment",
    r"\bL\d+ H\d+\b": "L3 H2",
}


@pytest.fixture
def shipped(monkeypatch, tmp_path):
    """The app as a learner gets it: the shipped checkpoints, empty caches, a room store of its own."""
    monkeypatch.setenv(CHECKPOINTS_ENV, str(SHIPPED))
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setenv("ATTENTION_ROOMS_DIR", str(tmp_path))
    apptest.clear_caches()
    yield
    apptest.clear_caches()


def in_order(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from in_order(child)


WRITTEN = {"markdown", "caption", "text", "info", "warning", "error", "success", "title", "header", "subheader"}


def page_strings(at) -> list[str]:
    """Everything the page (not the sidebar: its device picker names the machine on purpose) writes, with
    links' addresses left out (a link is followed, not read)."""
    out = []
    for e in in_order(at.main):
        kind = getattr(e, "type", None)
        if kind in WRITTEN:
            out.append(str(e.value))
        elif kind == "expander" or (kind and hasattr(e, "label") and kind != "bidi_component"):
            out.append(str(e.label))
        if kind in ("dataframe", "table"):
            frame = e.value
            out += [str(c) for c in frame.columns] + [str(v) for v in frame.astype(str).to_numpy().ravel()]
        if kind == "metric":
            out.append(str(e.value))
    for spec in apptest.charts(at):
        layout = spec["layout"]
        out.append(layout.get("title", {}).get("text", ""))
        out += [v.get("title", {}).get("text", "") for k, v in layout.items() if k.startswith(("xaxis", "yaxis"))]
    out += [m["title"] for m in apptest.matrices(at)]  # the matrix views' and the explorers' own titles
    for payload in apptest.explorers(at):
        out += [payload.get("title", "")] + [k["title"] for k in payload["kinds"]]
    return [re.sub(r"\]\([^)]*\)", "]", s) for s in out if s]


def open_page(address: str):
    at = apptest.run(APP)
    if address != "start":
        at.switch_page(next(p.script for p in PAGES if p.address == address)).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("address", [p.address for p in PAGES])
def test_no_page_shows_development_detail_and_a_head_has_one_name(shipped, address):
    """Before: "(… on one NVIDIA H200 …, a model soup …)" above each model's input, `norm_layer`,
    `value_zeroing` and `grad_attention` in the contributions table, "unify" in the reshape lesson; and
    "layer 3 · head 2" in one place, "L3 H2" in the next and "head 2 (3rd of 6)" in the explorer."""
    shown = page_strings(open_page(address))
    found = [(what, m.group(), s[:120]) for s in shown for what, p in DENIED.items() for m in p.finditer(s)]
    assert not found, found
    assert not [s[:120] for s in shown if OTHER_HEAD_NAMES.search(s)]
    for pattern, term in NAMED.items():  # every role and measure the page names has its glossary entry
        if any(re.search(pattern, s) for s in shown):
            assert term in TERMS, (address, pattern)


def test_head_name_is_layer_then_head_from_zero():
    assert head_name(3, 2) == "L3 H2" and head_name(1, 0, "cross") == "cross L1 H0"


def test_every_role_and_measure_has_a_glossary_entry():
    """Each role the head finder names (pages.shared.heads) and each measure of the contributions panel
    (viz.attribute) has an entry, and the model pages' glossary lists them."""
    for role in [*ROLES.values(), "induction"]:
        assert any(term == role or term.startswith(role + " ") for term in TERMS), role
    for name, label in LABELS.items():
        if name != "attention":
            assert any(label.startswith(term) for term in TERMS), label
    for term in ("previous-token head", "induction head", "first-token (sink) head", "a head with two roles"):
        assert term in ROLE_WORDS
    for term in ("rollout", "contribution", "value zeroing", "gradient × attention", "weighted-value norm"):
        assert term in ROLE_WORDS
    assert {"cross-attention", "causal mask"} <= set(ROLE_WORDS)


def test_a_head_with_two_roles_says_how():
    roles = [
        {"role": "previous-token", "kind": "encoder", "layer": 0, "head": 3},
        {"role": "first-token (sink)", "kind": "encoder", "layer": 3, "head": 2},
        {"role": "induction", "kind": "encoder", "layer": 3, "head": 2},
    ]
    [line] = two_roles(roles)
    assert line.startswith("L3 H2 is both first-token (sink) and induction: it looks at the first character when")
    assert "the character after the earlier copy" in line and two_roles(roles[:2]) == []


def test_the_generator_page_says_how_its_head_does_both_roles(shipped):
    """Issue 51, item 7: L3 H2 was named "sink" and "induction" with no word on how."""
    at = open_page("generator")
    roles = next(c.value for c in at.caption if c.value.startswith("**Head finder roles on this input**"))
    named = re.findall(r"[●○] ([^:]+): (L\d+ H\d+) ", roles)
    twice = {h for _, h in named if sum(1 for _, g in named if g == h) > 1}
    for head in twice:
        assert any(c.value.startswith(f"{head} is both ") for c in at.caption), head


@pytest.mark.parametrize("task", TASKS)
def test_a_shipped_card_is_written_for_a_student(task):
    """The words stored in config.json: every part of the card's shape, nothing a student cannot use."""
    training = json.loads((SHIPPED / task / "config.json").read_text(encoding="utf-8"))["training"]
    parts = card_parts(training["card"])
    assert list(parts) == list(CARD_PARTS)
    for what, pattern in DENIED.items():
        assert not pattern.search(training["card"]), what
    assert not re.search(r"\bparameters?\b|\bet al\.|\bpretrain|\bfine-tun", training["card"], re.IGNORECASE)


@pytest.mark.parametrize("task", TASKS)
def test_a_cards_size_and_results_are_the_checkpoints_own(task):
    """Results on the card are read from config.json's results, never typed into the card's words."""
    ck = load_checkpoint(SHIPPED / task, task=task)
    config = asdict(ck.model.config)
    card = dict(model_card(ck.training, ck.results, config).sections)
    results = card["How well it does"]
    if "dev_accuracy" in ck.results:
        assert f"{ck.results['dev_accuracy']:.1%}" in results
    if "val_loss" in ck.results:
        assert f"{ck.results['val_loss']:.2f} per character" in results
    if "val_bleu" in ck.results:
        assert f"{ck.results['val_bleu']:.1f} out of 100" in results
    assert f"{config['heads']} attention heads" in card["How big it is"]
    assert not re.search(r"\d+(?:\.\d+)?%", ck.training["card"])  # no result typed into the card's words


def test_a_card_without_labels_is_all_what_it_learned_from():
    card = model_card({"card": "Made by hand."}, {"dev_accuracy": 0.5}, {"layers": 1, "heads": 2, "dim": 8})
    assert card.sections[0] == ("What it learned from", "Made by hand.")
    assert dict(card.sections)["How well it does"].endswith("it labels 50.0% correctly.")
    assert model_card({}, {}, {}).sections == ()


@pytest.mark.parametrize("task, prefix", [("classifier", "cls"), ("translator", "tr")])
def test_the_opened_panels_show_no_code_words(shipped, task, prefix):
    """Opened as a learner opens them: a weight clicked (the explanation's steps said "the output projection
    unify maps …") and "Did attention matter?" open (its table listed norm_layer, value_zeroing, grad_attention)."""
    from model.analysis.runs import run as run_model
    from pages.shared.explain import result_id

    at = open_page(task)
    text = at.text_input(key=f"{prefix}_text").value
    result = run_model(load_checkpoint(SHIPPED / task, task=task), text)
    kind = next(iter(result.kinds))
    cell = {"kind": kind, "layer": 1, "head": 1, "query": 2, "key": 1, "weight": 0.1}
    at.session_state[f"{prefix}_cell"] = {"run": result_id(result), "cell": cell}
    at.session_state[f"{prefix}_contrib"] = True
    at.run()
    assert not at.exception
    shown = page_strings(at)
    assert any(s.startswith("How L1 H1 ") for s in shown) and any("value zeroing" in s for s in shown)
    found = [(what, m.group(), s[:120]) for s in shown for what, p in DENIED.items() for m in p.finditer(s)]
    assert not found, found
    assert not [s[:120] for s in shown if OTHER_HEAD_NAMES.search(s)]
