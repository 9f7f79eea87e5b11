"""Head profiles on hand-made attention matrices whose metrics are known exactly, the nearest-head
ranking, and the text -> attention path on tiny checkpoints."""

import math

import numpy as np
import pytest
import torch

from fixtures.tiny import make_checkpoints
from model.analysis.profiles import (
    CROSS_METRICS,
    SELF_METRICS,
    head_profiles,
    nearest_heads,
    spearman,
    standardise,
)
from model.analysis.runs import run
from model.core.checkpoint import load_checkpoint
from model.core.results import special_keys


def previous_matrix(T: int) -> np.ndarray:
    """Each query on the token before it; the first token on itself."""
    w = np.zeros((T, T))
    w[0, 0] = 1
    for i in range(1, T):
        w[i, i - 1] = 1
    return w


def stack(*heads: np.ndarray) -> np.ndarray:
    """One layer holding the given heads: (1, heads, Tq, Tk)."""
    return np.stack(heads)[None]


@pytest.mark.parametrize("T", [2, 5, 9])
def test_identity_uniform_previous_first(T):
    uniform = np.full((T, T), 1 / T)
    first = np.zeros((T, T))
    first[:, 0] = 1
    p = head_profiles(stack(np.eye(T), previous_matrix(T), uniform, first))
    m = p.metrics
    assert list(m) == list(SELF_METRICS) and p.shape == (1, 4)
    np.testing.assert_allclose(m["self"][0], [1, 1 / T, 1 / T, 1 / T])
    np.testing.assert_allclose(m["previous"][0], [0, 1, 1 / T, 1 / (T - 1)])
    np.testing.assert_allclose(m["entropy"][0], [0, 0, math.log2(T), 0], atol=1e-12)
    np.testing.assert_allclose(m["first"][0], [1 / T, 2 / T, 1 / T, 1])


def test_entropy_of_a_two_way_split_is_one_bit():
    w = np.zeros((4, 4))
    w[:, :2] = 0.5
    assert head_profiles(stack(w)).metrics["entropy"][0, 0] == pytest.approx(1.0)


def test_special_weight_sums_flagged_keys():
    T = 4
    uniform = np.full((T, T), 1 / T)
    special = special_keys(["<sos>", "hund", "zzz", "<eos>"], unknown=["zzz"])
    assert special == [True, False, True, True]
    p = head_profiles(stack(uniform, np.eye(T)), special=special)
    np.testing.assert_allclose(p.metrics["special"][0], [3 / 4, 3 / 4])
    assert head_profiles(stack(uniform)).metrics["special"][0, 0] == 0


def test_cross_attention_monotonic_and_reversed():
    Tq, Tk = 6, 6
    diagonal, reversed_ = np.eye(Tq, Tk), np.eye(Tq, Tk)[::-1]
    stuck = np.zeros((Tq, Tk))
    stuck[:, 2] = 1
    stretched = np.zeros((Tq, 3))  # two queries per source word, in order
    for i in range(Tq):
        stretched[i, i // 2] = 1
    p = head_profiles(stack(diagonal, reversed_, stuck), cross=True)
    assert list(p.metrics) == list(CROSS_METRICS)
    np.testing.assert_allclose(p.metrics["monotonic"][0], [1.0, -1.0, 0.0])
    np.testing.assert_allclose(p.metrics["forward"][0], [1.0, 0.0, 1.0])
    s = head_profiles(stack(stretched), cross=True).metrics
    assert s["monotonic"][0, 0] == pytest.approx(1.0, abs=0.05) and s["forward"][0, 0] == 1.0


def test_monotonic_partly_shuffled_is_in_between():
    order = [0, 2, 1, 3, 5, 4]
    w = np.eye(6)[order]
    p = head_profiles(stack(w), cross=True).metrics
    assert 0.5 < p["monotonic"][0, 0] < 1
    assert p["forward"][0, 0] == pytest.approx(3 / 5)


def test_spearman_matches_pearson_of_ranks_with_ties():
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 4, 5]
    ry = np.array([1, 0, 2.5, 2.5, 4])
    expected = np.corrcoef(np.arange(5), ry)[0, 1]
    assert spearman(x, y) == pytest.approx(expected)
    # a constant row has no Spearman (model.analysis.ranks: NaN); monotonicity reads a head whose strongest
    # key never moves as 0 itself (test_cross_attention_monotonic_and_reversed's "stuck" head)
    assert math.isnan(spearman([1, 2, 3], [7, 7, 7]))
    assert math.isnan(spearman([1], [1]))


def test_single_token_metrics_that_need_two_are_nan():
    p = head_profiles(np.ones((2, 3, 1, 1)))
    assert np.isnan(p.metrics["previous"]).all()
    assert (p.metrics["self"] == 1).all() and (p.metrics["entropy"] == 0).all()
    assert np.isnan(head_profiles(np.ones((1, 1, 1, 3)) / 3, cross=True).metrics["monotonic"]).all()


def test_rows_and_matrix_order_and_tensor_input():
    w = torch.softmax(torch.randn(2, 3, 4, 4), dim=-1)
    p = head_profiles(w)
    rows = p.rows()
    assert [(r["layer"], r["head"]) for r in rows] == [(l, h) for l in range(2) for h in range(3)]
    assert rows[4]["entropy"] == pytest.approx(float(p.metrics["entropy"][1, 1]))
    assert p.matrix(["self", "first"]).shape == (6, 2)


