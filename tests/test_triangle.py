"""Causal maps held as their lower triangle (model.core.triangle, issue 33: GPT-2's maps at 1,024 tokens are
604 MB dense, half of them zeros): every way the pages read a dense ``(layers, heads, queries, keys)`` array
gives the same numbers, bit for bit, from the triangle; runs pack where they should and only there; the
explorer sends the same bytes either way."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import model.core.triangle as triangle
from model.core.results import attention_kind, causal
from model.core.triangle import CausalMaps, compact, is_causal
from viz.explorer.payload import explorer_payload, quantise

L, H, N = 3, 4, 11


@pytest.fixture
def maps() -> tuple[np.ndarray, CausalMaps]:
    rng = np.random.default_rng(7)
    dense = np.tril(rng.random((L, H, N, N), dtype=np.float32))
    dense /= dense.sum(-1, keepdims=True)
    return dense, CausalMaps.from_dense(dense)


def brute_rows(packed: np.ndarray, n: int) -> np.ndarray:
    """The dense maps from the packed cells, by the definition: row i's i + 1 weights start at i (i + 1) / 2."""
    out = np.zeros((*packed.shape[:-1], n, n), dtype=np.float32)
    for i in range(n):
        for j in range(i + 1):
            out[..., i, j] = packed[..., i * (i + 1) // 2 + j]
    return out


def test_the_triangle_is_the_dense_maps_row_after_row(maps):
    dense, tri = maps
    assert tri.packed.shape == (L, H, N * (N + 1) // 2) and tri.packed.dtype == np.float32
    np.testing.assert_array_equal(brute_rows(tri.packed, N), dense)
    np.testing.assert_array_equal(tri.packed, dense[:, :, np.tri(N, dtype=bool)])  # numpy's row-major order
    assert tri.shape == dense.shape and tri.size == dense.size and tri.ndim == 4 and tri.dtype == np.float32
    assert tri.nbytes == dense.nbytes * (N + 1) // (2 * N)  # what it holds, not the dense array's size
    assert len(tri) == L and [np.array_equal(a, b) for a, b in zip(tri, dense)] == [True] * L


ALL = slice(None)
INDEXES = [
    0,
    -1,
    (1, 2),
    (ALL, 3),
    (1, ALL, 4, 5),
    (1, ALL, 4, 9),  # above the diagonal: 0
    (ALL, ALL, 6),
    (ALL, ALL, -1, ALL),
    (ALL, ALL, [1, 7, 3]),
    (ALL, ALL, np.array([0, 10])),
    (ALL, ALL, ALL, [0, 2, 2]),
    (2, 3, slice(2, 9, 3), slice(1, None)),
    (-1, -1, -1, -1),
    (0, 0, [1, 2], [0, 1]),  # two index arrays broadcast together
    (Ellipsis, 0),
    (ALL, ALL, np.tri(N, dtype=bool)),  # a boolean mask over both token axes
    (0, True),  # a bool is a mask (a new axis), not head 1
    (slice(1, 3), slice(None, None, 2), 5),
]


@pytest.mark.parametrize("index", INDEXES, ids=range(len(INDEXES)))
def test_every_index_reads_what_the_dense_array_reads(maps, index):
    dense, tri = maps
    got, want = tri[index], dense[index]
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


def test_an_index_past_the_end_fails_as_numpys_does(maps):
    _, tri = maps
    for index in [(L,), (0, H), (0, 0, N), (0, 0, [0, N])]:
        with pytest.raises(IndexError):
            tri[index]


def test_arithmetic_and_array_methods_work_on_the_dense_array(maps):
    dense, tri = maps
    np.testing.assert_array_equal(tri - dense, np.zeros_like(dense))
    np.testing.assert_array_equal(np.asarray(tri, dtype=np.float64), dense.astype(np.float64))
    assert float(tri.mean()) == float(dense.mean()) and tri.sum(-1).shape == (L, H, N)
    np.testing.assert_array_equal(tri.max(axis=(0, 1)), dense.max(axis=(0, 1)))
    np.testing.assert_array_equal(np.round(tri, 3), np.round(dense, 3))


def test_is_causal_only_for_the_lower_triangle():
    assert is_causal(causal(5)) and is_causal(np.tri(1, dtype=bool))
    assert not is_causal(np.ones((5, 5), bool)) and not is_causal(np.tri(5, 6, dtype=bool))
    window = causal(5) & (np.subtract.outer(np.arange(5), np.arange(5)) < 3)
    assert not is_causal(window)


@pytest.mark.parametrize(
    ("mask", "threshold", "packed"),
    [("causal", 0, True), ("causal", 1 << 40, False), ("full", 0, False), (None, 0, False)],
)
def test_runs_pack_where_the_map_is_causal_and_large(maps, monkeypatch, mask, threshold, packed):
    dense, _ = maps
    monkeypatch.setattr(triangle, "PACK_FROM_BYTES", threshold)
    m = {"causal": causal(N), "full": np.ones((N, N), bool), None: None}[mask]
    stacked = compact(list(dense), m)
    kind = attention_kind("decoder", dense, ["t"] * N, ["t"] * N, mask=m)
    assert isinstance(stacked, CausalMaps) == packed and isinstance(kind.weights, CausalMaps) == packed
    np.testing.assert_array_equal(np.asarray(stacked), dense)
    np.testing.assert_array_equal(np.asarray(kind.weights), dense)
    np.testing.assert_array_equal(kind.head(2, 1), dense[2, 1])


def test_compact_lets_go_of_each_layer(maps, monkeypatch):
    dense, _ = maps
    monkeypatch.setattr(triangle, "PACK_FROM_BYTES", 0)
    layers = [layer.copy() for layer in dense]
    out = compact(layers, causal(N))
    assert layers == [None] * L and isinstance(out, CausalMaps)
    made = []
    out = compact((made.append(i) or layer for i, layer in enumerate(dense)), causal(N), L)  # each made when asked
    assert made == list(range(L)) and np.array_equal(np.asarray(out), dense)
    with pytest.raises(ValueError, match="count"):
        compact(iter(dense), causal(N))


@pytest.mark.parametrize("exact", [True, False], ids=["f4", "q8"])
def test_the_explorer_sends_the_same_bytes_from_the_triangle(maps, exact):
    dense, tri = maps
    tokens = [f"t{i}" for i in range(N)]
    kinds = [attention_kind("decoder", w, tokens, tokens, mask=causal(N)) for w in (dense, tri)]
    assert [type(k.weights) for k in kinds] == [np.ndarray, CausalMaps]  # a tiny run stays dense unless packed
    a, b = (explorer_payload([k], exact=exact) for k in kinds)
    assert a == b
    s1, c1 = quantise(dense, causal(N))
    s2, c2 = quantise(tri, causal(N))
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(c1, c2)


def test_a_window_layer_mask_reads_the_same(maps):
    """A sliding-window run (Mistral) is causal with zeros inside the triangle: stored and read as they are."""
    dense, _ = maps
    tokens = [f"t{i}" for i in range(N)]
    windowed = np.where(np.subtract.outer(np.arange(N), np.arange(N)) < 4, dense, 0).astype(np.float32)
    kinds = [
        attention_kind("decoder", w, tokens, tokens, mask=causal(N), window=4, window_layers=[0, 2])
        for w in (windowed, CausalMaps.from_dense(windowed))
    ]
    for layer, head, q in itertools.product(range(L), range(H), range(N)):
        np.testing.assert_array_equal(kinds[1].weights[layer, head, q], windowed[layer, head, q])
    assert explorer_payload([kinds[0]]) == explorer_payload([kinds[1]])
