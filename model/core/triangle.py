"""Causal attention maps held as their lower triangles: half the memory, the same numbers.

A causal self-attention map is zero above its diagonal: query ``i`` sees keys ``0..i`` only. At GPT-2's
1,024 tokens a 12-layer, 12-head run's maps are 604 MB as a dense float32 array, half of it zeros, and
the Any model page holds one such run per session. :class:`CausalMaps` keeps only the cells on and
below the diagonal, row after row (row ``i``'s ``i + 1`` weights start at ``i (i + 1) / 2``; the
explorer's payload codes the visible cells in the same order), and reads like the dense
``(layers, heads, queries, keys)`` array it stands for: ``maps[layer, head]``, ``maps[layer, :, q, k]``,
``maps[:, :, q]`` and the like build only the rows asked for; anything else (``np.asarray(maps)``, a
method numpy arrays have, arithmetic) builds the dense array first. The weights are the model's own
float32 values, copied, never rounded: every cell reads back bit for bit.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

# a causal run's maps are packed from this many bytes (dense float32) up: below it the dense array is
# small, and every reader gets a plain numpy array as before
PACK_FROM_BYTES = 16 << 20


def is_causal(mask: np.ndarray) -> bool:
    """``mask`` is square and says "query ``i`` sees keys ``0..i``", nothing else."""
    mask = np.asarray(mask)
    return mask.ndim == 2 and mask.shape[0] == mask.shape[1] and np.array_equal(mask, np.tri(len(mask), dtype=bool))


def starts(n: int) -> np.ndarray:
    """Where each row begins in a packed ``n``-token triangle, and its end (``n + 1`` values)."""
    i = np.arange(n + 1, dtype=np.int64)
    return i * (i + 1) // 2


def worth_packing(shape: Sequence[int], mask: np.ndarray | None) -> bool:
    """Whether maps of ``shape`` under ``mask`` are kept as their triangle: the mask is causal and the dense
    float32 array would take :data:`PACK_FROM_BYTES` or more."""
    return mask is not None and 4 * int(np.prod(shape)) >= PACK_FROM_BYTES and is_causal(mask)


def held(weights: np.ndarray, mask: np.ndarray | None) -> np.ndarray | CausalMaps:
    """Dense ``weights`` as a run keeps them: packed where :func:`worth_packing` says so, else as they are."""
    return CausalMaps.from_dense(weights) if worth_packing(weights.shape, mask) else weights


def compact(layers: Iterable, mask: np.ndarray | None = None, count: int | None = None) -> np.ndarray | CausalMaps:
    """Per-layer ``(heads, queries, keys)`` tensors or arrays as one ``(layers, heads, queries, keys)`` float32
    array, or as :class:`CausalMaps` where :func:`worth_packing`. ``layers`` is a list, each entry let go
    once copied, or an iterator of ``count`` layers, each made when it is asked for: either way only one
    layer is ever held twice, never the whole dense maps beside their copy."""
    if isinstance(layers, list):
        count, items = len(layers), _draining(layers)
    elif count is None:
        raise ValueError("compact needs the count of layers an iterator gives")
    else:
        items = iter(layers)
    first = next(items)
    shape = (int(count), *first.shape)
    items = itertools.chain([first], items)
    del first
    if worth_packing(shape, mask):
        return CausalMaps.from_layers(items, shape[0])
    dense = np.empty(shape, dtype=np.float32)
    for i, layer in enumerate(items):
        dense[i] = _array(layer)
    return dense


def _draining(layers: list) -> Iterator:
    """The entries of ``layers``, each taken out of the list as it is given."""
    for i in range(len(layers)):
        layer, layers[i] = layers[i], None
        yield layer


def _array(layer: Any) -> np.ndarray:
    """A layer's maps as a float32 array (a torch tensor's own memory where it can be)."""
    if hasattr(layer, "detach"):
        return layer.detach().to("cpu", copy=False).float().numpy()
    return np.asarray(layer, dtype=np.float32)


def _basic(index: Any) -> bool:
    """One position or a slice (a bool is a mask to numpy, not a position)."""
    return isinstance(index, (int, np.integer, slice)) and not isinstance(index, (bool, np.bool_))


def _rows(index: Any) -> bool:
    """An index of the query axis this class reads without the dense array: one row, a slice, a list."""
    if _basic(index):
        return True
    a = np.asarray(index)
    return a.ndim == 1 and a.dtype.kind in "iu"


class CausalMaps(NDArrayOperatorsMixin):
    """``(layers, heads, n, n)`` causal float32 maps, stored as ``(layers, heads, n (n + 1) / 2)``."""

    ndim = 4
    dtype = np.dtype(np.float32)

    def __init__(self, packed: np.ndarray, n: int) -> None:
        packed = np.asarray(packed)
        if packed.ndim != 3 or packed.shape[-1] != n * (n + 1) // 2 or packed.dtype != np.float32:
            raise ValueError(f"packed causal maps of {n} tokens are (layers, heads, {n * (n + 1) // 2}) float32")
        self.packed = packed
        self.n = int(n)
        self._starts = starts(self.n)

    # building -------------------------------------------------------------------------------------

    @classmethod
    def from_layers(cls, layers: Iterable, count: int) -> CausalMaps:
        """Pack ``count`` per-layer ``(heads, n, n)`` tensors or arrays, one at a time (their upper triangles
        are not read)."""
        out = None
        for i, layer in enumerate(layers):
            layer = _array(layer)
            if out is None:
                heads, n = layer.shape[0], layer.shape[-1]
                out = cls(np.empty((count, heads, n * (n + 1) // 2), dtype=np.float32), n)
            out._pack_into(out.packed[i], layer)
        return out

    @classmethod
    def from_dense(cls, weights: np.ndarray) -> CausalMaps:
        """Pack a dense ``(layers, heads, n, n)`` array."""
        return cls.from_layers(weights, len(weights))

    def _pack_into(self, target: np.ndarray, dense: np.ndarray) -> None:
        s = self._starts
        for i in range(self.n):
            target[..., s[i] : s[i + 1]] = dense[..., i, : i + 1]

    # reading --------------------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int, int, int]:
        L, H, _ = self.packed.shape
        return (L, H, self.n, self.n)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        """The bytes held (the triangle), not the dense array's."""
        return int(self.packed.nbytes)

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self) -> Iterator[np.ndarray]:
        for layer in range(len(self)):
            yield self[layer]

    def rows(self, packed: np.ndarray, rows: Sequence[int] | np.ndarray) -> np.ndarray:
        """Dense ``(..., len(rows), n)`` rows from ``packed`` (``(..., n (n + 1) / 2)``)."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((*packed.shape[:-1], len(rows), self.n), dtype=np.float32)
        s = self._starts
        for at, i in enumerate(rows.tolist()):
            out[..., at, : i + 1] = packed[..., s[i] : s[i + 1]]
        return out

    def __getitem__(self, key: Any) -> Any:
        key = key if isinstance(key, tuple) else (key,)
        if len(key) > 4 or not all(_basic(k) for k in key[:2]) or not all(_rows(k) for k in key[2:]):
            return np.asarray(self)[key]  # Ellipsis, None, masks, several arrays: the dense array's own rules
        layer, head, query, keys = key + (slice(None),) * (4 - len(key))
        if not (_basic(query) or _basic(keys)):
            return np.asarray(self)[key]  # two index arrays broadcast together: as numpy does it
        part = self.packed[layer, head]  # a view; an int layer or head drops its axis, as in the dense array
        picked = np.arange(self.n)[query]  # IndexError for a row that is not there, as numpy says it
        dense = self.rows(part, np.atleast_1d(picked))
        if np.ndim(picked) == 0:
            dense = dense[..., 0, :]
        return dense[..., keys]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self.rows(self.packed, np.arange(self.n))
        return dense if dtype is None else dense.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(np.asarray(x) if isinstance(x, CausalMaps) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """Any other attribute numpy arrays have (``mean``, ``sum``, ``copy``...), on the dense array."""
        if name.startswith("_") or name in ("packed", "n"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def __repr__(self) -> str:
        return f"CausalMaps(shape={self.shape}, {self.nbytes:,} bytes held)"
