"""Role links: for each role a model's head plays (the head finder's top head), one input on which that head
plainly does it in what a model page shows, chosen by a rule, with its score there.

A head's **score on one input** is the head finder's own measure (:mod:`model.analysis.heads`) on that one
run: ``previous``, ``first`` and ``self`` the mean share of each row's weight on the role's key
(:func:`~model.analysis.heads.line_sums`), ``monotonic`` the cross-attention's rank correlation of query and
strongest key, and ``induction`` the share on the token after the earlier copy of each row's pair
(:func:`~model.analysis.induction.induction_here`). A head does its role on an input when that score reaches
the role's :data:`TARGETS` (absolute: not a share of its corpus score).

The rule (:func:`choose_links`): run every candidate (the dataset's sentences, the finder's corpus lines, or
for induction each one's opening written twice) as the page runs it; keep those read without ``<unk>``, of
a readable length (:data:`LENGTHS`), whose prediction the dataset accepts (:data:`ACCEPT`: the label it
gives; a translation whose chrF against the reference is at least :data:`CHRF`); the head's highest score
among them, the first in candidate order on a tie, is the link, when it reaches the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from model.analysis.heads import PLAYS, line_sums
from model.analysis.induction import induction_here
from model.analysis.runs import run
from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from model.core.tokenize import UNK

# a head does its role on an input when its score there reaches this (the targets: previous-token at
# least 0.7 of the weight on the previous token; first-token and induction 0.5; self as first-token; an
# alignment's rank correlation 0.7)
TARGETS = {"previous": 0.7, "first": 0.5, "self": 0.5, "induction": 0.5, "monotonic": 0.7}
ROLES = {  # metric -> the role's name on the pages (pages.shared.heads reads these)
    "previous": "previous-token",
    "first": "first-token (sink)",
    "self": "self",
    "monotonic": "monotonic alignment",
    "induction": "induction",
}
# how a score reads: what it is a share of, and its scale
SCALES = {
    "previous": ("of the weight on the token before", "0–1"),
    "first": ("of the weight on the first token", "0–1"),
    "self": ("of the weight on its own token", "0–1"),
    "induction": ("of the weight on the token after the earlier copy", "0–1"),
    "monotonic": ("rank correlation of word order", "−1 to 1"),
}
LENGTHS = {"words": (8, 20), "characters": (40, 128)}  # a readable example: long enough to show a stripe
CHRF = 70.0  # a translation a reader accepts: chrF (0–100) against the reference at least this
HALF = 30  # characters at least in each copy of an induction example


@dataclass(frozen=True)
class Candidate:
    text: str
    expected: str | None = None  # the dataset's label or reference translation; None: nothing to check


def head_score(weights, metric: str, layer: int, head: int, *, cross: bool, tokens: Sequence = ()) -> float:
    """One head's score on one run's ``(layers, heads, queries, keys)`` map of one kind (see the module
    docstring); ``tokens`` are the tokens each position reads (its key tokens, or their ids), for induction. NaN where it does not apply."""
    w = np.asarray(weights[layer, head], dtype=np.float64)[None, None]
    if metric == "induction":
        scores, n = induction_here(w, list(tokens))
        return float(scores[0, 0]) if n else math.nan
    sums = line_sums(w, cross=cross)
    if metric not in sums or not sums[metric][1][0, 0]:
        return math.nan
    total, count = sums[metric]
    return float(total[0, 0] / count[0, 0])


def run_score(result: RunResult, metric: str, kind: str, layer: int, head: int) -> float:
    """:func:`head_score` of one head of ``result``'s kind ``kind``."""
    k = result.kinds[kind]
    return head_score(k.weights, metric, layer, head, cross=k.cross, tokens=k.keys)


def read_whole(result: RunResult) -> bool:
    """Whether the model read every token of the input, and wrote none, as ``<unk>``."""
    return not result.unknown_read and not result.truncated and not any(UNK in k.queries for k in result.kinds.values())


def _chrf(result: RunResult, expected: str) -> bool:
    import sacrebleu

    return sacrebleu.sentence_chrf(result.prediction, [expected.lower()]).score >= CHRF


# what "the model gets it right" means for each kind of prediction (ModelSpec.output)
ACCEPT: dict[str, Callable[[RunResult, str], bool]] = {
    "classes": lambda r, expected: r.prediction == expected,
    "text": _chrf,
}


def written_twice(text: str, limit: int) -> str | None:
    """``text``'s opening written twice, ``"phrase phrase"``, the phrase cut at a space to fit ``limit``
    characters in all; None when less than :data:`HALF` characters fit."""
    room = (limit - 1) // 2
    phrase = text[: room + 1].rsplit(" ", 1)[0] if len(text) > room else text
    phrase = phrase.strip()
    return f"{phrase} {phrase}" if len(phrase) >= HALF else None


def _length(ck: Checkpoint, result: RunResult) -> int:
    return len(result.kinds[ck.spec.kinds[0].name].keys) if ck.spec.characters else result.read


def top_heads(report: dict, *, per_kind: bool = False) -> list[dict]:
    """Each role's top head over the corpus (with ``per_kind``, each kind's), for the roles some head plays
    (the finder's ``PLAYS``): ``{"metric", "kind", "layer", "head", "corpus"}``."""
    groups = {}
    for r in report["heads"]:
        groups.setdefault(r["kind"] if per_kind else "", []).append(r)
    out = []
    for rows in groups.values():
        for metric in ROLES:
            scored = [r for r in rows if r.get(metric) is not None]
            if scored and (top := max(scored, key=lambda r: r[metric]))[metric] >= PLAYS:
                out.append(
                    dict(metric=metric, kind=top["kind"], layer=top["layer"], head=top["head"], corpus=top[metric])
                )
    return out


def choose_links(
    ck: Checkpoint, report: dict, candidates: Sequence[Candidate], *, targets: dict[str, float] | None = None
) -> list[dict]:
    """For each of :func:`top_heads`, the input the rule picks (module docstring) and its score there:
    ``{"role", "metric", "kind", "layer", "head", "corpus", "input", "score", "target", "expected",
    "prediction", "tokens"}``. A role none of whose candidates reaches its target gets no link."""
    targets = targets or TARGETS
    accept = ACCEPT.get(ck.spec.output)
    lo, hi = LENGTHS[ck.spec.unit]
    runs: dict[str, RunResult | None] = {}

    def usable(c: Candidate) -> RunResult | None:
        if c.text not in runs:
            r = run(ck, c.text)
            ok = read_whole(r) and lo <= _length(ck, r) <= hi
            ok = ok and (accept is None or c.expected is None or accept(r, c.expected))
            runs[c.text] = r if ok else None
        return runs[c.text]

    doubled = []
    for c in candidates:
        twice = written_twice(c.text, hi)
        if twice is not None:
            doubled.append(Candidate(twice, c.expected))
    out = []
    for top in top_heads(report):
        metric = top["metric"]
        best, best_score, best_run = None, -math.inf, None
        for c in doubled if metric == "induction" else candidates:
            r = usable(c)
            if r is None or top["kind"] not in r.kinds:
                continue
            s = run_score(r, metric, top["kind"], top["layer"], top["head"])
            if s > best_score:
                best, best_score, best_run = c, s, r
        if best is None or best_score < targets[metric]:
            continue
        out.append(
            dict(
                role=ROLES[metric],
                **top,
                input=best.text,
                score=round(best_score, 6),
                target=targets[metric],
                expected=best.expected,
                prediction=best_run.prediction,
                tokens=_length(ck, best_run),
            )
        )
    return out
