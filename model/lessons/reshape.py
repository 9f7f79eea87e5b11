"""Every step of the batched multi-head reshape (Peter Bloem's "Transformers from scratch"), recorded
for display and checked against a per-head loop and the module's own ``forward``: the Reshape page's
lesson.

All randomness comes from local ``torch.Generator``s: the global RNG, which the app shares between
sessions, is never touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from model.lessons.hand import embed_tokens
from model.nets.attention import MultiHeadAttention


def input_tensor(b: int, t: int, k: int, *, seed: int = 0, tokens: list[str] | None = None) -> Tensor:
    """A ``(b, t, k)`` input: standard normal values, or with ``tokens`` their seeded embeddings
    (the walk-through's table) repeated over the batch."""
    g = torch.Generator().manual_seed(seed)
    if tokens:
        _, _, x = embed_tokens(list(tokens), k, g)
        return x.unsqueeze(0).expand(b, -1, -1).contiguous()
    return torch.randn(b, t, k, generator=g)


@dataclass(frozen=True, eq=False)
class Step:
    """One named stage of the batched multi-head computation.

    ``dims`` names each axis (``"b·h"`` for heads folded into the batch); ``head_of`` has the
    tensor's shape and says which head each element belongs to (-1: no single head), obtained by
    pushing a tensor of head indices through the same view/transpose/fold operations.
    ``others`` holds the keys and values where queries, keys and values travel side by side.
    """

    name: str
    shape: tuple[int, ...]
    dims: tuple[str, ...]
    tensor: Tensor
    head_of: Tensor
    note: str
    others: dict[str, Tensor] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class ReshapeResult:
    steps: list[Step]
    heads: int
    head_dim: int
    wide: bool
    split_scale: bool
    batched: Tensor  # (b, t, k): the last step
    loop: Tensor  # (b, t, k): the same computed head by head in Python
    module_out: Tensor  # (b, t, k): MultiHeadAttention.forward
    loop_diff: float  # max |loop - batched|
    module_diff: float  # max |module_out - batched|
    scaling_diff: float  # max |q·k/√s - (q/s^¼)·(k/s^¼)|
    params: dict[str, int | None]  # {"narrow": ..., "wide": ...}; narrow is None when k % h


def parameter_count(k: int, heads: int, *, wide: bool, bias: bool = False) -> int:
    """Parameters of ``MultiHeadAttention(k, heads)``: 4k² narrow, 4hk² wide (plus biases)."""
    with torch.device("meta"):  # no memory, no random draws
        return sum(p.numel() for p in MultiHeadAttention(k, heads, wide=wide, bias=bias).parameters())


def seeded_attention(
    k: int, heads: int, *, wide: bool = False, split_scale: bool = False, bias: bool = False, seed: int = 0
) -> MultiHeadAttention:
    """A ``MultiHeadAttention`` whose weights come from ``seed`` (nn.Linear's uniform ±1/√fan_in)."""
    if heads < 1 or k < 1:
        raise ValueError(f"width k ({k}) and heads h ({heads}) must be at least 1")
    if not wide and k % heads:
        raise ValueError(
            f"narrow heads split the width k ({k}) into h ({heads}) equal slices: choose k divisible by h, "
            "or switch to wide heads"
        )
    with torch.device("meta"):  # build without drawing from the global RNG, then fill from our own
        mha = MultiHeadAttention(k, heads, wide=wide, split_scale=split_scale, bias=bias)
    mha = mha.to_empty(device="cpu")
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in (mha.to_q, mha.to_k, mha.to_v, mha.unify):
            bound = 1 / math.sqrt(layer.in_features)
            for p in layer.parameters():
                p.uniform_(-bound, bound, generator=g)
    return mha.eval()


NOTES = {  # what each step does, shown under its figure
    "input x": "b sequences of t vectors, each k numbers wide.",
    "project to queries, keys, values": "One linear layer per role computes all heads at once: "
    "columns {s}·i to {s}·(i+1)-1 belong to head i.",
    "view": "Only the labels change: the last axis is read as h heads × s numbers.",
    "transpose": "Swap tokens and heads, so each head's t × s block is together.",
    "fold heads into batch": "Copy into contiguous memory and merge b and h: item i is batch i // {h}, head i % {h}.",
    "scale q and k": "Divide queries and keys each by s^(1/4) = {quarter:.4f} before the dot product (Bloem's wide heads, a Keras self-attention layer).",
    "bmm: scores": "One matrix product per (batch, head): row = query token, column = key token.",
    "scale": "Divide by √s = {root:.4f} so that softmax is not too peaked.",
    "softmax": "Each row becomes positive weights that sum to 1.",
    "bmm with values": "Each query's output is the weighted sum of the value rows.",
    "unfold": "Split the b·h axis back into batch and heads.",
    "transpose back": "Tokens first again; the heads sit side by side for each token.",
    "concatenate heads": "Merge the last two axes: each token's head outputs, end to end.",
    "combine the heads": "A last linear layer mixes all heads back to width k: every output number depends on every head.",
}


@torch.no_grad()
def reshape_steps(
    x: Tensor, heads: int, *, wide: bool = False, split_scale: bool = False, seed: int = 0, bias: bool = False
) -> ReshapeResult:
    """Run seeded multi-head self-attention on ``x`` ``(b, t, k)`` and record every reshape step.

    The batched path follows Bloem's "Transformers from scratch": project, view, transpose, fold heads
    into the batch, two ``bmm``s, unfold, transpose back, concatenate, unify. It is checked against a
    per-head Python loop and against the module's own ``forward``.
    """
    if x.dim() != 3:
        raise ValueError(f"x must be (b, t, k); got shape {tuple(x.shape)}")
    b, t, k = x.shape
    mha = seeded_attention(k, heads, wide=wide, split_scale=split_scale, bias=bias, seed=seed)
    h, s = heads, mha.head_dim
    x = x.float()
    steps: list[Step] = []
    numbers = dict(s=s, h=h, quarter=s**0.25, root=math.sqrt(s))

    def add(name: str, dims: str, tensor: Tensor, head_of: Tensor, others: dict | None = None) -> None:
        note = NOTES[name].format(**numbers)
        steps.append(Step(name, tuple(tensor.shape), tuple(dims.split()), tensor, head_of, note, others or {}))

    def add_qkv(name: str, dims: str, qkv: dict[str, Tensor], head_of: Tensor) -> None:
        add(name, dims, qkv["queries"], head_of, {"keys": qkv["keys"], "values": qkv["values"]})

    def each(op, qkv: dict[str, Tensor], head_of: Tensor) -> tuple[dict[str, Tensor], Tensor]:
        # the head labels go through exactly the same reshapes as the data
        return {role: op(z) for role, z in qkv.items()}, op(head_of)

    add("input x", "b t k", x, torch.full(x.shape, -1))
    qkv = {"queries": mha.to_q(x), "keys": mha.to_k(x), "values": mha.to_v(x)}  # (b, t, h*s)
    label = torch.arange(h).repeat_interleave(s).expand(b, t, h * s)  # the head of every column
    add_qkv("project to queries, keys, values", "b t h·s", qkv, label)
    qkv, label = each(lambda z: z.view(b, t, h, s), qkv, label)
    add_qkv("view", "b t h s", qkv, label)
    qkv, label = each(lambda z: z.transpose(1, 2), qkv, label)
    add_qkv("transpose", "b h t s", qkv, label)
    qkv, label = each(lambda z: z.contiguous().view(b * h, t, s), qkv, label)
    add_qkv("fold heads into batch", "b·h t s", qkv, label)
    score_label = label[:, :, :1].expand(b * h, t, t)
    if split_scale:
        qkv = {**qkv, "queries": qkv["queries"] / s**0.25, "keys": qkv["keys"] / s**0.25}
        add_qkv("scale q and k", "b·h t s", qkv, label)
    scores = torch.bmm(qkv["queries"], qkv["keys"].transpose(1, 2))  # (b*h, t, t)
    add("bmm: scores", "b·h t t", scores, score_label)
    if not split_scale:
        scores = scores / math.sqrt(s)
        add("scale", "b·h t t", scores, score_label)
    weights = torch.softmax(scores, dim=2)
    add("softmax", "b·h t t", weights, score_label)
    out = torch.bmm(weights, qkv["values"])  # (b*h, t, s)
    add("bmm with values", "b·h t s", out, label)
    out, label = out.view(b, h, t, s), label.view(b, h, t, s)
    add("unfold", "b h t s", out, label)
    out, label = out.transpose(1, 2), label.transpose(1, 2)
    add("transpose back", "b t h s", out, label)
    out, label = out.contiguous().view(b, t, h * s), label.contiguous().view(b, t, h * s)
    add("concatenate heads", "b t h·s", out, label)
    y = mha.unify(out)
    add("combine the heads", "b t k", y, torch.full(y.shape, -1))

    loop = _per_head_loop(mha, x)
    module_out, _ = mha(x, need_weights=True)
    q4, k4 = mha.to_q(x).view(b, t, h, s), mha.to_k(x).view(b, t, h, s)
    dot = torch.einsum("bqhs,bkhs->bhqk", q4, k4) / math.sqrt(s)
    split = torch.einsum("bqhs,bkhs->bhqk", q4 / s**0.25, k4 / s**0.25)
    return ReshapeResult(
        steps=steps,
        heads=h,
        head_dim=s,
        wide=wide,
        split_scale=split_scale,
        batched=y,
        loop=loop,
        module_out=module_out,
        loop_diff=(loop - y).abs().max().item(),
        module_diff=(module_out - y).abs().max().item(),
        scaling_diff=(dot - split).abs().max().item(),
        params={
            "narrow": parameter_count(k, h, wide=False, bias=bias) if k % h == 0 else None,
            "wide": parameter_count(k, h, wide=True, bias=bias),
        },
    )


def _per_head_loop(mha: MultiHeadAttention, x: Tensor) -> Tensor:
    """The same attention with plain Python loops over batch items and heads: an independent check."""
    s = mha.head_dim
    outputs = []
    for item in x:  # (t, k)
        q, k, v = mha.to_q(item), mha.to_k(item), mha.to_v(item)  # (t, h*s)
        per_head = []
        for i in range(mha.heads):
            cols = slice(i * s, (i + 1) * s)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(s)
            per_head.append(torch.softmax(scores, dim=-1) @ v[:, cols])
        outputs.append(mha.unify(torch.cat(per_head, dim=-1)))
    return torch.stack(outputs)
