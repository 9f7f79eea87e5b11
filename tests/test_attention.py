"""Attention against independent references: PyTorch's own kernel and module, and a per-head loop."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from model.nets.attention import MultiHeadAttention, causal_mask, padding_mask, scaled_dot_product_attention

ATOL = 1e-5
PAD = 0

# (B, H, Tq, Tk, s): square and rectangular (cross-attention) score matrices
SDPA_SHAPES = [(1, 1, 1, 1, 4), (2, 3, 5, 5, 8), (3, 2, 4, 7, 16), (2, 4, 6, 3, 5)]
# (B, T, S, dim, heads): batch, query length, key length, model width, heads
MHA_SHAPES = [(1, 1, 1, 4, 1), (2, 5, 5, 8, 2), (3, 4, 7, 12, 3), (2, 6, 3, 16, 4)]


def padded_ids(B: int, T: int, vocab: int = 9) -> Tensor:
    """Random ids with a different amount of trailing padding per row; position 0 is never padding."""
    ids = torch.randint(1, vocab, (B, T))
    for b in range(B):
        ids[b, T - (b % T) :] = PAD  # row b ends in b % T pads
    return ids


def weights_via_torch(q: Tensor, k: Tensor, mask: Tensor | None) -> Tensor:
    """Attention weights from PyTorch's kernel: attending over an identity matrix returns them."""
    eye = torch.eye(k.size(-2)).expand(*k.shape[:-1], k.size(-2))
    return F.scaled_dot_product_attention(q, k, eye, attn_mask=mask)


# ---------------------------------------------------------------- scaled dot-product attention


@pytest.mark.parametrize("B,H,Tq,Tk,s", SDPA_SHAPES)
@pytest.mark.parametrize("masking", ["none", "causal", "padding", "padding+causal"])
def test_sdpa_matches_torch(B: int, H: int, Tq: int, Tk: int, s: int, masking: str) -> None:
    q, k = torch.randn(B, H, Tq, s), torch.randn(B, H, Tk, s)
    v = torch.randn(B, H, Tk, s + 3)  # values may have another width
    mask = None
    if "causal" in masking:
        mask = causal_mask(Tq, Tk)
    if "padding" in masking:
        pad = padding_mask(padded_ids(B, Tk), PAD)
        mask = pad if mask is None else mask & pad
    # a query that sees no key (causal with Tq > Tk) is NaN in PyTorch, zero here: compare live rows
    live = torch.ones(B, H, Tq, dtype=torch.bool) if mask is None else mask.expand(B, H, Tq, Tk).any(-1)

    out, weights = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    assert out.shape == (B, H, Tq, s + 3) and weights.shape == (B, H, Tq, Tk)
    torch.testing.assert_close(out[live], expected[live], atol=ATOL, rtol=0)
    torch.testing.assert_close(weights[live], weights_via_torch(q, k, mask)[live], atol=ATOL, rtol=0)
    torch.testing.assert_close(weights.sum(-1), live.float(), atol=ATOL, rtol=0)
    assert (out[~live] == 0).all()
    if mask is not None:
        assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


@pytest.mark.parametrize("T", [1, 4, 9])
def test_causal_mask_matches_is_causal(T: int) -> None:
    q, k, v = torch.randn(3, 2, T, 8).unbind(0)
    out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=ATOL, rtol=0)
    assert (weights.triu(1) == 0).all()


def test_causal_mask_aligns_at_the_end() -> None:
    # 2 new queries over 5 keys (a cached prefix of 3): the last query sees everything
    expected = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(2, 5), expected)


@pytest.mark.parametrize("B,H,Tq,Tk,s", SDPA_SHAPES)
@pytest.mark.parametrize("with_mask", [False, True])
def test_split_scale_is_the_same_attention(B: int, H: int, Tq: int, Tk: int, s: int, with_mask: bool) -> None:
    q, k, v = torch.randn(B, H, Tq, s), torch.randn(B, H, Tk, s), torch.randn(B, H, Tk, s)
    mask = causal_mask(Tq, Tk) if with_mask else None
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    out_split, weights_split = scaled_dot_product_attention(q, k, v, mask, split_scale=True)
    torch.testing.assert_close(out_split, out, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights_split, weights, atol=ATOL, rtol=0)


