"""One Spearman (model.analysis.ranks): the numpy form, the batched torch form equal to it on random, tied
and constant rows, NaN on a constant row, and the callers that give a constant row its meaning (a head whose
strongest key never moves is 0 "no order" in head profiles and in the finder; a constant layer is left out of
the contributions' agreement)."""

import math

import numpy as np
import pytest
import torch

from model.analysis import contributions, head_tensors, profiles
from model.analysis.ranks import ranks, spearman, spearman_rows


def _rows(seed: int) -> np.ndarray:
    """Rows of 7: continuous, heavily tied (few values), constant, and one constant but for one value."""
    rng = np.random.default_rng(seed)
    rows = [rng.normal(size=7), rng.integers(0, 3, size=7), np.full(7, 4.0), rng.integers(0, 2, size=7)]
    rows.append(np.r_[np.zeros(6), 1.0])
    return np.stack(rows).astype(float)


@pytest.mark.parametrize("seed", range(5))
def test_the_batched_spearman_is_the_numpy_one(seed):
    x, y = _rows(seed), _rows(seed + 100)
    got = spearman_rows(torch.from_numpy(x), torch.from_numpy(y)).numpy()
    want = np.array([spearman(a, b) for a, b in zip(x, y)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert np.isnan(got[2])  # the constant row
    positions = torch.arange(7)  # as the finder calls it: positions against each row
    got = spearman_rows(positions, torch.from_numpy(y), dtype=torch.float32).numpy()
    np.testing.assert_allclose(got, [spearman(range(7), b) for b in y], atol=1e-6, equal_nan=True)


def test_spearman_is_pearson_of_mean_ranks_and_undefined_on_a_constant_row():
    x, y = np.array([3.0, 1.0, 3.0, 2.0]), np.array([1.0, 2.0, 3.0, 4.0])
    assert ranks(x).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert spearman(x, y) == pytest.approx(np.corrcoef(ranks(x), ranks(y))[0, 1])
    assert math.isnan(spearman([1, 2, 3], [7, 7, 7])) and math.isnan(spearman([5], [1]))
    with pytest.raises(ValueError, match="equal length"):
        spearman([1, 2], [1, 2, 3])
    assert profiles.spearman is spearman and contributions.spearman is spearman


def test_a_head_whose_strongest_key_never_moves_is_monotonic_zero_in_profiles_and_the_finder():
    stuck = np.zeros((1, 2, 5, 4))
    stuck[0, 0, :, 2] = 1  # always key 2
    stuck[0, 1] = np.eye(5, 4, k=-1)  # strongest keys 0, 0, 1, 2, 3: in order, with a tie
    stuck[0, 1, 0, 0] = 1
    stuck[0, 1] /= stuck[0, 1].sum(-1, keepdims=True)
    mono = profiles.head_profiles(stuck, cross=True).metrics["monotonic"][0]
    sums, counts = head_tensors.cross_sums(torch.from_numpy(stuck[0])[None], [5], [4])["monotonic"]
    assert mono[0] == 0.0 and sums[0, 0] == 0.0 and counts[0, 0] == 1.0
    assert mono[1] == pytest.approx(spearman(range(5), [0, 0, 1, 2, 3])) == pytest.approx(float(sums[0, 1]))
    assert np.isnan(profiles.head_profiles(stuck[..., :1, :], cross=True).metrics["monotonic"]).all()
