"""The hand-worked example reproduces Raschka's worked example ("Understanding and coding the
self-attention mechanism"), and the reshape steps equal independent references."""

import math

import pytest
import torch

from model.lessons.hand import multi_head_walkthrough, notebook_tokens, plain_self_attention, walkthrough
from model.lessons.reshape import input_tensor, parameter_count, reshape_steps, seeded_attention

torch.set_num_threads(1)

SEED_SCORES_IS = [8.5808, -7.6597, 3.2558, 1.0395, 11.1466, -0.4800]
SEED_WEIGHTS_IS = [0.2912, 0.0106, 0.0982, 0.0625, 0.4917, 0.0458]
SEED_CONTEXT_IS = [-1.5993, 0.0156, 1.2670, 0.0032, -0.6460, -1.1407]


def close4(actual, expected):
    assert torch.allclose(actual, torch.tensor(expected), atol=5e-5), (actual, expected)


def test_defaults_reproduce_the_seed_notebook():
    w = walkthrough()
    assert w.tokens == ["Life", "is", "short", "eat", "dessert", "first."]
    assert w.vocab == {"Life": 0, "dessert": 1, "eat": 2, "first.": 3, "is": 4, "short": 5}
    assert w.ids.tolist() == [0, 4, 5, 2, 1, 3]
    close4(w.embeddings[0, :4], [0.3374, -0.1778, -0.3035, -0.5880])
    close4(w.scores[1], SEED_SCORES_IS)
    close4(w.weights[1], SEED_WEIGHTS_IS)
    close4(w.context[1, :6], SEED_CONTEXT_IS)
    assert w.embeddings.shape == (6, 16) and w.W_query.shape == (24, 16) and w.W_value.shape == (28, 16)
    assert w.queries.shape == (6, 24) and w.values.shape == (6, 28) and w.context.shape == (6, 28)


def test_equals_the_notebook_recipe_and_leaves_the_global_rng_alone():
    torch.manual_seed(7)
    before = torch.get_rng_state()
    w = walkthrough()
    assert torch.equal(torch.get_rng_state(), before)
    # the notebook's own recipe, on the global RNG
    torch.manual_seed(123)
    x = torch.nn.Embedding(6, 16)(w.ids).detach()
    torch.manual_seed(123)
    wq, wk = torch.rand(24, 16), torch.rand(24, 16)
    assert torch.equal(x, w.embeddings)
    assert torch.allclose((wq @ x[1]) @ (wk @ x.T), w.scores[1], atol=1e-5)


def test_scores_weights_context_relations():
    w = walkthrough("the cat sat on the mat", seed=3, d=5, d_q=4, d_k=4, d_v=6)
    assert torch.allclose(w.scores, w.queries @ w.keys.T)
    assert torch.allclose(w.weights, torch.softmax(w.scores / 2.0, dim=-1))
    assert torch.allclose(w.weights.sum(-1), torch.ones(6))
    assert torch.allclose(w.context, w.weights @ w.values)
    assert len(w.vocab) == 5  # "the" appears twice but has one entry
    assert w.ids[0] == w.ids[4]


def test_spacy_tokenizer_option():
    w = walkthrough(tokenizer="spacy")
    assert w.tokens == ["life", "is", "short", ",", "eat", "dessert", "first", "."]
    assert w.scores.shape == (8, 8)


