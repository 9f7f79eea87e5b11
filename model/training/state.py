"""A run's resumable state in its work folder: the latest weights and Adam's moments as safetensors, the counters
as JSON (nothing is pickled)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor, nn


def save_state(path: Path, model: nn.Module, opt: torch.optim.Optimizer, progress: dict[str, Any]) -> None:
    """Resumable state as safetensors (weights and Adam moments) plus JSON (counters)."""
    path.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            for k, v in opt.state.get(p, {}).items():
                if torch.is_tensor(v) and v.dim() > 0:
                    tensors[f"opt.{names[id(p)]}.{k}"] = v.contiguous().cpu()
                elif k == "step":
                    progress.setdefault("opt_step", float(v))
    _dedupe_shared(tensors)
    save_file(tensors, str(path / ".state.tmp"))
    (path / ".state.tmp").replace(path / "state.safetensors")
    (path / "state.json").write_text(json.dumps(progress, indent=1))


def _dedupe_shared(tensors: dict[str, Tensor]) -> None:
    seen: dict[int, str] = {}
    for k in list(tensors):
        ptr = tensors[k].data_ptr()
        if ptr in seen:
            tensors[k] = tensors[k].clone()
        else:
            seen[ptr] = k


def load_state(path: Path, model: nn.Module, opt: torch.optim.Optimizer) -> dict[str, Any] | None:
    if not (path / "state.safetensors").exists() or not (path / "state.json").exists():
        return None
    progress = json.loads((path / "state.json").read_text())
    tensors = load_file(str(path / "state.safetensors"))
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")}, strict=False)
    dev = next(model.parameters()).device
    for n, p in model.named_parameters():
        moments = {
            k.rsplit(".", 1)[1]: v.to(dev)
            for k, v in tensors.items()
            if k.startswith(f"opt.{n}.") and k.count(".") == n.count(".") + 2
        }
        if moments:
            opt.state[p] = {"step": torch.tensor(progress.get("opt_step", progress["step"])), **moments}
    return progress
