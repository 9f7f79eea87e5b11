"""The moment a head learns its job: each training snapshot's best head per role, beside its loss.

Training with ``--keep-snapshots`` leaves the weights of every evaluation in its work directory
(``epochNNN.safetensors``). :func:`score_snapshots` loads each into the shipped model's architecture and
scores every head with the head finder's own pass (:func:`model.analysis.head_scan.scan`, the same
definitions as ``python -m model heads``), keeping for each role the best head and its score. For a causal
model it also measures the **repeat loss**, Olsson et al. (2022)'s in-context signal: the mean next-token
loss (nats) over the second copy of ``r + r``, ``n`` random distinct tokens written twice, predicting each
token of the second copy from the one before it (the first token of the second copy is left out: nothing
predicts it). Before an induction head forms it is about ``log(vocabulary)``; once one forms it falls
towards 0, at the same snapshots where the induction score rises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from model.analysis.head_scan import PROBE_LEN, Reader, our_reader, scan
from model.analysis.measures import MEASURES
from model.core.checkpoint import Checkpoint

ROLES = tuple(m.name for m in MEASURES if m.history)  # previous, first, induction, duplicate
REPEAT_PROBES = 8  # random sequences per repeat-loss measurement (fixed seeds: the same at every snapshot)


def best_roles(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Role -> ``{"score", "kind", "layer", "head"}`` of the head scoring highest on it, over every kind the
    role applies to (rows of :meth:`HeadScores.rows`); a role no kind has is left out."""
    out = {}
    for role in ROLES:
        scored = [r for r in rows if r.get(role) is not None]
        if scored:
            top = max(scored, key=lambda r: r[role])
            out[role] = {"score": top[role], "kind": top["kind"], "layer": top["layer"], "head": top["head"]}
    return out


def repeat_loss(
    model: torch.nn.Module, usable: np.ndarray, *, n: int = PROBE_LEN, probes: int = REPEAT_PROBES
) -> float:
    """Mean next-token loss over the second copy of ``[first] + r + r`` (see the module docstring); a
    causal language model ``model(ids) -> (logits, _)`` and the ids a probe may draw."""
    rows = []
    for seed in range(probes):
        rng = np.random.default_rng(seed)
        r = [int(i) for i in rng.choice(usable, n, replace=False)]
        rows.append([int(rng.choice(usable)), *r, *r])
    ids = torch.tensor(rows, device=next(model.parameters()).device)
    was = model.training
    model.eval()
    try:
        with torch.inference_mode():
            logits, _ = model(ids[:, :-1])
    finally:
        model.train(was)
    second = slice(1 + n, 2 * n)  # positions predicting r[1:] of the second copy from the token before
    pred, target = logits[:, second], ids[:, 1 + n + 1 :]
    return float(F.cross_entropy(pred.flatten(0, 1).float(), target.flatten()))


def score_snapshot(ck: Checkpoint, lines: Sequence[str], reader: Reader | None = None) -> dict[str, Any]:
    """One model's best head per role over ``lines`` and, for a causal language model, its repeat loss."""
    reader = reader or our_reader(ck)
    out: dict[str, Any] = {"roles": best_roles(scan(reader, lines).rows())}
    inputs = ck.spec.inputs
    if len(inputs) == 1 and all(k.causal for k in ck.spec.kinds):
        usable = reader.usable(inputs[0])
        n = min(PROBE_LEN, (reader.positions(inputs[0]) - 1) // 2, len(usable))  # as the finder's probes fit
        out["repeat_loss"] = round(repeat_loss(ck.model, usable, n=n), 4)
    return out


def snapshot_files(work: Path) -> dict[int, Path]:
    """Epoch -> its weights file in a training work directory."""
    return {int(f.stem[5:]): f for f in sorted(work.glob("epoch*.safetensors")) if f.stem[5:].isdigit()}


def score_snapshots(
    ck: Checkpoint,
    work: Path,
    lines: Sequence[str],
    *,
    progress: Callable[[int, int], None] | None = None,
    each: Callable[[dict[int, dict[str, Any]]], None] | None = None,
) -> dict[int, dict[str, Any]]:
    """Epoch -> :func:`score_snapshot` of each snapshot in ``work``, loaded into ``ck``'s model (which
    is left holding the last snapshot's weights). ``each`` gets the epochs scored so far after every
    snapshot, so a run stopped part-way keeps what it scored."""
    files = snapshot_files(work)
    if not files:
        raise FileNotFoundError(f"{work}: no epochNNN.safetensors (train with --keep-snapshots)")
    out = {}
    reader = our_reader(ck)
    for i, (epoch, path) in enumerate(files.items()):
        ck.model.load_state_dict(load_file(str(path)), strict=False)
        out[epoch] = score_snapshot(ck, lines, reader)
        if progress:
            progress(i + 1, len(files))
        if each:
            each(out)
    return out


def write_roles(directory: Path, scored: dict[int, dict[str, Any]], work: Path | None = None) -> Path:
    """Add ``scored`` to the checkpoint's ``history.json`` as ``"snapshots": {epoch: ...}``, keeping only
    the epochs the history has maps for; with ``work``, also every evaluation's metrics from the run's
    ``state.json`` as ``"metrics"`` (config.json keeps them only up to the best model)."""
    path = Path(directory) / "history.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    epochs = set(meta.get("epochs", []))
    meta["snapshots"] = {str(e): v for e, v in sorted(scored.items()) if e in epochs}
    state = Path(work) / "state.json" if work else None
    if state and state.is_file():
        rows = json.loads(state.read_text(encoding="utf-8")).get("history", [])
        meta["metrics"] = [{k: v for k, v in r.items() if k != "score"} for r in rows if r.get("epoch") in epochs]
    path.write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    return path
