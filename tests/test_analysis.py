"""model.analysis.maps: head means, rollout, dropping special tokens, the causal mask recomputed step by step."""

import pytest
import torch

from model.analysis.maps import (
    attention_rollout,
    causal_steps,
    drop_tokens,
    last_query_attention,
    mean_over_heads,
    renormalise_rows,
)
from model.nets.generator import Generator, GeneratorConfig


def random_attention(*shape: int) -> torch.Tensor:
    """Row-stochastic weights of ``shape`` (..., T, T)."""
    return torch.softmax(torch.randn(*shape) * 2, dim=-1)


@pytest.fixture(scope="module", params=[False, True], ids=["narrow", "wide"])
def generator(request) -> Generator:
    torch.manual_seed(0)
    cfg = GeneratorConfig(vocab_size=20, dim=16, heads=4, layers=3, ff_dim=32, block_size=24, wide=request.param)
    return Generator(cfg).eval()


def test_mean_over_heads():
    w = random_attention(2, 4, 5, 5)
    assert torch.allclose(mean_over_heads(w), w.mean(1))
    with pytest.raises(ValueError, match="heads, queries, keys"):
        mean_over_heads(torch.ones(5, 5))


@pytest.mark.parametrize("batch, heads, layers, T", [(1, 1, 1, 1), (1, 4, 2, 7), (3, 2, 4, 12)])
def test_rollout_rows_sum_to_one(batch, heads, layers, T):
    maps = [random_attention(batch, heads, T, T) for _ in range(layers)]
    r = attention_rollout(maps)
    assert r.shape == (batch, T, T)
    assert torch.allclose(r.sum(-1), torch.ones(batch, T), atol=1e-5)
    assert (r >= 0).all()


def test_rollout_is_the_product_of_half_attention_half_identity():
    a, b = random_attention(1, 3, 5, 5), random_attention(1, 3, 5, 5)
    eye = torch.eye(5)
    first, second = 0.5 * a.mean(1) + 0.5 * eye, 0.5 * b.mean(1) + 0.5 * eye
    assert torch.allclose(attention_rollout([a]), first, atol=1e-6)
    assert torch.allclose(attention_rollout([a, b]), second @ first, atol=1e-6)


def test_rollout_rejects_bad_input():
    with pytest.raises(ValueError, match="at least one layer"):
        attention_rollout([])
    with pytest.raises(ValueError, match="square"):
        attention_rollout([torch.ones(1, 2, 3, 4)])


@pytest.mark.parametrize("keep", [[True, False, True, True, False], [False, True, True, True, True], [True] * 5])
def test_drop_tokens_rows_sum_to_one(keep):
    w = random_attention(2, 3, 5, 5)
    out = drop_tokens(w, keep)
    n = sum(keep)
    assert out.shape == (2, 3, n, n)
    assert torch.allclose(out.sum(-1), torch.ones(2, 3, n), atol=1e-6)
    kept = [i for i, k in enumerate(keep) if k]
    expected = w[..., kept, :][..., kept]
    assert torch.allclose(out, expected / expected.sum(-1, keepdim=True))


def test_drop_tokens_with_separate_query_and_key_flags():
    w = random_attention(4, 6)  # cross-attention: 4 queries, 6 keys
    out = drop_tokens(w, [True, True, False, True], [False, True, True, True, True, False])
    assert out.shape == (3, 4)
    assert torch.allclose(out.sum(-1), torch.ones(3), atol=1e-6)


def test_drop_tokens_keeps_zero_rows_zero_and_checks_lengths():
    w = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    out = drop_tokens(w, [True, True, True], [False, True, True])
    assert not out.isnan().any()
    assert out[0].sum() == 0 and torch.allclose(out[1], torch.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="3 queries and 3 keys but 2 query"):
        drop_tokens(w, [True, False])
    assert torch.equal(renormalise_rows(torch.zeros(2, 2)), torch.zeros(2, 2))


@pytest.mark.parametrize("T", [1, 5, 24])
def test_causal_steps_equal_the_models_weights(generator, T):
    ids = torch.randint(0, 20, (2, T))
    _, maps = generator(ids, return_attention=True)
    for layer in range(3):
        for head in range(4):
            steps = causal_steps(generator, ids, layer, head)
            assert torch.allclose(steps.weights, maps.encoder[layer][:, head], atol=1e-6)


def test_causal_steps_mask_the_future(generator):
    ids = torch.randint(0, 20, (1, 9))
    steps = causal_steps(generator, ids, 1, 2)
    above = torch.ones(9, 9, dtype=torch.bool).triu(1)
    assert torch.equal(steps.mask, ~above)
    assert torch.isinf(steps.masked[0][above]).all() and (steps.masked[0][above] < 0).all()
    assert torch.equal(steps.masked[0][~above], steps.scores[0][~above])
    assert (steps.weights[0][above] == 0).all()
    assert torch.allclose(steps.weights.sum(-1), torch.ones(1, 9), atol=1e-6)
    assert torch.isfinite(steps.scores).all()


def test_causal_steps_refuse_bad_requests(generator):
    ids = torch.randint(0, 20, (1, 4))
    with pytest.raises(ValueError, match="layers 0..2"):
        causal_steps(generator, ids, 3, 0)
    with pytest.raises(ValueError, match="heads 0..3"):
        causal_steps(generator, ids, 0, -1)
    with pytest.raises(ValueError, match="1..24"):
        causal_steps(generator, torch.zeros(1, 25, dtype=torch.long), 0, 0)
    generator.train()
    try:
        with pytest.raises(ValueError, match="eval"):
            causal_steps(generator, ids, 0, 0)
    finally:
        generator.eval()


def test_last_query_attention(generator):
    ids = torch.randint(0, 20, (1, 30))  # longer than the context: the last 24 are read
    rows = last_query_attention(generator, ids)
    _, maps = generator(ids[:, -24:], return_attention=True)
    assert len(rows) == 3
    for row, w in zip(rows, maps.encoder):
        assert row.shape == (1, 4, 24)
        assert torch.allclose(row, w[:, :, -1])
    with pytest.raises(ValueError, match="empty"):
        last_query_attention(generator, torch.zeros(1, 0, dtype=torch.long))


def test_word_changes_are_the_words_outside_the_common_sequence():
    from model.analysis.compare import word_changes

    assert word_changes("a man rides a bike .", "a woman rides a bike .") == (["man"], ["woman"])
    assert word_changes("two dogs play", "two dogs play") == ([], [])
    assert word_changes("", "a dog") == ([], ["a", "dog"])
    assert word_changes("a dog runs fast", "a cat runs") == (["dog", "fast"], ["cat"])


def test_largest_change_looks_only_at_the_likeliest_outcomes():
    from model.analysis.compare import largest_change

    a = {"x": 0.6, "y": 0.25, "z": 0.15}
    b = {"x": 0.58, "y": 0.42, "z": 0.0}
    assert largest_change(a, b) == "y"  # +0.17 beats -0.15 and -0.02
    assert largest_change(a, b, top=1) == "x"  # only the likeliest outcome is drawn
    assert largest_change({"x": 1.0}, {"y": 1.0}) in ("x", "y")  # outcomes missing on one side count as 0
    with pytest.raises(ValueError, match="empty"):
        largest_change({}, {})
