"""Training history: the probe attention saved after every epoch and the per-epoch metrics.

``model.training.train.snapshot_probe`` appends, beside the checkpoint, ``history.safetensors`` (one
float16 ``(heads, queries, keys)`` tensor per ``"<probe>/<kind>/<layer>/<epoch>"``) and
``history.json`` (``{"epochs": [...], "probes": {name: tokens}}``); ``config.json`` holds
``training.history``, one metrics dict per epoch up to the best model shipped so far.
Reading never unpickles. Anything missing or inconsistent raises one :class:`HistoryError`
that names the file and what is wrong; :class:`MissingHistory` means no history was saved yet.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

HISTORY_WEIGHTS, HISTORY_META = "history.safetensors", "history.json"
KINDS = ("encoder", "decoder", "cross")
NOT_CURVES = ("epoch", "step", "seconds", "tokens_per_s", "score")  # bookkeeping, not learning curves


class HistoryError(RuntimeError):
    """The history files are unreadable or disagree with each other."""


class MissingHistory(HistoryError):
    """No history was saved in this directory (a checkpoint trained before history existed)."""


FORMS = 0.3  # a rise of a role's best score this large between two snapshots counts as a head forming


@dataclass(frozen=True)
class Moment:
    """A head forming: the first snapshot where ``role``'s best score stands after its largest rise."""

    role: str
    epoch: int  # the snapshot where the head is first there
    before_epoch: int  # the scored snapshot just before it
    before: float  # the role's best score at ``before_epoch``
    after: float  # ... and at ``epoch``
    kind: str  # the best head at ``epoch``
    layer: int
    head: int
    loss_before: float | None  # the repeat loss (nats) at both snapshots, when it was measured
    loss_after: float | None


@dataclass(frozen=True, eq=False)
class ProbeHistory:
    """Every saved attention map of the probe inputs, checked for consistency on load."""

    directory: Path
    epochs: list[int]  # ascending
    probes: dict[str, list[str]]  # name -> the tokens it was run on (the encoder's keys)
    maps: dict[tuple[str, str, int, int], torch.Tensor]  # (probe, kind, layer, epoch) -> (heads, Tq, Tk)
    metrics: list[dict[str, Any]] = field(default_factory=list)  # every evaluation's metrics, not only the best's
    snapshots: dict[int, dict[str, Any]] = field(default_factory=dict)  # epoch -> best head per role, repeat loss

    def role_curves(self) -> dict[str, list[float]]:
        """Each role's best score per scored snapshot, and the repeat loss, as series beside ``"epoch"``
        (:mod:`model.analysis.snapshots`); empty when no snapshot was scored."""
        epochs = sorted(self.snapshots)
        if not epochs:
            return {}
        roles = list(dict.fromkeys(r for e in epochs for r in self.snapshots[e].get("roles", {})))
        out = {"epoch": [float(e) for e in epochs]}
        for role in roles:
            out[role] = [
                float(self.snapshots[e].get("roles", {}).get(role, {}).get("score", float("nan"))) for e in epochs
            ]
        if any("repeat_loss" in self.snapshots[e] for e in epochs):
            out["repeat_loss"] = [float(self.snapshots[e].get("repeat_loss", float("nan"))) for e in epochs]
        return out

    def best_head(self, role: str, epoch: int | None = None) -> dict[str, Any] | None:
        """``{"score", "kind", "layer", "head"}`` of the best ``role`` head at ``epoch`` (default: the last
        scored snapshot), or None."""
        if not self.snapshots:
            return None
        at = self.snapshots.get(epoch if epoch is not None else max(self.snapshots), {})
        return at.get("roles", {}).get(role)

    def moment(self, role: str = "induction", rise: float = FORMS) -> Moment | None:
        """The snapshot where ``role``'s best score rose the most from the scored snapshot before it, when
        that rise is at least ``rise`` (a head forming: Olsson et al. 2022's phase change), else None.
        Read from the scored snapshots, never a fixed number: it follows whatever training wrote."""
        epochs = sorted(self.snapshots)
        score = lambda e: self.snapshots[e].get("roles", {}).get(role, {}).get("score")
        steps = [
            (float(score(b)) - float(score(a)), a, b)
            for a, b in zip(epochs, epochs[1:], strict=False)
            if score(a) is not None and score(b) is not None
        ]
        if not steps:
            return None
        jump, before, at = max(steps)
        if jump < rise:
            return None
        best = self.snapshots[at]["roles"][role]
        loss = lambda e: self.snapshots[e].get("repeat_loss")
        return Moment(
            role, at, before, float(score(before)), float(score(at)), best["kind"], int(best["layer"]),
            int(best["head"]), loss(before), loss(at),
        )  # fmt: skip

    def kinds(self, probe: str) -> list[str]:
        """The attention kinds saved for ``probe``, in :data:`KINDS` order."""
        present = {kind for p, kind, _, _ in self.maps if p == probe}
        return [k for k in KINDS if k in present]

    def layers(self, probe: str, kind: str) -> int:
        return len({layer for p, k, layer, _ in self.maps if (p, k) == (probe, kind)})

    def attention(self, probe: str, kind: str, epoch: int) -> np.ndarray:
        """``(layers, heads, queries, keys)`` float32 for one probe, kind and epoch."""
        if probe not in self.probes:
            raise KeyError(f"no probe {probe!r}; the history has {', '.join(self.probes)}")
        if epoch not in self.epochs:
            raise KeyError(f"no epoch {epoch}; the history has epochs {self.epochs[0]}..{self.epochs[-1]}")
        n = self.layers(probe, kind)
        if not n:
            raise KeyError(f"probe {probe!r} has no {kind} attention; it has {', '.join(self.kinds(probe))}")
        return torch.stack([self.maps[(probe, kind, layer, epoch)] for layer in range(n)]).float().numpy()


