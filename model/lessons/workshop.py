"""Workshop questions: predict, then reveal.

Every question is built from its number alone (a seeded ``random.Random``), so an instructor can
put a link such as ``?q=3`` on a slide and everyone sees the same question. Numbers cycle
through three kinds (:data:`KINDS`): which key a query of the hand-worked example attends to
most, what shape a step of the multi-head reshape gives, and which key a query attends to in one
head of the trained classifier. Question 0 is the notebook's own example: "is" in "Life is short,
eat dessert first." (seed 123), whose strongest key is "dessert".

Scoring: a key guess earns ``weight[guess] / max(weight)`` (1 for the strongest key, partial
credit in proportion to the weight otherwise); a shape guess earns 1 when exact, else half a
point times the share of axes right when it has the right number of axes, else 0.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import Tensor

from model.lessons.hand import walkthrough
from model.lessons.reshape import input_tensor, reshape_steps

KINDS = ("attend", "shape", "head")  # question number % 3
MAX_QUESTION = 9999
HAND_SENTENCES = (
    "Life is short, eat dessert first.",
    "The cat sat on the warm mat",
    "Time flies like an arrow",
    "We read the book before the film",
    "Attention is all you need",
)
HEAD_SENTENCES = (  # everyday film-review sentences, in the trained classifier's vocabulary
    "the acting is wonderful but the plot is thin",
    "a moving and beautifully made film",
    "the story is boring and far too long",
    "i loved every minute of it",
)
MAX_AXES, MAX_SIZE = 8, 1_000_000


def kind_of(number: int) -> str:
    return KINDS[number % len(KINDS)]


@dataclass(frozen=True, eq=False)
class AttendQuestion:
    """ "Which key will this query attend to most?" on one head's ``(T, T)`` weights."""

    number: int
    sentence: str
    tokens: list[str]
    query: int  # row of the query token
    weights: np.ndarray  # (T, T) the head's attention; row ``query`` is the answer
    source: str  # "hand" (the hand-worked example) or "classifier"
    detail: str  # how the weights were made: the seed, or the layer and head
    query_vector: np.ndarray | None = None  # (d_k,) hand example: what a participant may look at first
    key_vectors: np.ndarray | None = None  # (T, d_k)

    @property
    def row(self) -> np.ndarray:
        return self.weights[self.query]

    @property
    def answer(self) -> int:
        return int(np.argmax(self.row))


@dataclass(frozen=True, eq=False)
class ShapeQuestion:
    """ "What shape does this reshape step give?" for a seeded ``(b, t, k)`` input and ``h`` heads."""

    number: int
    b: int
    t: int
    k: int
    heads: int
    wide: bool
    step: str  # the step's name
    note: str  # what the step does
    before: str  # the previous step's name
    before_shape: tuple[int, ...]
    dims: tuple[str, ...]  # the answer's axis names, e.g. ("b", "h", "t", "s")
    shape: tuple[int, ...]  # the answer
    before_tensor: Tensor  # the previous step's output (queries where q, k, v travel together)
    before_head_of: Tensor  # which head each of its elements belongs to (-1: none)
    before_dims: tuple[str, ...]
    together: bool  # queries, keys and values go through this step side by side (the answer is the queries')

    @property
    def head_dim(self) -> int:
        return self.k if self.wide else self.k // self.heads