def test_notebook_tokens_drop_commas():
    assert notebook_tokens("a, b,c  d") == ["a", "bc", "d"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(sentence=""), "no tokens"),
        (dict(sentence="   "), "no tokens"),
        (dict(sentence=",,,"), "no tokens"),
        (dict(d_q=24, d_k=20), "d_q (24) must equal d_k (20)"),
        (dict(d=0), "d must be"),
        (dict(d_v=513), "d_v must be"),
        (dict(tokenizer="bpe"), "tokenizer must be"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        walkthrough(**kwargs)


def test_max_tokens_cuts_and_counts():
    w = walkthrough(" ".join(f"w{i}" for i in range(50)), max_tokens=40)
    assert len(w.tokens) == 40 and w.dropped == 10 and w.scores.shape == (40, 40)


@pytest.mark.parametrize("heads", [1, 3])
def test_several_heads(heads):
    mh = multi_head_walkthrough(heads=heads)
    T = 6
    assert len(mh.heads) == heads
    assert mh.W_query.shape == (heads, 24, 16) and mh.weights.shape == (heads, T, T)
    assert mh.context.shape == (heads, T, 28) and mh.concat.shape == (T, heads * 28)
    close4(mh.heads[0].scores[1], SEED_SCORES_IS)  # head 0 is the single-head walk-through
    for i in range(heads):
        assert torch.equal(mh.concat[:, i * 28 : (i + 1) * 28], mh.context[i])
    if heads > 1:
        assert not torch.allclose(mh.W_query[0], mh.W_query[1])


@pytest.mark.parametrize("shape", [(6, 16), (2, 5, 4)])
def test_plain_self_attention(shape):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
    for scale in (False, True):
        p = plain_self_attention(x, scale=scale)
        assert torch.allclose(p.raw, x @ x.transpose(-2, -1))
        assert torch.allclose(p.weights.sum(-1), torch.ones(shape[:-1]))
        assert torch.allclose(p.output, p.weights @ x)
    with pytest.raises(ValueError, match="must be"):
        plain_self_attention(torch.ones(3))


SHAPES = {  # (b, t, k, h) -> expected shapes of the named steps, narrow heads
    "input x": lambda b, t, k, h, s: (b, t, k),
    "project to queries, keys, values": lambda b, t, k, h, s: (b, t, h * s),
    "view": lambda b, t, k, h, s: (b, t, h, s),
    "transpose": lambda b, t, k, h, s: (b, h, t, s),
    "fold heads into batch": lambda b, t, k, h, s: (b * h, t, s),
    "bmm: scores": lambda b, t, k, h, s: (b * h, t, t),
    "softmax": lambda b, t, k, h, s: (b * h, t, t),
    "bmm with values": lambda b, t, k, h, s: (b * h, t, s),
    "unfold": lambda b, t, k, h, s: (b, h, t, s),
    "transpose back": lambda b, t, k, h, s: (b, t, h, s),
    "concatenate heads": lambda b, t, k, h, s: (b, t, h * s),
    "combine the heads": lambda b, t, k, h, s: (b, t, k),
}


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("split_scale", [False, True])
@pytest.mark.parametrize("b, t, k, h", [(1, 3, 4, 1), (2, 5, 6, 3), (2, 4, 8, 4)])
def test_reshape_steps(b, t, k, h, wide, split_scale):
    x = input_tensor(b, t, k, seed=1)
    r = reshape_steps(x, h, wide=wide, split_scale=split_scale, seed=2)
    s = k if wide else k // h
    assert r.head_dim == s
    by_name = {step.name: step for step in r.steps}
    for name, shape in SHAPES.items():
        assert by_name[name].shape == shape(b, t, k, h, s), name
        assert tuple(by_name[name].tensor.shape) == by_name[name].shape
        assert by_name[name].head_of.shape == by_name[name].tensor.shape
    assert ("scale q and k" in by_name) == split_scale and ("scale" in by_name) != split_scale
    assert r.loop_diff < 1e-5 and r.module_diff < 1e-5 and r.scaling_diff < 1e-5
    assert torch.allclose(by_name["softmax"].tensor.sum(-1), torch.ones(b * h, t))
    # head labels follow the data: in the folded tensor, item i belongs to head i % h
    fold = by_name["fold heads into batch"].head_of
    assert torch.equal(fold[:, 0, 0], torch.arange(b * h) % h)
    assert (by_name["combine the heads"].head_of == -1).all()
    assert r.params["wide"] == 4 * h * k * k
    assert r.params["narrow"] == (4 * k * k if k % h == 0 else None)


def test_reshape_steps_match_torch_multihead_attention():
    """An independent reference: torch's own MultiheadAttention with the same weights."""
    b, t, k, h = 2, 5, 8, 2
    x = input_tensor(b, t, k, seed=4)
    mha = seeded_attention(k, h, seed=5)
    ref = torch.nn.MultiheadAttention(k, h, bias=False, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mha.to_q.weight, mha.to_k.weight, mha.to_v.weight]))
        ref.out_proj.weight.copy_(mha.unify.weight)
    expected, _ = ref(x, x, x)
    r = reshape_steps(x, h, seed=5)
    assert torch.allclose(r.batched, expected, atol=1e-5)


def test_reshape_validation_and_rng():
    with pytest.raises(ValueError, match="divisible"):
        reshape_steps(torch.ones(1, 3, 7), 2)
    with pytest.raises(ValueError, match=r"\(b, t, k\)"):
        reshape_steps(torch.ones(3, 7), 1)
    reshape_steps(torch.ones(1, 3, 7), 2, wide=True)  # wide heads need no divisibility
    before = torch.get_rng_state()
    a = reshape_steps(input_tensor(1, 3, 4, seed=0), 2, seed=9)
    c = reshape_steps(input_tensor(1, 3, 4, seed=0), 2, seed=9)
    assert torch.equal(torch.get_rng_state(), before)
    assert torch.equal(a.batched, c.batched)


def test_two_scalings_are_equal():
    q, k = torch.randn(2, 4, 6), torch.randn(2, 4, 6)
    s = 6
    assert torch.allclose(
        (q @ k.transpose(1, 2)) / math.sqrt(s), (q / s**0.25) @ (k / s**0.25).transpose(1, 2), atol=1e-6
    )


def test_parameter_counts_and_sentence_input():
    assert parameter_count(8, 2, wide=False) == 4 * 64
    assert parameter_count(8, 2, wide=True) == 4 * 2 * 64
    assert parameter_count(8, 2, wide=False, bias=True) == 4 * 64 + 4 * 8
    x = input_tensor(2, 0, 16, seed=123, tokens=["Life", "is", "short"])
    assert x.shape == (2, 3, 16) and torch.equal(x[0], x[1])
