"""A shipped model's card, as a student reads it, and the one-line record of how a run went.

``python -m model train ... --card "..."`` records the card's words in ``config.json``'s ``training.card``,
in the shape :data:`CARD_PARTS` names, one labelled line each, written for a student (no run history,
hardware, file paths or code names)::

    Learned from: the data, in plain words.
    Good at: what it does well, with an example a student can try.
    Bad at: where it goes wrong, with an example.

:func:`model_card` adds what the checkpoint itself records: its size (from its config) and its results
(from ``config.json``'s ``results``), so the card never states a number the model did not produce.
:func:`card_line` is the run's record for the command line and docs/RESULTS.md (steps, time, device).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

CARD_PARTS = ("Learned from", "Good at", "Bad at")  # the labelled lines of a card's words, in order
_LABEL = re.compile(rf"^({'|'.join(CARD_PARTS)}):\s*", re.MULTILINE)


@dataclass(frozen=True)
class ModelCard:
    """What a student reads about one model: (heading, text) in the order shown."""

    sections: tuple[tuple[str, str], ...]

    def text(self) -> str:
        """The card as Markdown: a bold heading, then its text, a paragraph each."""
        return "\n\n".join(f"**{heading}.** {body}" for heading, body in self.sections)


def card_parts(card: str) -> dict[str, str]:
    """The card's words by label (:data:`CARD_PARTS`); a card written before the labels is all "Learned from"."""
    card = (card or "").strip()
    if not card:
        return {}
    found = list(_LABEL.finditer(card))
    if not found:
        return {"Learned from": card}
    parts = {}
    for m, end in zip(found, [f.start() for f in found[1:]] + [len(card)]):
        text = card[m.end() : end].strip()
        parts[m.group(1)] = text[:1].upper() + text[1:]
    return {k: v for k, v in parts.items() if v}


def _about(n: float) -> str:
    """A count in words a student reads at a glance: ``1493858`` -> ``"about 1.5 million"``."""
    if n >= 1e6:
        return f"about {n / 1e6:.1f} million"
    if n >= 1e3:
        return f"about {round(n / 1e3):,} thousand"
    return f"{int(n):,}"


def size_text(config: dict[str, Any], params: int | None = None) -> str:
    """How big the model is, from its config: its layers and heads, the numbers that stand for each token
    inside it, and (when recorded) how many numbers training set."""
    heads, dim = config.get("heads"), config.get("dim")
    if "enc_layers" in config:
        stack = f"an encoder of {config['enc_layers']} layers and a decoder of {config['dec_layers']} layers"
    else:
        n = config.get("layers", 0)
        stack = f"{n} layer{'s' if n != 1 else ''}"
    out = f"{stack}, each with {heads} attention heads" if heads else stack
    if dim:
        out += f"; inside, each token is a list of {dim} numbers"
    if params:
        out += f"; {_about(params)} numbers (its weights) were set by training"
    return out[0].upper() + out[1:] + "."


def results_text(results: dict[str, Any], config: dict[str, Any]) -> str:
    """The held-out results ``config.json`` records, each in words (empty when none is recorded)."""
    said = []
    if "dev_accuracy" in results:
        said.append(f"it labels {results['dev_accuracy']:.1%} correctly")
    if "val_loss" in results:
        loss, chars = float(results["val_loss"]), config.get("vocab_size")
        guess = (
            f"; guessing evenly among the {chars} symbols it knows would score {math.log(chars):.2f}" if chars else ""
        )
        said.append(
            f"its loss is {loss:.2f} per character (lower is better{guess}): it gives the character that "
            f"really comes next a probability of about {math.exp(-loss):.0%}, typically"
        )
    if "val_bleu" in results:
        said.append(
            f"its BLEU score is {float(results['val_bleu']):.1f} out of 100 (how many runs of words its "
            "translations share with a person's translation; higher is better)"
        )
    if not said:
        return ""
    return "On examples it never saw in training, " + "; ".join(said) + "."


def model_card(
    training: dict[str, Any], results: dict[str, Any], config: dict[str, Any], params: int | None = None
) -> ModelCard:
    """The card: the recorded words (:func:`card_parts`), the size from ``config`` and the results from
    ``results`` (``config.json``'s), in the order a student asks about them. Empty without recorded words."""
    parts = card_parts(str((training or {}).get("card") or ""))
    if not parts:
        return ModelCard(())
    sections = [("What it learned from", parts.get("Learned from", ""))]
    sections.append(("How big it is", size_text(config, params or (training or {}).get("params"))))
    sections.append(("How well it does", results_text(results or {}, config)))
    sections += [("What it is good at", parts.get("Good at", "")), ("What it gets wrong", parts.get("Bad at", ""))]
    return ModelCard(tuple((h, t) for h, t in sections if t))


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def card_line(training: dict[str, Any]) -> str:
    """The run's record in one sentence, for the command line and docs/RESULTS.md (never a learner's page):
    the recorded words, then steps, wall time, device and parameter count as recorded. Empty when
    ``training`` (config.json's ``training``) records nothing."""
    if not training:
        return ""
    history = [h for h in training.get("history") or [] if isinstance(h, dict)]
    last = history[-1] if history else {}
    recipe = str(training.get("card") or "").strip()
    if not recipe:
        start = f"fine-tuned from {training['init_from']}" if training.get("init_from") else "trained from scratch"
        recipe = start[0].upper() + start[1:]
    facts = []
    if "step" in last:
        facts.append(f"{int(last['step']):,} steps")
    if "seconds" in last:
        facts.append(
            _minutes(float(last["seconds"])) + (f" on {training['device_name']}" if training.get("device_name") else "")
        )
    if training.get("params"):
        facts.append(f"{int(training['params']):,} parameters")
    return recipe.rstrip(".") + (f" ({', '.join(facts)})." if facts else ".")
