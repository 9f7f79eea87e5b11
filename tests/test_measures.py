"""Every head measure has one record (model.analysis.measures), and what the head finder and head profiles
compute, name, explain and draw is exactly the records: a metric computed without a record, or a record no
computation fills, fails here."""

import numpy as np
import pytest
import torch

from model.analysis import head_tensors, heads, profiles, snapshots
from model.analysis.measures import BY_NAME, HELP, MEASURES, ROLE_NAMES, finder_names, measure, profile_names
from model.analysis.role_links import ROLES as LINK_ROLES
from pages.explore.history_parts import ROLE_NAMES as HISTORY_ROLE_NAMES
from viz.heads import RANGES, axis_range
from viz.profiles import colour_range


def _causal(B: int, H: int, T: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(B, H, T, T, generator=g, dtype=torch.float64)
    scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return scores.softmax(-1)


def _finder_computes() -> tuple[list[str], tuple[set, set, set]]:
    """Every base metric name the finder's tensor functions return, once per function that returns it."""
    T = 9
    causal, full = _causal(2, 3, T, 0), torch.rand(2, 3, T, T, dtype=torch.float64).softmax(-1)
    cross = torch.rand(2, 3, 5, 7, dtype=torch.float64).softmax(-1)
    got = set(head_tensors.layer_sums(causal, [T, T], cross=False, causal=True))
    got |= set(head_tensors.layer_sums(full, [T, T], cross=False, causal=False))
    row = got | set(head_tensors.layer_sums(cross, [5, 5], cross=True, causal=False))
    probe = set(head_tensors.probe_layer_sums(causal, 1, 4))
    along = set(head_tensors.cross_sums(cross, [5, 4], [7, 6]))
    names = [m.removesuffix("_nosink") for group in (row, probe, along) for m in group]
    return sorted(set(names)), (row, probe, along)


def test_every_finder_metric_has_exactly_one_record_and_every_record_is_computed():
    names, (row, probe, along) = _finder_computes()
    assert names == sorted(finder_names())
    assert len(MEASURES) == len(BY_NAME)  # no name is recorded twice
    for group, computed in (("row", row), ("probe", probe), ("cross", along)):
        assert {m.removesuffix("_nosink") for m in computed} == set(finder_names(group)), group
        assert computed == {n + s for n in finder_names(group) for s in ("", "_nosink")}, group
    assert heads.BASE_METRICS == finder_names() and len(set(head_tensors.METRICS)) == 2 * len(finder_names())
    assert set(heads.METRIC_HELP) == set(finder_names())
    assert all(heads.METRIC_HELP[m] == HELP[m] != "" for m in finder_names())


def test_every_profile_metric_has_exactly_one_record_and_every_record_is_computed():
    w = _causal(1, 2, 6, 1).numpy()
    self_cols = list(profiles.head_profiles(w).metrics)
    cross_cols = list(
        profiles.head_profiles(np.random.default_rng(0).dirichlet(np.ones(4), (1, 2, 6)), cross=True).metrics
    )
    assert self_cols == list(profile_names(cross=False)) == list(profiles.SELF_METRICS)
    assert cross_cols == list(profile_names(cross=True)) == list(profiles.CROSS_METRICS)
    recorded = {m.name for m in MEASURES if m.profile is not None}
    assert set(self_cols) | set(cross_cols) == recorded == set(profiles.COMPUTE) == set(profiles.METRIC_HELP)
    assert sorted(m.profile for m in MEASURES if m.profile is not None) == list(range(len(recorded)))


@pytest.mark.parametrize("cross,causal", [(False, False), (False, True), (True, False)])
def test_a_metric_applies_where_its_record_says(cross, causal):
    kind = "cross" if cross else "causal" if causal else "bidirectional"
    for name in head_tensors.METRICS:
        assert head_tensors.applies(name, cross=cross, causal=causal) == (kind in measure(name).kinds)
    shown = profile_names(cross=cross)
    assert all(kind in BY_NAME[n].kinds for n in shown)


def test_ranges_and_roles_derive_from_the_records():
    for m in MEASURES:
        lo, hi = m.range
        if hi is not None:
            assert RANGES[m.name] == (lo, hi) and axis_range(m.name) == pytest.approx(
                [lo - 0.04 * (hi - lo), hi + 0.04 * (hi - lo)]
            )
            if m.profile is not None:
                assert colour_range(m.name, 10) == (lo, hi)
        else:
            assert m.name not in RANGES
    assert colour_range("entropy", 8) == (0.0, 3.0)
    assert snapshots.ROLES == ("previous", "first", "induction", "duplicate")
    assert all(ROLE_NAMES[r] for r in snapshots.ROLES)
    # the role tables the pages still hold name each role as its record does
    assert all(LINK_ROLES[m] == ROLE_NAMES[m] for m in LINK_ROLES)
    assert all(HISTORY_ROLE_NAMES[m] == ROLE_NAMES[m] for m in snapshots.ROLES)


def test_an_unknown_measure_says_which_there_are():
    with pytest.raises(KeyError, match="previous"):
        measure("nonsense")
    assert measure("first_nosink") is BY_NAME["first"]