def test_fully_masked_row_attends_to_nothing() -> None:
    q, k, v = torch.randn(1, 1, 3, 4), torch.randn(1, 1, 5, 4), torch.randn(1, 1, 5, 4)
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1] = False
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert not out.isnan().any() and not weights.isnan().any()
    assert (out[0, 0, 1] == 0).all() and (weights[0, 0, 1] == 0).all()
    torch.testing.assert_close(weights[0, 0, [0, 2]].sum(-1), torch.ones(2), atol=ATOL, rtol=0)


# ------------------------------------------------------------- against torch.nn.MultiheadAttention


def copy_torch_weights(ref: nn.MultiheadAttention, ours: MultiHeadAttention) -> None:
    """in_proj (3 stacked blocks) -> to_q, to_k, to_v; out_proj -> unify."""
    wq, wk, wv = ref.in_proj_weight.detach().chunk(3)
    bq, bk, bv = ref.in_proj_bias.detach().chunk(3)
    with torch.no_grad():
        for lin, w, b in ((ours.to_q, wq, bq), (ours.to_k, wk, bk), (ours.to_v, wv, bv)):
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        ours.unify.weight.copy_(ref.out_proj.weight)
        ours.unify.bias.copy_(ref.out_proj.bias)


def module_pair(dim: int, heads: int) -> tuple[nn.MultiheadAttention, MultiHeadAttention]:
    ref = nn.MultiheadAttention(dim, heads, batch_first=True)
    with torch.no_grad():
        for p in ref.parameters():  # PyTorch starts biases at zero, which would hide bias bugs
            p.normal_(0, 0.3)
    ours = MultiHeadAttention(dim, heads)
    copy_torch_weights(ref, ours)
    return ref.eval(), ours.eval()


@pytest.mark.parametrize("B,T,S,dim,heads", MHA_SHAPES)
@pytest.mark.parametrize("kind", ["self", "causal", "cross", "cross+padding", "self+padding"])
def test_mha_matches_torch_multihead_attention(B: int, T: int, S: int, dim: int, heads: int, kind: str) -> None:
    ref, ours = module_pair(dim, heads)
    x = torch.randn(B, T, dim)
    context = torch.randn(B, S, dim) if "cross" in kind else x
    Tk = context.size(1)
    key_padding = attn_mask = mask = None
    if "padding" in kind:
        key_padding = padded_ids(B, Tk) == PAD  # PyTorch: True = ignore this key
        mask = ~key_padding[:, None, None, :]  # ours: True = may attend
    if kind == "causal":
        mask = causal_mask(T)
        attn_mask = ~mask

    expected, expected_w = ref(
        x,
        context,
        context,
        key_padding_mask=key_padding,
        attn_mask=attn_mask,
        need_weights=True,
        average_attn_weights=False,
    )
    out, weights = ours(x, None if context is x else context, mask, need_weights=True)

    assert out.shape == (B, T, dim) and weights.shape == (B, heads, T, Tk)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    for h in range(heads):
        torch.testing.assert_close(weights[:, h], expected_w[:, h], atol=ATOL, rtol=0)


# ------------------------------------------------------------------------- per-head loop reference


def per_head_loop(mha: MultiHeadAttention, x: Tensor, context: Tensor, mask: Tensor | None) -> Tensor:
    """One head at a time with its own rows of W_q, W_k, W_v; concat; unify. No reshapes."""
    s = mha.head_dim
    heads = []
    for h in range(mha.heads):
        rows = slice(h * s, (h + 1) * s)
        q = F.linear(x, mha.to_q.weight[rows], mha.to_q.bias[rows])  # (B, T, s)
        k = F.linear(context, mha.to_k.weight[rows], mha.to_k.bias[rows])
        v = F.linear(context, mha.to_v.weight[rows], mha.to_v.bias[rows])
        scores = q @ k.transpose(1, 2) / math.sqrt(s)  # (B, T, S)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        heads.append(torch.softmax(scores, dim=-1) @ v)
    return mha.unify(torch.cat(heads, dim=-1))


