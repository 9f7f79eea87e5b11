"""Classroom questions built from the models: one :class:`rooms.question.Question` per round,
self-contained (options, points, the answer, the explanation and the numbers of the figures), so every
device and every app process shows the same round without running a model.

Kinds (:data:`KINDS`): the workshop's three (``model.lessons.workshop``: which key wins in the
hand-worked example, what shape a reshape step gives, which key wins in a classifier head) and two
more: which of four generator heads is the previous-token head (the ``previous`` metric of
``model.analysis.profiles`` on a real run), and what happens to the classifier's prediction when
one head is switched off (``model.analysis.ablation``). Like the workshop's, every question is
built from its number alone (seeded), so the same number is the same question everywhere.

The teacher's list (:data:`KINDS`) follows the lesson (:mod:`model.lessons.path`): each question sits at
its step and names it. The hand-worked "which key wins" gives the query's scores with every key, so a
student on a phone has numbers to reason from (the softmax keeps their order), not a guess about random
weights.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from model.analysis.ablation import ablate
from model.analysis.profiles import previous_token
from model.analysis.runs import run
from model.core.checkpoint import Checkpoint
from model.lessons.named_heads import Head, head_name, role_head
from model.lessons.path import TITLES, step_of
from model.lessons.reshape import input_tensor, reshape_steps
from model.lessons.workshop import (
    HEAD_SENTENCES,
    AttendQuestion,
    ShapeQuestion,
    hand_question,
    head_question,
    head_sentence,
    score_attention_guess,
    score_shape_guess,
    shape_question,
)
from rooms.question import Question

QUESTIONS = {  # kind -> (what the teacher picks from, the model it needs or "")
    "attend": ("Which key wins? (hand-worked example, its scores shown)", ""),
    "shape": ("What shape comes out of this reshape step?", ""),
    "head": ("Which key wins? (a sentiment-classifier head)", "classifier"),
    "previous": ("Which head is the previous-token head? (Shakespeare generator)", "generator"),
    "ablation": ("What happens when this head is switched off? (sentiment classifier)", "classifier"),
}
# the teacher's list follows the lesson (model.lessons.path): each question in its step's order, named by it
KINDS = {
    kind: (f"Step {step_of(kind)} · {QUESTIONS[kind][0]}", QUESTIONS[kind][1])
    for kind in sorted(QUESTIONS, key=lambda k: step_of(k) or len(TITLES) + 1)
}
CREDIT = (  # how a round's points are counted (the ``points`` of from_attend and from_shape), for people
    "A right answer earns 1 point; a close wrong one earns part of a point: a key, its weight divided by the "
    "strongest key's weight; a shape with the right number of axes, half a point times the share of axes right."
)
PREVIOUS_TEXTS = ("To be, or not to be", "O Romeo, Romeo!", "All the world's a stage", "But soft, what light")
CANDIDATE_HEADS = 4
DIGITS = 4  # weights are kept to 4 decimals: enough for a heatmap, small to send


def labels(tokens: Sequence[str]) -> list[str]:
    """``"i:token"``: repeated tokens stay different options."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def ended(text: str) -> str:
    """``text`` as the end of a sentence of ours: its own closing punctuation ends ours (“…dessert first.”,
    not “…dessert first.”.), and a full stop is added only where it has none."""
    return text if text.rstrip("”’\"' ").endswith((".", "!", "?", "…")) else text + "."


def _round(a) -> list:
    return np.round(np.asarray(a, dtype=float), DIGITS).tolist()


def from_attend(q: AttendQuestion, kind: str = "attend") -> Question:
    """A workshop attention question as a round: click the key you think wins."""
    options, row = labels(q.tokens), q.row
    order = np.argsort(-row, kind="stable")
    where = (
        "the hand-worked example (random weights)" if q.source == "hand" else f"the sentiment classifier, {q.detail}"
    )
    query, best, second = options[q.query], options[q.answer], options[int(order[1])]
    return Question(
        kind,
        q.number,
        f"Which key does {query} attend to most?",
        f"In {where}, the sentence is {ended(f'“{q.sentence}”')} The query is {ended(query)} "
        + scores_text(q, options)
        + "Which key gets the largest weight?",
        tuple(options),
        tuple(round(score_attention_guess(row, i), 4) for i in range(len(row))),
        q.answer,
        f"{best} gets weight {row[q.answer]:.3f}: its key has the largest scaled dot product with the query of "
        f"{query}, and the softmax keeps that order. Next is {second} ({row[int(order[1])]:.3f}). "
        "Points: the weight of your key relative to the strongest.",
        reveal={
            "title": f"{q.detail if q.source == 'hand' else q.detail.split(',')[0]}: every query",
            "tokens": list(q.tokens),
            "weights": _round(q.weights),
            "highlight_row": q.query,
        },
    )


