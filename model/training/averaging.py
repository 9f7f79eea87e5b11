"""Averaged weights shipped as a checkpoint: one run's epoch snapshots, or checkpoints fine-tuned from one start
(a model soup). ``python -m model average`` and a recipe's ``average`` stage both come here."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from safetensors.torch import load_file
from torch import nn

from model.core.checkpoint import load_checkpoint, save_checkpoint
from model.training import evaluate


def average_snapshots(work: Path, model: nn.Module, last: int, epochs: Iterable[int] | None = None) -> int:
    """Load the mean of epoch snapshots into ``model``: the last ``last`` of them, or exactly
    ``epochs`` when given (a missing one raises FileNotFoundError). Returns how many were averaged."""
    if epochs is None:
        files = sorted(work.glob("epoch*.safetensors"))[-last:]
    else:
        files = [work / f"epoch{e:03d}.safetensors" for e in epochs]
        if missing := [f.name for f in files if not f.exists()]:
            raise FileNotFoundError(f"no snapshot {', '.join(missing)} in {work}")
    if len(files) < (2 if epochs is None else 1):
        return 0
    return load_mean(model, files)


def load_mean(model: nn.Module, files: Iterable[str | Path]) -> int:
    """Load the uniform mean of the weight files into ``model``: of one run's snapshots, or of
    fine-tunes from one start (a "model soup", Wortsman et al. 2022). Weights the model lacks (a
    masked-LM bias) are left out; a file that lacks one of the model's weights raises ValueError.
    Returns how many files were averaged."""
    states = [load_file(str(f)) for f in files]
    own = model.state_dict()
    if missing := sorted({k for s in states for k in own if k not in s}):
        raise ValueError(f"a weight file lacks {', '.join(missing[:3])}")
    dev = next(model.parameters()).device
    avg = {k: (sum(s[k].float() for s in states) / len(states)).to(dev) for k in own}
    model.load_state_dict(avg)
    return len(states)


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
