"""The lesson's checks graded on what the learner's own input makes a model do (:mod:`model.lessons.path`).

A key check reads one head on the learner's text (:func:`read_head`: the hand-worked head, or a run of one
of our models) and grades a guess against that head's own row (:func:`grade_key`); an ablation check
switches the head off on the learner's sentence and grades a guess against what the prediction did
(:func:`ablation_check`); a width check runs the batched reshape on the learner's ``k`` and ``h``
(:func:`grade_width`). No answer key: the model's run is the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.analysis.ablation import ablate
from model.analysis.runs import run
from model.core.checkpoint import Checkpoint
from model.lessons.hand import walkthrough
from model.lessons.path import Check
from model.lessons.reshape import input_tensor, reshape_steps

MAX_PHRASE = 60  # characters of a phrase the generator reads twice (two copies and a line break fit its 128)
MAX_TOKENS = 40  # words of the hand-worked head, as the hand page reads them


@dataclass(frozen=True, eq=False)
class HeadRead:
    """One head of one model on the learner's text: the text it read, its query and key tokens, its map
    ``(queries, keys)``, the first query the check asks about, whether it cannot see later keys, and what
    the model said (its prediction, or "")."""

    text: str
    queries: list[str]
    keys: list[str]
    weights: np.ndarray
    query: int
    causal: bool
    said: str = ""


@dataclass(frozen=True)
class Graded:
    """A graded answer: right or not, the right option's index and what to say."""

    right: bool
    answer: int
    said: str


def model_text(check: Check, text: str) -> str:
    """What the model reads for the learner's ``text``: written twice (a line break between) for a ``twice``
    check, the phrase cut to fit."""
    text = " ".join(text.split()) if check.twice else text.strip()
    return text[:MAX_PHRASE] + "\n" + text[:MAX_PHRASE] if check.twice else text


def read_head(check: Check, text: str, ck: Checkpoint | None = None) -> HeadRead:
    """The check's head on the learner's ``text`` (``ck``: the loaded model of ``check.model``, None for the
    hand-worked head). ValueError for an empty text, or one the model cannot read."""
    shown = model_text(check, text)
    if not shown.strip():
        raise ValueError("Type some text first.")
    if check.model == "hand":
        w = walkthrough(shown, max_tokens=MAX_TOKENS)
        tokens = list(w.tokens)
        weights, queries, causal, said = w.weights.double().numpy(), tokens, False, ""
    else:
        if ck is None:
            raise ValueError(f"this check needs the {check.model} model")
        result = run(ck, shown)
        kind = result.kinds[check.attention]
        if check.layer >= kind.weights.shape[0] or check.head >= kind.weights.shape[1]:
            raise ValueError(f"this model has no layer {check.layer}, head {check.head}")
        tokens, queries = list(kind.keys), list(kind.queries)
        weights = np.asarray(kind.weights[check.layer, check.head], dtype=float)
        causal = bool(np.triu(np.asarray(kind.mask), 1).any()) if kind.mask is not None else False
        said = str(result.prediction or "")
    start = check.query + (len(shown) - len(shown.split("\n")[-1]) if check.twice else 0)
    return HeadRead(shown, queries, tokens, weights, min(max(start, 0), len(queries) - 1), causal, said)


def key_options(read: HeadRead, query: int) -> list[int]:
    """The keys a guess may name for ``query``: every key, or up to the query where later ones are hidden."""
    return list(range(min(query + 1, len(read.keys)) if read.causal else len(read.keys)))


def grade_key(read: HeadRead, query: int, guess: int, keys: Sequence[str] = (), queries: Sequence[str] = ()) -> Graded:
    """Whether ``guess`` is the key the head reads most from ``query`` on the learner's text; ``keys`` and
    ``queries`` are the tokens as the page shows them (the model's otherwise)."""
    if not 0 <= query < len(read.queries) or not 0 <= guess < len(read.keys):
        raise ValueError("the query and the guess must be positions of the text")
    keys, queries = list(keys or read.keys), list(queries or read.queries)
    row = read.weights[query]
    best = int(np.argmax(row))
    said = f"From “{queries[query]}” the head gives “{keys[best]}” {row[best]:.2f} of its weight"
    said += "." if guess == best else f"; your pick “{keys[guess]}” gets {row[guess]:.2f}."
    return Graded(guess == best, best, said)


@dataclass(frozen=True)
class AblationOutcome:
    """What switching the check's head off does to the learner's sentence: the options (worded with the
    model's own label), the right one and the numbers that make it right."""

    options: tuple[str, str, str]
    answer: int
    said: str


def ablation_check(check: Check, ck: Checkpoint, text: str) -> AblationOutcome:
    """Run ``ck`` on ``text`` with and without the check's head (:func:`model.analysis.ablation.ablate`)."""
    if not text.strip():
        raise ValueError("Type a sentence first.")
    res = ablate(ck, text.strip(), [(check.attention, check.layer, check.head)])
    before, after = res.before, res.after
    label = before.prediction
    other = next((x for x in before.probs if x != label), "another label")
    p_before, p_after = before.probs[label], after.probs[label]
    options = (f"stays {label}, more confident", f"stays {label}, less confident", f"flips to {other}")
    answer = 2 if after.prediction != label else (0 if p_after >= p_before else 1)
    said = (
        f"Before: {label} ({p_before:.1%}). With the head off: {after.prediction} ({after.confidence:.1%}); "
        f"{label} went from {p_before:.1%} to {p_after:.1%}."
    )
    return AblationOutcome(options, answer, said)


def grade_width(k: int, h: int, guess: int) -> Graded:
    """Whether ``guess`` is each narrow head's width for width ``k`` and ``h`` heads, read from the batched
    reshape itself. ValueError when ``k`` does not split into ``h`` heads."""
    result = reshape_steps(input_tensor(1, 2, k), h)
    s = result.head_dim
    said = f"With k = {k} and h = {h}, each head works on {s} numbers per word (the reshape's own slices)."
    return Graded(guess == s, s, said)


def grade_choice(check: Check, guess: int) -> Graded:
    return Graded(guess == check.answer, int(check.answer or 0), check.why)
