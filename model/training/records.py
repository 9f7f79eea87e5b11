"""What a run writes beside its checkpoint folder's model: the best model shipped with the settings it was
trained with (:func:`ship`), and each evaluation's probe attention and metrics (:func:`snapshot_probe`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn

from model.core.checkpoint import save_checkpoint


def ship(out: Path, model, bundle, cfg, task, metrics, history) -> None:
    """Save ``model`` (what the recipe ships of it) to ``out`` with ``cfg``'s settings, the run's history and ``metrics``."""
    kept = getattr(task, "shipped", lambda m: m)(model)  # a recipe may train more than it ships
    settings = {k: v for k, v in dataclasses.asdict(cfg).items() if k not in ("data_dir", "out_dir", "work_dir")}
    device = next(model.parameters()).device
    settings["device_name"] = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type.upper()
    save_checkpoint(
        out,
        cfg.task,
        kept,
        task.vocabs(bundle),
        training={**settings, "params": sum(p.numel() for p in kept.parameters()), "history": history},
        results={k: v for k, v in metrics.items() if k != "score"},
    )


def snapshot_probe(
    out: Path, model: nn.Module, probes: dict[str, Any], task, epoch: int, metrics: dict[str, Any] | None = None
) -> None:
    """Append the probe inputs' attention (float16) to ``history.safetensors`` beside the checkpoint, and
    this evaluation's ``metrics`` to ``history.json`` (every epoch's, not only the best model's)."""
    if not probes:
        return
    out.mkdir(parents=True, exist_ok=True)
    path, meta_path = out / "history.safetensors", out / "history.json"
    tensors = load_file(str(path)) if path.exists() else {}
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {"epochs": [], "probes": {}}
    for name, maps in task.probe_attention(model, probes).items():
        for kind, layers in (("encoder", maps.encoder), ("decoder", maps.decoder), ("cross", maps.cross)):
            for layer, w in enumerate(layers):
                tensors[f"{name}/{kind}/{layer}/{epoch}"] = w[0].detach().to("cpu", torch.float16).contiguous()
    meta["epochs"] = sorted(set(meta["epochs"]) | {epoch})
    meta["probes"] = {name: p["tokens"] for name, p in probes.items()}
    if metrics is not None:
        kept = [m for m in meta.get("metrics", []) if m.get("epoch") != epoch]
        meta["metrics"] = sorted([*kept, {k: v for k, v in metrics.items() if k != "score"}], key=lambda m: m["epoch"])
    save_file(tensors, str(path))
    meta_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
