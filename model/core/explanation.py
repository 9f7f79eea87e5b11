"""One attention weight, step by step: the record every model family fills, and the steps themselves.

A family differs only in how it obtains one head's tensors for one row: our models through a
:class:`~model.nets.attention.Probe` on their own forward pass (:mod:`model.analysis.explain`), a
Hugging Face model from its layer's projections or from what its attention function received
(:mod:`model.hub.explain`). Both hand the query vector, every key and value vector, the row's mask and
the scale to :func:`row_steps`, which rebuilds the cell in float64 — dot product, scaling, soft-capping
where the model has it, mask, softmax, weighted sum — and both return one
:class:`Explanation` that the figures (:mod:`viz.explain`) and the panel (``pages/shared/explain.py``) read.
Where a family cannot recompute a weight it raises :class:`NotExplained` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


class NotExplained(ValueError):
    """This weight cannot be recomputed step by step here (the reason is the message); the map still
    shows the model's own weight."""


@dataclass(frozen=True, eq=False)
class Explanation:
    """One attention weight, step by step. Vectors are float64 numpy arrays; ``s`` is the head's width."""

    model: str  # "classifier", "generator", "translator", or the Hugging Face id or folder
    kind: str  # "encoder", "decoder" or "cross"
    layer: int
    head: int
    query: int  # query position i
    key: int  # key position j
    query_tokens: list[str]  # every query position, as the model read it
    key_tokens: list[str]
    query_from: str  # where the query vector came from, in words
    key_from: str
    dim: int  # model width
    heads: int
    head_dim: int  # s
    query_input: np.ndarray  # (dim,) the hidden state that W_q turned into q_i
    key_input: np.ndarray | None  # (dim,) the hidden state that W_k turned into k_j (None: the same sequence)
    q: np.ndarray  # (s,) q_i: this head's slice of W_q · query_input (+ bias)
    k: np.ndarray  # (s,) k_j
    product: np.ndarray  # (s,) q_i * k_j, elementwise
    raw_score: float  # q_i · k_j, the sum of ``product``
    scale: float  # the factor on the raw score (1 / √s for most models)
    scale_text: str  # how the model scales, in words
    score: float  # raw_score * scale
    raw_scores: np.ndarray  # (keys,) q_i · k for every key of the row
    mask: np.ndarray  # (keys,) bool: True where this query may attend
    mask_reasons: list[str]  # per key: "" (visible), "future" (causal), "padding", "masked"
    scores: np.ndarray  # (keys,) scaled scores, -inf where masked: what the softmax sees
    weights: np.ndarray  # (keys,) the softmax of ``scores``
    weight: float  # weights[key], recomputed here
    map_weight: float  # the same cell of the model's own attention map (float32)
    values: np.ndarray  # (keys, s) this head's value vectors
    output: np.ndarray  # (s,) head_factor * weights @ values: this head's output for the query
    head_factor: float = 1.0  # the head mask's factor on this head's output (1 unless switched off)
    wide: bool = False  # wide heads: every head has the model's full width
    split_scale: bool = False  # q and k each divided by s^¼ instead of the score by √s
    model_output: np.ndarray | None = None  # (s,) the module's own per-head output row, where it is traced
    # what rotary, grouped-query models add (None where a model has no such step)
    kv_head: int | None = None  # the key/value head this query head reads (grouped-query attention)
    kv_heads: int | None = None  # how many key/value heads the layer has (``heads`` share them evenly)
    q_unrotated: np.ndarray | None = None  # (s,) q_i before the rotary rotation
    k_unrotated: np.ndarray | None = None  # (s,) k_j before the rotary rotation
    query_angles: np.ndarray | None = None  # (r/2,) radians (mod 2π) turning pair (d, d + r/2) of q_i
    key_angles: np.ndarray | None = None  # (r/2,) the same at the key's position
    rotary_scale: float = 1.0  # the factor the rotation also scales by (1 but for yarn/longrope)
    norm: str | None = None  # the per-head q/k normalisation before the rotation, in words
    softcap: float | None = None  # scores become softcap * tanh(score / softcap) before the softmax
    sliding_window: int | None = None  # keys this many positions back or more are hidden
    # "why this weight": the score split into the token and position parts of the layer-0 input (scaled terms
    # summing to ``score``: token·token, token·position, position·token, position·position, bias), where the
    # model adds absolute positions to its embeddings; None with ``position_note`` saying why not
    position_split: dict[str, float] | None = None
    position_note: str = ""

    def deciding_dimensions(self, n: int = 5) -> list[tuple[int, float, float]]:
        """The ``n`` dimensions of ``product`` that move the raw score most, largest |q_d k_d| first, as
        (dimension, q_d · k_d, that term's share of Σ_d |q_d k_d|)."""
        size = np.abs(self.product)
        total = size.sum()
        order = np.argsort(-size, kind="stable")[:n]
        return [(int(d), float(self.product[d]), float(size[d] / total) if total > 0 else 0.0) for d in order]

    @property
    def query_token(self) -> str:
        return self.query_tokens[self.query]

    @property
    def key_token(self) -> str:
        return self.key_tokens[self.key]

    @property
    def masked(self) -> bool:
        """The model could not attend from this query to this key (its weight is 0)."""
        return not self.mask[self.key]

    @property
    def share(self) -> np.ndarray:
        """``(s,)`` this key's part of ``output``: its weight times its value vector."""
        return self.head_factor * self.weight * self.values[self.key]

    @property
    def concat_shape(self) -> tuple[int, int]:
        """Every head's output side by side for all queries: ``(queries, heads * s)``."""
        return len(self.query_tokens), self.heads * self.head_dim

    @property
    def unify_shape(self) -> tuple[int, int]:
        """The output projection: ``heads * s`` numbers in, ``dim`` out."""
        return self.heads * self.head_dim, self.dim


