"""Behaviour of the shipped checkpoints (no training): each must be present and sensible.

The sentences here were written for these tests; none is copied from the training data.
"""

from __future__ import annotations

import pytest

from model.core.checkpoint import default_dir, load_checkpoint, weights_digest
from model.core.inference import classify, generate, translate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def classifier():
    return load_checkpoint(default_dir("classifier"), task="classifier")


@pytest.fixture(scope="module")
def generator():
    return load_checkpoint(default_dir("generator"), task="generator")


@pytest.fixture(scope="module")
def translator():
    return load_checkpoint(default_dir("translator"), task="translator")


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_shipped_checkpoint_is_small_and_within_page_limits(task):
    d = default_dir(task)
    assert (d / "model.safetensors").stat().st_size < 50 * 2**20
    ck = load_checkpoint(d, task=task)
    c = ck.model.config
    layers = max(getattr(c, "layers", 0), getattr(c, "enc_layers", 0), getattr(c, "dec_layers", 0))
    assert layers <= 6 and c.heads <= 8
    assert ck.results, "the checkpoint records its measured results"


@pytest.mark.parametrize(
    "text",
    [
        "a wonderful , moving film with a brilliant cast",
        "one of the best films of the year",
        "funny , warm and beautifully acted",
    ],
)
def test_classifier_positive(classifier, text):
    assert classify(classifier, text).label == "positive"


@pytest.mark.parametrize(
    "text",
    [
        "a boring , stupid mess with terrible acting",
        "the worst movie i have seen in years",
        "dull , lifeless and far too long",
    ],
)
def test_classifier_negative(classifier, text):
    assert classify(classifier, text).label == "negative"


def test_generator_continues_romeo_like_shakespeare(generator):
    out = generate(generator, "ROMEO:\n", length=300, temperature=0.8, top_k=20, seed=7)
    text = out.new_text
    words = [w.strip(".,;:!?'") for w in text.split()]
    common = {"the", "and", "i", "to", "of", "my", "a", "you", "that", "in", "is", "not", "me", "thou", "with", "be"}
    assert len(text) == 300
    assert sum(w.lower() in common for w in words) >= 8, text
    assert "\n" in text  # verse comes in lines
    assert generate(generator, "ROMEO:\n", length=80, temperature=0.8, seed=7).new_text == text[:80]


@pytest.mark.parametrize(
    "german, keywords",
    [
        ("ein mann fährt fahrrad .", {"man", "bike", "bicycle"}),
        ("zwei hunde spielen im schnee .", {"two", "dogs", "snow"}),
        ("eine frau liest ein buch .", {"woman", "book"}),
        ("ein kleines mädchen isst einen apfel .", {"girl", "apple"}),
        ("drei männer stehen vor einem gebäude .", {"three", "men", "building"}),
    ],
)
def test_translator_renders_simple_sentences(translator, german, keywords):
    words = set(translate(translator, german).text.lower().replace(".", " ").split())
    found = keywords & words
    assert len(found) >= min(2, len(keywords) - 1), (german, words)


def test_greedy_outputs_are_deterministic(translator, classifier):
    a = translate(translator, "ein hund läuft über eine wiese .").text
    assert a == translate(translator, "ein hund läuft über eine wiese .").text
    assert classify(classifier, "a fine film").probs == classify(classifier, "a fine film").probs


@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_heads_json_scores_the_weights_that_ship(task):
    """Every page names heads from heads.json, so it must describe the weights beside it: a checkpoint that
    ships without `python -m model heads <task> --examples --json > checkpoints/<task>/heads.json` fails."""
    import json

    report = json.loads((default_dir(task) / "heads.json").read_text(encoding="utf-8"))
    assert report.get("weights_sha256") == weights_digest(default_dir(task)), "heads.json is stale: recompute it"