def _read_extras(path: Path) -> tuple[list[dict[str, Any]], dict[int, dict[str, Any]]]:
    """history.json's optional ``"metrics"`` (a list of per-epoch dicts) and ``"snapshots"`` (epoch ->
    scored roles); absent or malformed entries read as empty (the maps stay usable without them)."""
    meta = json.loads(path.read_text(encoding="utf-8"))
    metrics = [m for m in meta.get("metrics") or [] if isinstance(m, dict) and "epoch" in m]
    raw = meta.get("snapshots") or {}
    snaps = (
        {int(k): v for k, v in raw.items() if str(k).isdigit() and isinstance(v, dict)} if isinstance(raw, dict) else {}
    )
    return metrics, snaps


def _read_meta(path: Path) -> tuple[list[int], dict[str, list[str]]]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HistoryError(f"{path}: not valid JSON ({e})") from e
    epochs, probes = meta.get("epochs") if isinstance(meta, dict) else None, None
    if isinstance(meta, dict):
        probes = meta.get("probes")
    if not isinstance(epochs, list) or not all(isinstance(e, int) and not isinstance(e, bool) for e in epochs):
        raise HistoryError(f'{path}: "epochs" must be a list of whole numbers')
    if not isinstance(probes, dict) or not all(
        isinstance(t, list) and all(isinstance(s, str) for s in t) for t in probes.values()
    ):
        raise HistoryError(f'{path}: "probes" must map each probe name to its list of tokens')
    return sorted(set(epochs)), {str(k): list(v) for k, v in probes.items()}


def _parse_key(path: Path, key: str) -> tuple[str, str, int, int]:
    parts = key.split("/")
    try:
        probe, kind, layer, epoch = parts[0], parts[1], int(parts[2]), int(parts[3])
    except (IndexError, ValueError):
        raise HistoryError(f"{path}: tensor {key!r} is not named <probe>/<kind>/<layer>/<epoch>") from None
    if len(parts) != 4 or kind not in KINDS or layer < 0:
        raise HistoryError(f"{path}: tensor {key!r} is not named <probe>/<kind>/<layer>/<epoch> with kind in {KINDS}")
    return probe, kind, layer, epoch


def _check(path: Path, epochs: list[int], probes: dict[str, list[str]], maps: dict) -> None:
    """Every probe and kind has the same layers at every epoch, with shapes that fit its tokens."""
    meta = path.with_name(HISTORY_META)
    for probe, _, _, epoch in maps:
        if probe not in probes:
            raise HistoryError(f"{path}: has maps for probe {probe!r}, which {meta} does not list")
        if epoch not in epochs:
            raise HistoryError(f"{path}: has maps for epoch {epoch}, which {meta} does not list")
    for probe, tokens in probes.items():
        kinds = sorted({k for p, k, _, _ in maps if p == probe}, key=KINDS.index)
        if not kinds:
            raise HistoryError(f"{meta}: lists probe {probe!r} but {path} has no maps for it")
        for kind in kinds:
            layers = sorted({l for p, k, l, _ in maps if (p, k) == (probe, kind)})
            if layers != list(range(len(layers))):
                raise HistoryError(f"{path}: {probe}/{kind} has layers {layers}; expected 0..{len(layers) - 1}")
            heads = None
            for epoch in epochs:
                shapes = []
                for layer in layers:
                    w = maps.get((probe, kind, layer, epoch))
                    if w is None:
                        raise HistoryError(f"{path}: {probe}/{kind}/{layer} has no map for epoch {epoch}")
                    if w.dim() != 3:
                        raise HistoryError(
                            f"{path}: {probe}/{kind}/{layer}/{epoch} has shape {tuple(w.shape)}; "
                            "expected (heads, queries, keys)"
                        )
                    shapes.append(tuple(w.shape))
                H, Tq, Tk = shapes[0]
                heads = H if heads is None else heads
                if any(s != shapes[0] for s in shapes) or H != heads:
                    raise HistoryError(
                        f"{path}: the layers of {probe}/{kind} at epoch {epoch} differ in shape: {shapes}"
                    )
                n = len(tokens)
                if (
                    (kind == "encoder" and (Tq, Tk) != (n, n))
                    or (kind == "cross" and Tk != n)
                    or (kind == "decoder" and Tq != Tk)
                ):
                    raise HistoryError(
                        f"{path}: {probe}/{kind} at epoch {epoch} is {Tq} × {Tk} but probe {probe!r} has {n} tokens in {meta}"
                    )