def row_steps(q, K, V, mask, scale: float, key: int, head_factor: float = 1.0, softcap: float | None = None) -> dict:
    """The numbers of one cell rebuilt in float64: ``q`` ``(s,)``, ``K`` and ``V`` ``(keys, s)``, ``mask``
    ``(keys,)`` bool. With ``softcap`` the softmax sees softcap · tanh(score / softcap) (``score`` stays
    the uncapped one). A row with no visible key attends to nothing (weights 0: the model's rule, not NaN)."""
    q, K, V = (np.asarray(a, dtype=np.float64) for a in (q, K, V))
    mask = np.asarray(mask, dtype=bool)
    raw = K @ q
    scaled = raw * scale if softcap is None else softcap * np.tanh(raw * scale / softcap)
    scores = np.where(mask, scaled, -np.inf)
    weights = np.zeros_like(raw)
    if mask.any():
        e = np.exp(scores - scores[mask].max())
        weights = e / e.sum()
    return {
        "q": q,
        "k": K[key],
        "product": q * K[key],
        "raw_score": float(raw[key]),
        "scale": float(scale),
        "score": float(raw[key] * scale),
        "raw_scores": raw,
        "mask": mask,
        "scores": scores,
        "weights": weights,
        "weight": float(weights[key]),
        "values": V,
        "output": head_factor * (weights @ V),
        "head_factor": float(head_factor),
    }


def mask_reasons(mask, query: int, *, causal: bool, padding=None, window: int | None = None) -> list[str]:
    """Why each key of a row is hidden: "future" (a causal mask), "outside the sliding window" (a key
    ``window`` or more positions back), "padding", "masked" (another reason), or "" where it is visible.
    ``padding`` flags the padding keys, where the model has any."""
    reasons = []
    for j, visible in enumerate(np.asarray(mask, dtype=bool)):
        if visible:
            reasons.append("")
        elif causal and j > query:
            reasons.append("future")
        elif window is not None and query - j >= window:
            reasons.append("outside the sliding window")
        elif padding is not None and padding[j]:
            reasons.append("padding")
        else:
            reasons.append("masked")
    return reasons


def scale_text(s: int, split_scale: bool = False, scale: float | None = None, extra: str = "") -> str:
    """How scores are scaled, in words, with the numbers filled in. ``scale`` other than 1/√s (and
    ``extra``, the reason) is said as it is."""
    root, quarter = math.sqrt(s), s**0.25
    if split_scale:
        return (
            f"q and k are each divided by s^¼ = {s}^¼ = {quarter:.4g} before the product: "
            f"together ÷ {quarter:.4g}² = ÷ √{s} = ÷ {root:.4g}"
        )
    if scale is not None and not math.isclose(scale, 1 / root, rel_tol=1e-6):
        return f"the score is multiplied by {scale:.4g}{extra}"
    return f"the score is divided by √s = √{s} = {root:.4g}{extra}"


SPLIT_TERMS = ("token·token", "token·position", "position·token", "position·position", "bias")
NOT_ADDITIVE = (
    "rotary position turns q and k by angles that depend on their positions, so the score does not split "
    "into token and position terms; the rotation is shown instead"
)


def position_split(
    token_q, position_q, token_k, position_k, w_q, b_q, w_k, b_k, scale: float, norm=None
) -> dict[str, float]:
    """A layer-0 score q_i · k_j · scale split by where its input came from, where that input is a token
    embedding plus an absolute position embedding (``token_*``, ``position_*``: ``(dim,)``) and q = W_q x + b_q
    (``w_q`` ``(s, dim)``, one head's rows), likewise k. ``norm`` = (γ, β, ε) is a LayerNorm the input passes
    first: it subtracts the mean and divides token and position by the same per-position σ, so
    LN(t + p) = γ(t − t̄)/σ + γ(p − p̄)/σ + β stays a sum of a token part, a position part and a constant.
    With q = q_t + q_p + q_b and k = k_t + k_p + k_b the terms are q_t·k_t, q_t·k_p, q_p·k_t, q_p·k_p and
    every product with a bias or β part; together they are the score exactly."""
    as64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731

    def parts(t, p, w, b):
        t, p, w = as64(t), as64(p), as64(w)
        const = np.zeros(w.shape[1])
        if norm is not None:
            gamma, beta, eps = as64(norm[0]), as64(norm[1]), float(norm[2])
            sigma = np.sqrt((t + p).var() + eps)
            t, p, const = gamma * (t - t.mean()) / sigma, gamma * (p - p.mean()) / sigma, beta
        bias = w @ const + (0.0 if b is None else as64(b))
        return w @ t, w @ p, bias

    qt, qp, qb = parts(token_q, position_q, w_q, b_q)
    kt, kp, kb = parts(token_k, position_k, w_k, b_k)
    terms = (qt @ kt, qt @ kp, qp @ kt, qp @ kp, qb @ (kt + kp + kb) + (qt + qp) @ kb)
    return {name: float(v * scale) for name, v in zip(SPLIT_TERMS, terms)}