def scaled_scores(q: AttendQuestion) -> np.ndarray | None:
    """The query's scaled scores ``q · k / √d_k`` over every key (what the softmax turns into its row of
    weights), where the question keeps its query and key vectors; None otherwise."""
    if q.query_vector is None or q.key_vectors is None:
        return None
    keys = np.asarray(q.key_vectors, dtype=float)
    return keys @ np.asarray(q.query_vector, dtype=float) / np.sqrt(keys.shape[-1])


def scores_text(q: AttendQuestion, options: Sequence[str]) -> str:
    """The query's scaled scores in words, for a phone to reason from ("" when the question has none)."""
    scores = scaled_scores(q)
    if scores is None:
        return ""
    listed = "; ".join(f"{o} → {s:.2f}" for o, s in zip(options, scores))
    d = np.asarray(q.key_vectors).shape[-1]
    return f"Its scores with each key (query · key / √{d}), which the softmax turns into weights: {listed}. "


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def from_shape(q: ShapeQuestion) -> Question:
    """A workshop shape question as a round: the true shape among those of the other reshape steps."""
    steps = reshape_steps(input_tensor(q.b, q.t, q.k, seed=q.number), q.heads, wide=q.wide, seed=q.number).steps
    others = sorted({tuple(s.shape) for s in steps} - {tuple(q.shape)})
    rng = random.Random(q.number)
    shapes = [tuple(q.shape), *rng.sample(others, min(3, len(others)))]
    rng.shuffle(shapes)
    named = ", ".join(f"{d} = {n}" for d, n in zip(q.dims, q.shape))
    heads = f"wide heads, s = k = {q.k}" if q.wide else f"narrow heads, s = k / h = {q.head_dim}"
    return Question(
        "shape",
        q.number,
        f"What shape comes out of “{q.step}”?",
        f"Multi-head self-attention on x of shape (b, t, k) = ({q.b}, {q.t}, {q.k}) with h = {q.heads} heads "
        f"({heads}). The step before, “{q.before}”, gave {_shape_text(q.before_shape)}. Next: “{q.step}”: {q.note}"
        + (" (Queries, keys and values go through it side by side: give the queries'.)" if q.together else ""),
        tuple(_shape_text(s) for s in shapes),
        tuple(round(score_shape_guess(s, q.shape), 4) for s in shapes),
        shapes.index(tuple(q.shape)),
        f"“{q.step}” gives {_shape_text(q.shape)}: ({named}). {q.note}",
    )


