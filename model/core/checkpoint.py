"""Checkpoints: ``model.safetensors`` weights plus ``config.json`` (config, vocabularies, results).

Loading never unpickles. Anything wrong with a checkpoint raises one :class:`CheckpointError`
that names the file and what is wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_model
from torch import nn

from model import zoo
from model.core.specs import ModelSpec, spec_for
from model.core.tokenize import Vocab

ROOT = Path(__file__).resolve().parents[2]  # the checkout: model/training/ is two below it
WEIGHTS, CONFIG = "model.safetensors", "config.json"


class CheckpointError(RuntimeError):
    """A checkpoint is missing, truncated, or does not match its config."""


CHECKPOINTS_ENV = "ATTENTION_CHECKPOINTS"  # another root for checkpoints (tests, experiments)


def default_dir(task: str) -> Path:
    """``$ATTENTION_CHECKPOINTS/<task>`` when set, else the shipped ``checkpoints/<task>``."""
    return Path(os.environ.get(CHECKPOINTS_ENV) or ROOT / "checkpoints") / task


def weights_digest(directory: str | os.PathLike) -> str:
    """The SHA-256 of a checkpoint's ``model.safetensors``, in hex (``heads.json`` records the weights it scored)."""
    return hashlib.sha256((Path(directory) / "model.safetensors").read_bytes()).hexdigest()


def build_model(task: str, config: dict[str, Any]) -> nn.Module:
    """The network of our model ``task`` (its module in model/zoo says which) from a saved config."""
    if task not in zoo.MODELS:
        raise ValueError(f"unknown task {task!r}; choose one of {', '.join(zoo.MODELS)}")
    return zoo.MODELS[task].build(config)


@dataclass
class Checkpoint:
    """A loaded checkpoint: the model (eval mode) and everything ``config.json`` held."""

    task: str
    model: nn.Module
    vocabs: dict[str, Vocab]
    training: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)
    directory: Path | None = None

    @property
    def spec(self) -> ModelSpec:
        """What this model is (its attention kinds, inputs, limits, labels): its module in :mod:`model.zoo`."""
        return spec_for(self.task)


def save_checkpoint(
    directory: str | os.PathLike,
    task: str,
    model: nn.Module,
    vocabs: dict[str, Vocab],
    *,
    training: dict[str, Any] | None = None,
    results: dict[str, Any] | None = None,
) -> Path:
    """Write weights and JSON side by side; each file is replaced atomically."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    meta = {
        "task": task,
        "config": dataclasses.asdict(model.config),
        "vocabs": {name: v.to_list() for name, v in vocabs.items()},
        "training": training or {},
        "results": results or {},
    }
    save_model(model, str(d / f".{WEIGHTS}.tmp"))  # save_model handles tied (shared) weights
    os.replace(d / f".{WEIGHTS}.tmp", d / WEIGHTS)
    (d / f".{CONFIG}.tmp").write_text(json.dumps(meta, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(d / f".{CONFIG}.tmp", d / CONFIG)
    return d


def read_meta(directory: str | os.PathLike) -> dict[str, Any]:
    """The parsed ``config.json`` of a checkpoint directory."""
    path = Path(directory) / CONFIG
    if not path.is_file():
        raise CheckpointError(f"{path}: missing (train one with `python -m model train <task>`)")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{path}: not valid JSON ({e})") from e
    for key in ("task", "config", "vocabs"):
        if key not in meta:
            raise CheckpointError(f"{path}: has no {key!r} entry")
    return meta


def load_checkpoint(
    directory: str | os.PathLike, *, task: str | None = None, device: str | torch.device = "cpu"
) -> Checkpoint:
    """Rebuild the model from ``config.json`` and load ``model.safetensors`` into it."""
    d = Path(directory)
    meta = read_meta(d)
    if task is not None and meta["task"] != task:
        raise CheckpointError(f"{d / CONFIG}: holds a {meta['task']} checkpoint, not a {task}")
    try:
        model = build_model(meta["task"], meta["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{d / CONFIG}: config does not describe a {meta['task']} ({e})") from e
    weights = d / WEIGHTS
    if not weights.is_file():
        raise CheckpointError(f"{weights}: missing")
    try:
        state = load_file(str(weights), device=str(device))
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"{weights}: unreadable or truncated ({e})") from e
    expected = model.state_dict()
    # tied weights are stored once; save_model keeps one name of each shared tensor
    missing = [k for k in expected if k not in state and not _tied_alias(model, k, state)]
    unexpected = [k for k in state if k not in expected]
    wrong = [k for k in state if k in expected and state[k].shape != expected[k].shape]
    if missing or unexpected or wrong:
        parts = []
        if wrong:
            k = wrong[0]
            parts.append(
                f"{len(wrong)} tensors of the wrong shape (e.g. {k}: {tuple(state[k].shape)} vs config {tuple(expected[k].shape)})"
            )
        if missing:
            parts.append(f"{len(missing)} tensors missing (e.g. {missing[0]})")
        if unexpected:
            parts.append(f"{len(unexpected)} unexpected tensors (e.g. {unexpected[0]})")
        raise CheckpointError(f"{weights}: does not match {d / CONFIG}: " + "; ".join(parts))
    model.load_state_dict(state, strict=False)
    model.to(device).eval()
    vocabs = {name: Vocab(itos) for name, itos in meta["vocabs"].items()}
    return Checkpoint(meta["task"], model, vocabs, meta.get("training", {}), meta.get("results", {}), d)


def _tied_alias(model: nn.Module, name: str, state: dict[str, torch.Tensor]) -> bool:
    """True when ``name`` shares storage with a tensor that is in ``state``."""
    params = dict(model.named_parameters(remove_duplicate=False))
    if name not in params:
        return False
    ptr = params[name].data_ptr()
    return any(k in state for k, p in params.items() if k != name and p.data_ptr() == ptr)