@pytest.mark.parametrize("B,T,S,dim,heads", MHA_SHAPES)
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("split_scale", [False, True])
@pytest.mark.parametrize("kind", ["self", "causal", "cross+padding"])
def test_per_head_loop_equals_batched(
    B: int, T: int, S: int, dim: int, heads: int, wide: bool, split_scale: bool, kind: str
) -> None:
    mha = MultiHeadAttention(dim, heads, wide=wide, split_scale=split_scale).eval()
    x = torch.randn(B, T, dim)
    context = torch.randn(B, S, dim) if "cross" in kind else x
    Tk = context.size(1)
    mask = None  # module form; the loop gets it as (B, T, Tk)
    if kind == "causal":
        mask = causal_mask(T)
    elif "padding" in kind:
        mask = padding_mask(padded_ids(B, Tk), PAD)
    loop_mask = None if mask is None else mask.expand(B, 1, T, Tk)[:, 0]

    with torch.no_grad():
        expected = per_head_loop(mha, x, context, loop_mask)
        for need_weights in (True, False):
            out, _ = mha(x, None if context is x else context, mask, need_weights=need_weights)
            torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)


@pytest.mark.parametrize("dim,heads", [(4, 1), (8, 2), (12, 3), (16, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_counts_and_shapes(dim: int, heads: int, bias: bool) -> None:
    k, h = dim, heads
    narrow = MultiHeadAttention(dim, heads, bias=bias)
    wide = MultiHeadAttention(dim, heads, wide=True, bias=bias)
    count = lambda m: sum(p.numel() for p in m.parameters())
    if bias:
        assert count(narrow) == 4 * (k * k + k)
        assert count(wide) == 3 * (k * h * k + k * h) + k * h * k + k
    else:
        assert count(narrow) == 4 * k * k
        assert count(wide) == 4 * k * h * k
    x = torch.randn(2, 5, dim)
    for mha in (narrow, wide):
        out, weights = mha(x, need_weights=True)
        assert out.shape == (2, 5, dim) and weights.shape == (2, heads, 5, 5)
    assert narrow.head_dim == dim // heads and wide.head_dim == dim


def test_narrow_heads_need_divisible_width() -> None:
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    MultiHeadAttention(10, 3, wide=True)  # wide heads have no such constraint


# ---------------------------------------------------------------- fused path, weights, head mask


@pytest.mark.parametrize("B,T,S,dim,heads", MHA_SHAPES)
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("kind", ["self", "causal", "cross+padding"])
def test_fused_path_equals_weights_path(B: int, T: int, S: int, dim: int, heads: int, wide: bool, kind: str) -> None:
    mha = MultiHeadAttention(dim, heads, wide=wide).eval()
    x = torch.randn(B, T, dim)
    context = torch.randn(B, S, dim) if "cross" in kind else None
    mask = causal_mask(T) if kind == "causal" else None
    if "padding" in kind:
        mask = padding_mask(padded_ids(B, S), PAD)
    with torch.no_grad():
        fused, none = mha(x, context, mask, need_weights=False)
        explicit, weights = mha(x, context, mask, need_weights=True)
    assert none is None
    torch.testing.assert_close(fused, explicit, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, heads, T), atol=ATOL, rtol=0)
    if mask is not None:
        assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


def test_fused_path_fully_masked_row_matches() -> None:
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 3, 8)
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[2] = False
    with torch.no_grad():
        fused, _ = mha(x, mask=mask)
        explicit, _ = mha(x, mask=mask, need_weights=True)
    assert not fused.isnan().any()
    torch.testing.assert_close(fused, explicit, atol=ATOL, rtol=0)


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("need_weights", [False, True])
def test_head_mask(wide: bool, need_weights: bool) -> None:
    heads, dim = 3, 12
    mha = MultiHeadAttention(dim, heads, wide=wide).eval()
    x = torch.randn(2, 5, dim)
    with torch.no_grad():
        base, base_w = mha(x, need_weights=need_weights)
        ones, ones_w = mha(x, need_weights=need_weights, head_mask=torch.ones(heads))
        off, off_w = mha(x, need_weights=need_weights, head_mask=torch.tensor([1.0, 0.0, 1.0]))
        # reference: head 1's slice of the concatenated heads zeroed before unify
        s = mha.head_dim
        mha.unify.weight[:, s : 2 * s] = 0
        expected, _ = mha(x, need_weights=need_weights)
    assert torch.equal(ones, base)
    assert not torch.allclose(off, base, atol=1e-4)
    torch.testing.assert_close(off, expected, atol=ATOL, rtol=0)
    if need_weights:  # switching a head off changes what it passes on, not where it looks
        assert torch.equal(ones_w, base_w) and torch.equal(off_w, base_w)


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("kind", ["self", "cross"])
def test_kept_projection_stack_follows_weight_changes(mode: str, kind: str) -> None:
    """Without gradients the stacked q/k/v weights are kept between calls; any change to a weight (in
    place, as an optimizer step or load_state_dict makes it) must reach the next call."""
    dim, heads = 8, 2
    mha = MultiHeadAttention(dim, heads).eval()
    x, context = torch.randn(2, 4, dim), (torch.randn(2, 6, dim) if kind == "cross" else None)
    no_grad = torch.no_grad if mode == "no_grad" else torch.inference_mode

    def fresh() -> Tensor:  # the same weights in a module that has kept nothing
        other = MultiHeadAttention(dim, heads).eval()
        other.load_state_dict(mha.state_dict())
        with torch.enable_grad():
            return other(x, context)[0].detach()

    with no_grad():
        before = mha(x, context)[0]
    torch.testing.assert_close(before, fresh(), atol=ATOL, rtol=0)
    with torch.no_grad():
        mha.to_k.weight.mul_(3.0)  # in place: the kept stack is now stale
    with no_grad():
        after_step = mha(x, context)[0]
    assert not torch.allclose(after_step, before, atol=1e-4)
    torch.testing.assert_close(after_step, fresh(), atol=ATOL, rtol=0)
    mha.load_state_dict(MultiHeadAttention(dim, heads).state_dict())
    with no_grad():
        torch.testing.assert_close(mha(x, context)[0], fresh(), atol=ATOL, rtol=0)
    assert set(mha.state_dict()) == {f"{p}.{t}" for p in ("to_q", "to_k", "to_v", "unify") for t in ("weight", "bias")}


def test_projection_stack_trains_every_weight() -> None:
    """With gradients on, the stack is built afresh, so q, k and v all receive gradients."""
    mha = MultiHeadAttention(8, 2)
    with torch.no_grad():
        mha(torch.randn(1, 3, 8))  # keeps a stack, which training must not use
    mha(torch.randn(1, 3, 8))[0].sum().backward()
    for p in (mha.to_q, mha.to_k, mha.to_v):
        assert p.weight.grad is not None and p.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("B,T,S,dim,heads", MHA_SHAPES)
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("split_scale", [False, True])
@pytest.mark.parametrize("kind", ["causal", "cross+padding"])
def test_probe_traces_the_module_own_numbers(
    B: int, T: int, S: int, dim: int, heads: int, wide: bool, split_scale: bool, kind: str
) -> None:
    """A probe's trace holds the queries, keys and values the module projected, its scores and weights,
    and per-head outputs that, concatenated and unified, give the module's output; the output itself
    is the same with and without the probe."""
    from model.nets.attention import Probe

    mha = MultiHeadAttention(dim, heads, wide=wide, split_scale=split_scale).eval()
    x = torch.randn(B, T, dim)
    context = torch.randn(B, S, dim) if "cross" in kind else None
    mask = causal_mask(T) if kind == "causal" else padding_mask(padded_ids(B, S), PAD)
    probe = Probe("encoder", 0)
    with torch.no_grad():
        out, weights = mha(x, context, mask, need_weights=True)
        traced, none = mha(x, context, mask, probe=probe)
        t = probe.trace
        source = x if context is None else context
        assert none is None and t.x is x and t.context is source and t.split_scale == split_scale
        torch.testing.assert_close(traced, out, atol=0, rtol=0)
        torch.testing.assert_close(t.weights, weights, atol=0, rtol=0)
        torch.testing.assert_close(t.q, mha.split_heads(mha.to_q(x)), atol=ATOL, rtol=0)
        torch.testing.assert_close(t.k, mha.split_heads(mha.to_k(source)), atol=ATOL, rtol=0)
        torch.testing.assert_close(t.v, mha.split_heads(mha.to_v(source)), atol=ATOL, rtol=0)
        s = mha.head_dim
        torch.testing.assert_close(t.scores, t.q @ t.k.transpose(-2, -1) / math.sqrt(s), atol=ATOL, rtol=0)
        torch.testing.assert_close(t.heads, weights @ t.v, atol=ATOL, rtol=0)
        concat = t.heads.transpose(1, 2).reshape(B, T, heads * s)
        torch.testing.assert_close(mha.unify(concat), out, atol=ATOL, rtol=0)
