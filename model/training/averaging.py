"""Averaged weights shipped as a checkpoint: one run's epoch snapshots, or checkpoints fine-tuned from one start
(a model soup). ``python -m model average`` and a recipe's ``average`` stage both come here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.core.checkpoint import load_checkpoint, save_checkpoint
from model.training import evaluate
from model.training.train import average_snapshots, load_mean


def average(
    task: str,
    out: str | Path,
    *,
    checkpoints: Sequence[str | Path] | None = None,
    epochs: Sequence[int] | None = None,
    work: str | Path | None = None,
    base: str | Path | None = None,
    data: str | Path | None = None,
    src: str | Path | None = None,
    ref: str | Path | None = None,
) -> dict[str, Any]:
    """Write to ``out`` the uniform mean of ``checkpoints`` (folders) or of the run in ``work``'s snapshots of
    ``epochs``, with the config and vocabularies of ``base`` (default: the first checkpoint, else ``out``).
    ``data`` (a classifier's labelled sentences) or ``src``/``ref`` (a translator's) record its score. Returns
    the results written. A missing file raises FileNotFoundError, a file lacking a weight ValueError."""
    if bool(epochs) == bool(checkpoints):
        raise ValueError("average needs epochs (one run's snapshots) or checkpoints (a soup of fine-tunes), not both")
    out = Path(out)
    base = Path(base) if base else Path(checkpoints[0]) if checkpoints else out
    ck = load_checkpoint(base, task=task)  # config and vocabularies
    if checkpoints:
        load_mean(ck.model, [Path(d) / "model.safetensors" for d in checkpoints])
        results: dict[str, Any] = {"averaged_checkpoints": [str(c) for c in checkpoints]}
    else:
        average_snapshots(Path(work) if work else Path("runs") / task, ck.model, 0, list(epochs))
        results = {"averaged_epochs": list(epochs)}
    if ck.spec.output == "classes" and data:
        results.update(dev_accuracy=evaluate.evaluate_classifier(ck, data)["accuracy"])
    if ck.spec.output == "text" and src and ref:
        scores = evaluate.evaluate_translator(ck, src, ref, beam_size=1)
        results.update(
            val_bleu=scores["bleu"], val_sacrebleu=scores["sacrebleu"], val_sentences=scores.get("sentences")
        )
    kept = {k: v for k, v in results.items() if k.startswith("averaged_")}
    save_checkpoint(out, task, ck.model, ck.vocabs, training={**ck.training, **kept}, results=results)
    return results