def previous_question(number: int, weights, tokens: Sequence[str]) -> Question:
    """Which of four heads of ``weights`` ``(layers, heads, T, T)`` (a causal model on ``tokens``) puts
    the most weight on the token just before each query (``profiles.previous_token``)?"""
    w = np.asarray(weights, dtype=float)
    L, H, T, _ = w.shape
    if T < 3 or L * H < 2:
        raise ValueError("a previous-token question needs at least 3 tokens and 2 heads")
    metric = previous_token(w)  # (L, H)
    best = int(np.argmax(metric))
    rng = random.Random(number)
    others = rng.sample([i for i in range(L * H) if i != best], min(CANDIDATE_HEADS - 1, L * H - 1))
    heads = [best, *others]
    rng.shuffle(heads)
    names = [head_name(i // H, i % H) for i in heads]
    scores = [float(metric.flat[i]) for i in heads]
    summary = "; ".join(f"{n}: {s:.2f}" for n, s in sorted(zip(names, scores), key=lambda p: -p[1]))
    maps = [w[i // H, i % H] for i in heads]
    return Question(
        "previous",
        number,
        "Which of these heads is the previous-token head?",
        f"The Shakespeare generator reads “{''.join(tokens)}” one character at a time. Here are four of its "
        "heads. Which one puts the most weight on the character just before each query?",
        tuple(names),
        tuple(1.0 if i == best else 0.0 for i in heads),
        heads.index(best),
        f"{names[heads.index(best)]}: its weight sits on the diagonal just below the main one (key = query - 1). "
        f"Mean weight on the character just before, per head: {summary}.",
        figure={
            "title": "four heads: rows query, columns key",
            "tokens": list(tokens),
            "weights": _round(maps),
            "names": names,
        },
        reveal={
            "title": f"the previous-token head, {names[heads.index(best)]}",
            "tokens": list(tokens),
            "weights": _round(maps[heads.index(best)]),
            "highlight_row": None,
            "causal": True,
        },
    )


def ablation_question(number: int, ck: Checkpoint) -> Question:
    """What does the classifier say about a workshop sentence when one seeded head is switched off?"""
    layers, heads = ck.model.config.layers, ck.model.config.heads
    rng = random.Random(number)
    sentence = HEAD_SENTENCES[rng.randrange(len(HEAD_SENTENCES))]
    layer, head = rng.randrange(layers), rng.randrange(heads)
    ablation = ablate(ck, sentence, [("encoder", layer, head)])
    before, after = ablation.before, ablation.after
    label = before.prediction
    other = next(x for x in before.probs if x != label) if len(before.probs) == 2 else "another label"
    p_before, p_after = before.probs[label], after.probs[label]
    options = (f"stays {label}, more confident", f"stays {label}, less confident", f"flips to {other}")
    truth = 2 if after.prediction != label else (0 if p_after >= p_before else 1)
    return Question(
        "ablation",
        number,
        f"Switch off {head_name(layer, head)}: what happens?",
        f"The sentiment classifier reads “{sentence}” and says {label} ({p_before:.1%}). "
        f"{head_name(layer, head)} is switched off (its output multiplied by 0). What happens to the prediction?",
        options,
        tuple(1.0 if i == truth else 0.0 for i in range(3)),
        truth,
        f"With the head off the model says {after.prediction} ({after.confidence:.1%}); the probability of {label} "
        f"went from {p_before:.1%} to {p_after:.1%}. The head's own weights stay the same; everything it passed "
        "to the layers above (and so to the prediction) is gone.",
        reveal={
            "title": f"what {head_name(layer, head)} attended to",
            "tokens": list(before.kinds["encoder"].keys),
            "weights": _round(before.kinds["encoder"].weights[layer, head]),
            "highlight_row": None,
        },
    )


def role_question(number: int, attention, tokens: Sequence[str], role: Head) -> AttendQuestion:
    """ "Which key wins?" on the classifier's previous-token head (``role``, the head finder's, as the lesson's
    step names it) rather than a random one: a student reasons from what the head is known to do. The query
    (seeded by ``number``) is never the first word, which has no word before it."""
    a = np.asarray(attention, dtype=float)
    query = random.Random(number).randrange(1, len(tokens)) if len(tokens) > 1 else 0
    detail = (
        f"{role.name}, the head the head finder calls its previous-token head ({role.score:.2f} of each word's "
        "weight on one neighbour, over its review sentences)"
    )
    return AttendQuestion(
        number, head_sentence(number), list(tokens), query, a[role.layer, role.head], "classifier", detail
    )


def build_question(kind: str, number: int, checkpoint: Callable[[str], Checkpoint | None]) -> Question:
    """Question ``number`` of ``kind``; ``checkpoint(task)`` gives a loaded model or None. ValueError
    (saying what is missing) when the kind needs a model that is not there."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    if not 0 <= number <= 9999:
        raise ValueError("question numbers run from 0 to 9999")
    if kind == "attend":
        return from_attend(hand_question(number))
    if kind == "shape":
        return from_shape(shape_question(number))
    task = KINDS[kind][1]
    ck = checkpoint(task)
    if ck is None:
        raise ValueError(f"this question needs the {task} model, which is not trained here")
    if kind == "ablation":
        return ablation_question(number, ck)
    if kind == "head":
        view = run(ck, head_sentence(number)).kinds["encoder"]
        role = role_head(task, "previous", ck.directory) if ck.directory else None
        if role is not None and role.layer < view.weights.shape[0] and role.head < view.weights.shape[1]:
            return from_attend(role_question(number, view.weights, view.keys, role), "head")
        return from_attend(head_question(number, view.weights, view.keys), "head")
    text = PREVIOUS_TEXTS[number % len(PREVIOUS_TEXTS)]
    view = run(ck, text).kinds["encoder"]
    return previous_question(number, view.weights, view.keys)