def hand_question(number: int) -> AttendQuestion:
    """An attention question on the hand-worked example (d = 16, d_q = d_k = 24, d_v = 28, as in Raschka's worked example)."""
    rng = random.Random(number)
    if number == 0:
        sentence, seed = HAND_SENTENCES[0], 123
    else:
        sentence, seed = HAND_SENTENCES[(number // len(KINDS)) % len(HAND_SENTENCES)], rng.randrange(1000)
    w = walkthrough(sentence, seed=seed)
    query = 1 if number == 0 else rng.randrange(len(w.tokens))
    return AttendQuestion(
        number,
        sentence,
        w.tokens,
        query,
        w.weights.double().numpy(),
        "hand",
        f"random weights, seed {seed}",
        w.queries[query].double().numpy(),
        w.keys.double().numpy(),
    )


def head_sentence(number: int) -> str:
    return HEAD_SENTENCES[(number // len(KINDS)) % len(HEAD_SENTENCES)]


def head_question(number: int, attention, tokens: Sequence[str]) -> AttendQuestion:
    """An attention question on one head of the classifier; ``attention`` is ``(layers, heads, T, T)``
    for :func:`head_sentence` of ``number`` and ``tokens`` its words."""
    a = np.asarray(attention, dtype=float)
    if a.ndim != 4 or a.shape[-1] != a.shape[-2] or a.shape[-1] != len(tokens) or not len(tokens):
        raise ValueError(f"attention must be (layers, heads, T, T) for {len(tokens)} tokens; got {a.shape}")
    rng = random.Random(number)
    layer, head, query = rng.randrange(a.shape[0]), rng.randrange(a.shape[1]), rng.randrange(len(tokens))
    return AttendQuestion(
        number, head_sentence(number), list(tokens), query, a[layer, head], "classifier", f"layer {layer} · head {head}"
    )


def shape_question(number: int) -> ShapeQuestion:
    """A shape question on one step of the batched multi-head reshape (``model.lessons.reshape.reshape_steps``)."""
    rng = random.Random(number)
    b, t, heads = rng.choice((1, 2, 3)), rng.randrange(3, 7), rng.choice((2, 3, 4))
    wide = rng.random() < 0.25
    k = rng.randrange(3, 9) if wide else heads * rng.choice((2, 3, 4))
    result = reshape_steps(input_tensor(b, t, k, seed=number), heads, wide=wide, seed=number)
    i = rng.randrange(1, len(result.steps))
    step, before = result.steps[i], result.steps[i - 1]
    return ShapeQuestion(
        number,
        b,
        t,
        k,
        heads,
        wide,
        step.name,
        step.note,
        before.name,
        before.shape,
        step.dims,
        step.shape,
        before.tensor,
        before.head_of,
        before.dims,
        bool(step.others),
    )


def parse_shape(text: str) -> tuple[int, ...]:
    """``"(2, 4, 8)"``, ``"2 4 8"``, ``"2x4x8"`` or ``"torch.Size([2, 4, 8])"`` -> ``(2, 4, 8)``.

    Raises ``ValueError`` with what to type instead; the message never repeats the text.
    """
    cleaned = (text or "").strip().lower().removeprefix("torch.size")
    cleaned = cleaned.strip("()[] \t")
    if not cleaned:
        raise ValueError("type a shape: whole numbers separated by commas, e.g. (2, 4, 8)")
    parts = [p for p in re.split(r"[\s,x×*]+", cleaned) if p]
    if not parts or not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError("a shape is whole numbers separated by commas, e.g. (2, 4, 8)")
    if len(parts) > MAX_AXES:
        raise ValueError(f"that has {len(parts)} axes; the tensors here have at most {MAX_AXES}")
    shape = tuple(int(p) for p in parts)
    if any(n > MAX_SIZE for n in shape):
        raise ValueError("those numbers are far larger than any size here")
    return shape


def score_attention_guess(row: Sequence[float], guess: int) -> float:
    """1 for the strongest key, else the guessed key's weight relative to the strongest."""
    w = np.asarray(row, dtype=float)
    if not 0 <= guess < len(w):
        raise ValueError(f"guess {guess} is not a key position (0..{len(w) - 1})")
    return 1.0 if guess == int(np.argmax(w)) else float(w[guess] / w.max())


def score_shape_guess(guess: Sequence[int], truth: Sequence[int]) -> float:
    """1 when exact; with the right number of axes, 0.5 × the share of axes right; else 0."""
    guess, truth = tuple(guess), tuple(truth)
    if guess == truth:
        return 1.0
    if len(guess) != len(truth):
        return 0.0
    return 0.5 * sum(g == t for g, t in zip(guess, truth)) / len(truth)