@pytest.mark.parametrize(
    "weights, kwargs, message",
    [
        (np.ones((3, 3)), {}, "layers, heads, queries, keys"),
        (np.ones((1, 1, 2, 3)), {}, "square"),
        (np.ones((1, 1, 0, 0)), {}, "empty"),
        (np.ones((1, 1, 3, 3)), {"special": [True]}, "1 special-token flags"),
    ],
)
def test_bad_input_says_what_to_fix(weights, kwargs, message):
    with pytest.raises(ValueError, match=message):
        head_profiles(weights, **kwargs)


def test_standardise_columns():
    z = standardise(np.array([[1.0, 5.0], [3.0, 5.0]]))
    np.testing.assert_allclose(z, [[-1, 0], [1, 0]])


def test_nearest_heads_ordering():
    T = 5
    uniform = np.full((T, T), 1 / T)
    near_uniform = 0.9 * uniform + 0.1 * np.eye(T)
    heads = [np.eye(T), uniform, previous_matrix(T), near_uniform, 0.95 * np.eye(T) + 0.05 * uniform]
    p = head_profiles(np.stack(heads)[None])
    nearest = nearest_heads(p, 0, 1, k=2)
    assert len(nearest) == 2 and nearest[0]["head"] == 3  # the almost uniform head
    assert nearest_heads(p, 0, 0, k=1)[0]["head"] == 4  # the other diagonal head
    everyone = nearest_heads(p, 0, 0, k=10)
    assert len(everyone) == 4 and all(n["head"] != 0 for n in everyone)
    distances = [n["distance"] for n in everyone]
    assert distances == sorted(distances)
    with pytest.raises(ValueError, match="does not exist"):
        nearest_heads(p, 1, 0)


def test_nearest_heads_skip_metrics_undefined_for_some_head():
    p = head_profiles(np.ones((2, 2, 1, 1)))  # previous is NaN everywhere
    assert all(np.isfinite(n["distance"]) for n in nearest_heads(p, 0, 0))


def test_neighbourhood_is_the_head_then_its_nearest_with_their_metrics():
    from model.analysis.profiles import neighbourhood

    T = 5
    uniform = np.full((T, T), 1 / T)
    heads = [np.eye(T), uniform, previous_matrix(T), 0.9 * uniform + 0.1 * np.eye(T)]
    p = head_profiles(np.stack(heads).reshape(2, 2, T, T))
    near = neighbourhood(p, 0, 1, k=2)
    assert [(n["layer"], n["head"]) for n in near[1:]] == [(n["layer"], n["head"]) for n in nearest_heads(p, 0, 1, k=2)]
    assert (near[0]["layer"], near[0]["head"], near[0]["distance"]) == (0, 1, 0.0)
    for n in near:
        assert n["entropy"] == pytest.approx(p.metrics["entropy"][n["layer"], n["head"]])
        # the distance is the Euclidean one between the standardised vectors
        assert np.linalg.norm(n["z"] - near[0]["z"]) == pytest.approx(n["distance"])


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("checkpoints"))


def test_run_result_on_every_task(checkpoints):
    cls = run(load_checkpoint(checkpoints / "classifier"), "the zzyzx plot is thin")
    view = cls.kinds["encoder"]
    assert view.weights.shape[:2] == (2, 3) and view.keys[1] == "zzyzx" and view.special[1]
    assert cls.prediction in ("negative", "positive")
    gen = run(load_checkpoint(checkpoints / "generator"), "ROMEO: ☃")
    assert gen.kinds["encoder"].weights.shape == (3, 2, 8, 8) and gen.unknown == ["☃"]
    tr = run(load_checkpoint(checkpoints / "translator"), "ein mann fährt fahrrad .")
    assert set(tr.kinds) == {"encoder", "decoder", "cross"}
    cross = tr.kinds["cross"]
    assert cross.cross and cross.weights.shape[-1] == len(cross.keys) == 7 and cross.special[0]
    assert cross.weights.shape[:2] == (3, 4) and tr.kinds["encoder"].weights.shape[:2] == (2, 4)
    for ck_dir, text in (("classifier", "   "), ("generator", ""), ("translator", "  ")):
        with pytest.raises(ValueError):
            run(load_checkpoint(checkpoints / ck_dir), text)


def test_generator_step_runs_agree_with_the_whole_run(checkpoints):
    from model.analysis.runs import causal_step_maps, chars_read, last_query_weights
    from model.core.tokenize import UNK

    ck = load_checkpoint(checkpoints / "generator")
    weights = run(ck, "ROMEO:").kinds["encoder"].weights  # (layers, heads, T, T)
    assert np.allclose(last_query_weights(ck, "ROMEO:"), weights[:, :, -1], atol=1e-5)
    steps = causal_step_maps(ck, "ROMEO:", 1, 1)
    assert set(steps) == {"scores", "mask", "masked", "softmax"}
    assert np.allclose(steps["softmax"], weights[1, 1], atol=1e-5) and steps["mask"].shape == (6, 6)
    assert chars_read(ck, "RO☃") == ["R", "O", UNK]