def load_history(directory: str | os.PathLike) -> ProbeHistory:
    """Read and check the probe history beside a checkpoint."""
    d = Path(directory)
    path, meta_path = d / HISTORY_WEIGHTS, d / HISTORY_META
    if not path.is_file() and not meta_path.is_file():
        raise MissingHistory(
            f"{d}: no training history ({HISTORY_WEIGHTS}, {HISTORY_META}); training writes them after every epoch"
        )
    for present, absent in ((path, meta_path), (meta_path, path)):
        if not absent.is_file():
            raise HistoryError(f"{absent}: missing, although {present.name} exists; the history is incomplete")
    epochs, probes = _read_meta(meta_path)
    if not epochs:
        raise MissingHistory(f"{meta_path}: lists no epochs yet; the first one is saved after one epoch of training")
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError) as e:
        raise HistoryError(f"{path}: unreadable or truncated ({e})") from e
    maps = {_parse_key(path, key): w for key, w in tensors.items()}
    _check(path, epochs, probes, maps)
    metrics, snapshots = _read_extras(meta_path)
    return ProbeHistory(d, epochs, probes, maps, metrics, snapshots)


def history_stamp(directory: str | os.PathLike) -> tuple[float, ...]:
    """Modification times of the history files (0 for one that is absent): a new epoch written by
    training changes it, so a cache keyed on it reads the history again."""
    d = Path(directory)
    paths = (d / HISTORY_WEIGHTS, d / HISTORY_META, d / "config.json")
    return tuple(p.stat().st_mtime if p.exists() else 0.0 for p in paths)


def training_curves(training: dict[str, Any], metrics: list[dict[str, Any]] | None = None) -> dict[str, list[float]]:
    """Per-epoch metrics as series: ``{"epoch": [...], "train_loss": [...], ...}``: ``metrics`` (history.json's
    record of every evaluation) when given, else ``config.json``'s ``training.history`` (which stops at the
    best model shipped).

    Bookkeeping (steps, seconds, throughput, the selection score) is left out; a metric missing
    at some epoch is NaN there. Empty when the checkpoint records no history.
    """
    rows = metrics or [r for r in (training or {}).get("history") or [] if isinstance(r, dict) and "epoch" in r]
    if not rows:
        return {}
    names = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in NOT_CURVES]
    names = [n for n in names if all(isinstance(r.get(n, 0.0), int | float) for r in rows)]
    curves = {"epoch": [float(r["epoch"]) for r in rows]}
    for name in names:
        curves[name] = [float(r[name]) if name in r else float("nan") for r in rows]
    return curves


def snapshot_steps(metrics: list[dict[str, Any]], training: dict[str, Any]) -> dict[int, int]:
    """Snapshot -> the training steps taken when it was saved: each evaluation's recorded ``step``
    (history.json's metrics, else config.json's), else ``eval_every`` times the snapshot's number."""
    rows = metrics or (training or {}).get("history") or []
    steps = {int(r["epoch"]): int(r["step"]) for r in rows if isinstance(r, dict) and "epoch" in r and "step" in r}
    every = (training or {}).get("eval_every")
    return steps if steps or not every else {e: e * int(every) for e in range(1, int(training.get("epochs", 0)) + 1)}


def held_fixed(training: dict[str, Any], layer: int) -> bool:
    """Whether block ``layer`` came from an earlier training and was kept as it was during this one
    (``init_from`` set and ``freeze`` naming ``blocks.<layer>.``): a head there formed before these snapshots."""
    training = training or {}
    prefixes = [p.strip() for p in str(training.get("freeze") or "").split(",") if p.strip()]
    block = f"blocks.{layer}."
    return bool(training.get("init_from")) and any(block.startswith(p) or p.startswith(block) for p in prefixes)
