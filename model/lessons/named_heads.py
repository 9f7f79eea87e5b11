"""The heads and the moment the lesson names, read from the checkpoints: the head finder's scores beside each
checkpoint (``heads.json``) and its training history (``history.json``), never written by hand, so a retrained
model's lesson names its own heads (:mod:`model.lessons.path`, :mod:`model.lessons.questions`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from model.analysis.heads import PLAYS
from model.core.checkpoint import default_dir
from model.core.specs import SPECS


@dataclass(frozen=True)
class Head:
    """One head the head finder names for a role: its attention kind, layer, head and corpus score."""

    kind: str
    layer: int
    head: int
    score: float

    several: bool = False  # the model has several attention kinds: the name says which

    @property
    def name(self) -> str:
        return head_name(self.layer, self.head, self.kind if self.several else None)


def head_name(layer: int, head: int, kind: str | None = None) -> str:
    """The one name of a head, as every page writes it (``viz.common.head_name``, which model/ cannot import):
    ``"L3 H2"``, with the kind in front where a model has several (``"cross L2 H0"``)."""
    name = f"L{int(layer)} H{int(head)}"
    return f"{kind} {name}" if kind else name


@lru_cache(maxsize=16)
def _read_json(path: str, mtime: float) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _json(task: str, name: str, directory: str | Path | None = None) -> dict | None:
    path = Path(directory or default_dir(task)) / name
    return _read_json(str(path), path.stat().st_mtime) if path.is_file() else None


def role_head(task: str, metric: str, directory: str | Path | None = None) -> Head | None:
    """The head the finder's scores beside ``task``'s checkpoint (in ``directory``, else the default one) rank
    first on ``metric``, when it plays the role (scores at least ``PLAYS``); None without scores or without
    such a head."""
    report = _json(task, "heads.json", directory)
    rows = [r for r in (report or {}).get("heads", []) if r.get(metric) is not None]
    if not rows:
        return None
    top = max(rows, key=lambda r: r[metric])
    if top[metric] < PLAYS:
        return None
    several = len(SPECS[task].kinds) > 1
    return Head(top["kind"], int(top["layer"]), int(top["head"]), float(top[metric]), several)


@dataclass(frozen=True)
class Forming:
    """When a role's head forms in training: the first snapshot from which its best head keeps scoring at least
    ``PLAYS``, the snapshot before, both scores, and the repeated-text loss at each (None where unmeasured)."""

    snapshot: int
    before: int
    score: float
    score_before: float
    loss: float | None
    loss_before: float | None
    probe: str | None  # the probe input whose text repeats a phrase
    snapshots: tuple[int, ...]


def forming(task: str, role: str = "induction") -> Forming | None:
    """When ``role``'s head forms in ``task``'s training history (its ``history.json`` snapshots), or None."""
    meta = _json(task, "history.json") or {}
    snaps = {int(e): s for e, s in (meta.get("snapshots") or {}).items()}
    scores = {e: s.get("roles", {}).get(role, {}).get("score") for e, s in sorted(snaps.items())}
    epochs = [e for e, v in scores.items() if v is not None]
    later = [e for i, e in enumerate(epochs) if all(scores[x] >= PLAYS for x in epochs[i:])]
    if not later or later[0] == epochs[0]:
        return None  # never formed, or there from the first snapshot: no moment to show
    at = later[0]
    before = epochs[epochs.index(at) - 1]
    probes = meta.get("probes") or {}
    probe = next((p for p, toks in probes.items() if _repeats(toks)), None)
    return Forming(
        at,
        before,
        scores[at],
        scores[before],
        snaps[at].get("repeat_loss"),
        snaps[before].get("repeat_loss"),
        probe,
        tuple(epochs),
    )


def _repeats(tokens: list[str], n: int = 8) -> bool:
    """Whether some run of ``n`` tokens occurs twice (a phrase written twice)."""
    grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
    return len(set(grams)) < len(grams)
