"""Where a run starts: weights loaded from another run, positional tables redrawn, parameters frozen, and the
optimiser's groups (weight decay, and learning rates by depth)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file
from torch import nn


def freeze(model: nn.Module, prefixes: str) -> list[str]:
    """Keep the parameters whose names start with one of the comma-separated ``prefixes`` as they are
    (no gradient, so AdamW leaves them): the lower layers of a pretrained model kept, as in feature-based
    transfer (Peters et al. 2019 compare it with fine-tuning them). Returns the frozen names; a prefix
    that names no parameter raises."""
    wanted = [p.strip() for p in prefixes.split(",") if p.strip()]
    names = [n for n, _ in model.named_parameters()]
    if unknown := [w for w in wanted if not any(n.startswith(w) for n in names)]:
        raise ValueError(f"freeze: no parameter name starts with {', '.join(map(repr, unknown))}")
    frozen = [n for n in names if n.startswith(tuple(wanted))]  # no prefix: nothing
    for n, p in model.named_parameters():
        if n in frozen:
            p.requires_grad_(False)
    return frozen


def param_groups(model: nn.Module, weight_decay: float, layer_decay: float = 1.0) -> list[dict[str, Any]]:
    """AdamW's groups: matrices decay by ``weight_decay``, vectors not; and, with ``layer_decay`` below 1,
    discriminative rates (Howard & Ruder 2018; Clark et al. 2020's layer-wise decay): the parameters
    above the last block (final norm, output head) keep the full rate (``lr_scale`` 1), block i of n
    learns at ``layer_decay ** (n - i)`` times it, and what comes before the blocks (embeddings) at
    ``layer_decay ** (n + 1)``. It scales how far each depth moves from its starting weights; every
    parameter of a depth, attention or not, gets the same rate."""
    named = [(re.match(r"(?:.*\.)?blocks\.(\d+)\.", n), p) for n, p in model.named_parameters()]
    n_blocks = max((int(m.group(1)) + 1 for m, _ in named if m), default=0)
    if layer_decay != 1.0 and not n_blocks:
        raise ValueError("layer_decay needs a model whose layers are named blocks.<i>")
    seen_block = False
    groups: dict[tuple[float, float], list[nn.Parameter]] = {}
    for m, p in named:
        if m:
            seen_block, depth = True, int(m.group(1)) + 1
        else:  # before the first block's parameters: embeddings; after: norm and head
            depth = n_blocks + 1 if seen_block else 0
        scale = layer_decay ** (n_blocks + 1 - depth)
        groups.setdefault((scale, weight_decay if p.dim() >= 2 else 0.0), []).append(p)
    return [{"params": ps, "weight_decay": wd, "lr_scale": sc} for (sc, wd), ps in groups.items()]


def positions_at_word_scale(model: nn.Module) -> list[str]:
    """Redraw every learned positional table (``*pos_emb``, ``*_pos``) from N(0, s²), where s is the
    entry size of the word embeddings as ``embed`` adds them (``tok_emb`` times √width). By default
    positions start √width times smaller than the words they are added to, and a head can hardly
    read them; this changes where training starts, not the loss or the attention. Returns the names."""
    tables = {n: m for n, m in model.named_modules() if isinstance(m, nn.Embedding)}
    words = [m for n, m in tables.items() if n.endswith("_emb") and not n.endswith("pos_emb")]
    positions = [n for n in tables if n.endswith("pos_emb") or n.endswith("_pos")]
    if not words or not positions:
        raise ValueError("this model has no word and positional embedding tables to match")
    scale = float(words[0].weight.detach().std()) * math.sqrt(words[0].embedding_dim)
    with torch.no_grad():
        for n in positions:
            tables[n].weight.normal_(0.0, scale)
    return positions


def start_from(model: nn.Module, source: str | Path) -> None:
    """Load the weights in ``source`` that ``model`` has (same name, same shape); a pretrained encoder
    starts a classifier this way, its new head left as initialised. Raises if nothing matches."""
    path = Path(source)
    path = path / "model.safetensors" if path.is_dir() else path
    own = model.state_dict()
    found = {k: v for k, v in load_file(str(path)).items() if k in own and own[k].shape == v.shape}
    if not found:
        raise ValueError(f"{path}: no weight matches this model's names and shapes")
    model.load_state_dict(found, strict=False)
