"""A rotary model's query and key before the rotation, and the rotation itself.

Rotary position embedding (RoPE; Su et al. 2021, "RoFormer") turns each pair of dimensions
(d, d + r/2) of a head's q and k by the angle θ_d(p) = p · ω_d of the token's position p, with
ω_d = base^(-2d/r) before any rescaling (llama3, yarn and longrope change ω and may scale the result);
r is the rotated width, less than the head's s where only part of it turns (Phi-3's
``partial_rotary_factor``). This "rotate-half" pairing is the one the Hugging Face families use.
Since both sides turn, q·k depends on the two positions only through their difference.

:func:`before_rotation` rebuilds q and k from a layer's input hidden states, independently of the traced
pass: the pre-attention norm where the layer has one (OLMo2 normalises after attention instead), the q/k
projections (Phi-3's fused ``qkv_proj``), and the family's q/k norm — per head in Qwen3 and Gemma 3, over
all heads together in OLMo2. :func:`angles` asks the model's own rotary embedding for the angles at
every position; :func:`rotate` turns a vector by them.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True, eq=False)
class Unrotated:
    """One layer's q and k for every position, as they are before the rotation."""

    x: torch.Tensor  # (T, dim) what the projections read
    query: torch.Tensor  # (heads, T, s)
    key: torch.Tensor  # (kv_heads, T, s)
    source: str  # what ``x`` is, in words
    norm: str | None  # the family's q/k normalisation, in words (None: it has none)


def _layer(model: torch.nn.Module, layer: int):
    layers = getattr(model.base_model, "layers", None)
    return None if layers is None else layers[layer]


def before_rotation(model: torch.nn.Module, layer: int, hidden: torch.Tensor) -> Unrotated | None:
    """q and k of ``layer`` from its input ``hidden`` ``(T, dim)``; None for a layout this does not know."""
    block = _layer(model, layer)
    attn = getattr(block, "self_attn", None)
    if attn is None:
        return None
    cfg = model.config
    H, KV, s = cfg.num_attention_heads, cfg.num_key_value_heads, attn.head_dim
    T = hidden.shape[0]
    pre = getattr(block, "input_layernorm", None)
    with torch.no_grad():
        x = pre(hidden) if pre is not None else hidden
        if hasattr(attn, "qkv_proj"):  # Phi-3: one projection, queries then keys then values
            qkv = attn.qkv_proj(x)
            q, k = qkv[:, : H * s], qkv[:, H * s : (H + KV) * s]
        elif hasattr(attn, "q_proj") and hasattr(attn, "k_proj"):
            q, k = attn.q_proj(x), attn.k_proj(x)
        else:
            return None
        q_norm, k_norm = getattr(attn, "q_norm", None), getattr(attn, "k_norm", None)
        norm = None
        whole = q_norm is not None and k_norm is not None and q_norm.weight.numel() == H * s != s
        if whole:  # OLMo2: one RMS norm over every head's numbers at once
            q, k = q_norm(q), k_norm(k)
            norm = (
                f"q and k are RMS-normalised over all heads together (q_norm over {H} × {s} numbers, k_norm "
                f"over {KV} × {s}) before they are split into heads and rotated"
            )
        q, k = q.view(T, H, s).transpose(0, 1), k.view(T, KV, s).transpose(0, 1)
        if q_norm is not None and k_norm is not None and not whole:  # Qwen3, Gemma 3: each head on its own
            q, k = q_norm(q), k_norm(k)
            norm = f"q and k are RMS-normalised per head (q_norm and k_norm over each head's {s} numbers) before the rotation"
    source = f"layer {layer}'s input hidden states" + (" after input_layernorm" if pre is not None else "")
    return Unrotated(x, q, k, source, norm)


def rotates(model: torch.nn.Module, layer: int) -> bool:
    """Whether ``layer`` turns q and k at all (SmolLM3 leaves the rotation out of some layers: NoPE)."""
    attn = getattr(_layer(model, layer), "self_attn", None)
    return bool(getattr(attn, "use_rope", True)) and getattr(model.base_model, "rotary_emb", None) is not None


def angles(model: torch.nn.Module, layer: int, x: torch.Tensor) -> tuple[np.ndarray, float] | None:
    """``(T, r/2)`` angles in radians (mod 2π) for the positions 0..T-1 of ``x`` ``(T, dim)`` and the
    factor the rotation scales by, from the model's own rotary embedding (for ``layer``'s kind where
    local and global layers differ, as in Gemma 3); None where cos and sin do not pair dimensions
    (d, d + r/2)."""
    rotary = model.base_model.rotary_emb
    positions = torch.arange(x.shape[0], device=x.device)[None]
    extra = ()
    if "layer_type" in inspect.signature(rotary.forward).parameters:
        extra = (model.config.layer_types[layer],)
    with torch.no_grad():
        cos, sin = (t[0].to("cpu", torch.float64).numpy() for t in rotary(x[None], positions, *extra))
    half = cos.shape[-1] // 2
    if not (np.allclose(cos[:, :half], cos[:, half:]) and np.allclose(sin[:, :half], sin[:, half:])):
        return None
    return np.arctan2(sin[:, :half], cos[:, :half]), float(np.hypot(cos[0, 0], sin[0, 0]))


def rotate(x: np.ndarray, theta: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """``x`` ``(s,)`` with each pair (d, d + r/2), r = 2·len(theta), turned by theta[d] and scaled by
    ``scale``; dimensions from r on pass unchanged."""
    x = np.asarray(x, dtype=np.float64)
    half = len(theta)
    a, b = x[:half], x[half : 2 * half]
    c, s = np.cos(theta), np.sin(theta)
    return np.concatenate([scale * (a * c - b * s), scale * (b * c + a * s), x[2 * half :]])
