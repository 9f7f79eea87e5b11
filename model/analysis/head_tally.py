"""Running sums of one kind of attention over a corpus, kept on the maps' device (the head finder's pass).

A :class:`KindTally` holds, on the device, each metric's pooled sum and count per head
(:mod:`model.analysis.heads` defines the metrics, :mod:`model.analysis.head_tensors` computes them), every
line's own score per head (for the examples by decile) and, for a square kind, every line's first
``PATTERN_MAX × PATTERN_MAX`` block. Nothing of a line's map is kept beyond those. ``scores`` and
``examples`` bring back only the final scores and the chosen lines; ``per_line`` and ``blocks`` bring the
per-line values back as numpy for the pages and the tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from model.analysis.head_tensors import (
    CROSS_METRICS,
    METRICS,
    accumulator,
    applies,
    cross_sums,
    decile_picks,
    first_blocks,
    layer_sums,
    probe_layer_sums,
)

REDUCE_THREADS = 1  # CPU threads for the reductions (None: torch's own); see :func:`reducing`


@contextmanager
def reducing(device: torch.device):
    """The reductions' CPU threads: :data:`REDUCE_THREADS`, then back. A line's reductions are ~1,000 small
    memory-bound operations, each an OpenMP parallel region that ends at a barrier: on a machine whose cores
    other work holds, a barrier waits for a descheduled thread, and a 512-token GPT-2 line measured 0.2 to
    3.6 s with two threads against 0.07 s with one (2 cores, two training runs beside it). The forward pass's
    few large operations keep every thread. The setting is this thread's (OpenMP's and MKL's per-thread
    count); a thread whose first torch call falls inside also starts with it."""
    before = torch.get_num_threads()
    if device.type != "cpu" or REDUCE_THREADS is None or before <= REDUCE_THREADS:
        yield
        return
    torch.set_num_threads(REDUCE_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def as_tensor(w, device: torch.device) -> Tensor:
    """A map (numpy array, :class:`~model.core.triangle.CausalMaps` or tensor) as a tensor on ``device``."""
    if isinstance(w, Tensor):
        return w.to(device)
    a = np.asarray(w)
    return torch.from_numpy(np.ascontiguousarray(a, dtype=a.dtype if a.dtype == np.float64 else np.float32)).to(device)


@dataclass(eq=False)
class KindTally:
    """Sums of one kind over a corpus (see the module docstring); ``add_batch`` takes a batch of lines."""

    name: str
    cross: bool
    causal: bool
    shape: tuple[int, int]  # (layers, heads)
    device: torch.device | str = "cpu"
    lines: int = 0
    _sum: Tensor = field(init=False, repr=False)  # (len(METRICS), L, H)
    _count: Tensor = field(init=False, repr=False)
    _parts: list = field(default_factory=list, repr=False)  # (line indices, values (b, M, L, H), blocks or None)
    _whole: tuple | None = field(default=None, repr=False)  # the parts in corpus order, once asked for

    def __post_init__(self) -> None:
        self.device = torch.device(self.device)
        self._sum = torch.zeros(len(METRICS), *self.shape, dtype=accumulator(self.device), device=self.device)
        self._count = torch.zeros_like(self._sum)

    @property
    def line_metrics(self) -> tuple[str, ...]:
        """The metrics each line has a score of (all but the induction probes')."""
        base = ("first", "entropy") if self.cross else ("first", "entropy", "previous", "self", "distance")
        names = [m + s for s in ("", "_nosink") for m in base]
        return tuple(names + [m + s for s in ("", "_nosink") for m in CROSS_METRICS] if self.cross else names)

    def _add(self, sums: dict[str, tuple[Tensor, Tensor]]) -> None:
        for name, (s, c) in sums.items():
            self._sum[METRICS.index(name)] += s.to(self._sum.dtype)
            self._count[METRICS.index(name)] += c.to(self._sum.dtype)

    def add_batch(self, layers: Sequence[Tensor], qlen: Sequence[int], klen: Sequence[int], index=None) -> None:
        """A batch of lines: per layer ``(B, H, Tq, Tk)`` right-padded maps on this tally's device, each
        line's query and key counts, and the lines' indices in the corpus (default: the next ``B``)."""
        with reducing(self.device):
            self._add_batch(layers, qlen, klen, index)

    def _add_batch(self, layers: Sequence[Tensor], qlen: Sequence[int], klen: Sequence[int], index) -> None:
        per_layer = []
        for w in layers:
            sums = layer_sums(w, qlen, cross=self.cross, causal=self.causal)
            per_layer.append(sums | cross_sums(w, qlen, klen) if self.cross else sums)
        names = self.line_metrics
        s = torch.stack([torch.stack([p[m][0] for p in per_layer], 1) for m in names], 1)  # (B, M, L, H)
        c = torch.stack([torch.stack([p[m][1] for p in per_layer], 1) for m in names], 1)
        self._add({m: (s[:, j].sum(0), c[:, j].sum(0)) for j, m in enumerate(names)})
        values = torch.where(c > 0, s / torch.where(c > 0, c, 1.0), float("nan")).float()
        index = range(self.lines, self.lines + len(qlen)) if index is None else index
        blocks = None if self.cross else first_blocks(layers, qlen, klen)
        self._parts.append((torch.tensor(list(index), device=self.device), values, blocks))
        self._whole = None
        self.lines += len(qlen)

    def add_line(self, w) -> None:
        """One line's ``(L, H, Tq, Tk)`` map (array, triangle or tensor). Every metric gets one per-line entry
        for every line, NaN where the line has none (a one-token line has no row once the sink is dropped)."""
        t = as_tensor(w, self.device)
        self.add_batch([t[layer][None] for layer in range(t.shape[0])], [t.shape[-2]], [t.shape[-1]])

    def add_probes(self, layers: Sequence[Tensor], start: int, n: int) -> None:
        """Induction probes: per layer ``(P, H, T, T)`` maps whose copies of ``n`` tokens start at ``start``."""
        with reducing(self.device):
            per_layer = [probe_layer_sums(w, start, n) for w in layers]
        self._add({m: tuple(torch.stack([p[m][k].sum(0) for p in per_layer]) for k in (0, 1)) for m in per_layer[0]})

    def add_probe(self, w, start: int, n: int) -> None:
        """One probe's ``(L, H, T, T)`` map."""
        if start < 1:
            raise ValueError("a probe needs a first position before its two copies (start >= 1)")
        t = as_tensor(w, self.device)
        self.add_probes([t[layer][None] for layer in range(t.shape[0])], start, n)

    def reorder(self, order: Sequence[int]) -> None:
        """Put the lines read so far in ``order`` (line ``i`` becomes the ``order[i]``-th read)."""
        new = torch.empty(len(order), dtype=torch.long, device=self.device)
        new[torch.tensor(list(order), device=self.device)] = torch.arange(len(order), device=self.device)
        self._parts = [(new[i], v, b) for i, v, b in self._parts]
        self._whole = None

    def whole(self) -> tuple[Tensor, Tensor | None]:
        """Every line's scores ``(N, M, L, H)`` (M: :attr:`line_metrics`) and blocks, in corpus order, on the
        device; NaN for a line not read here."""
        if self._whole is None:
            n = max([int(i.max()) + 1 for i, _, _ in self._parts if len(i)], default=0)
            L, H = self.shape
            values = torch.full((n, len(self.line_metrics), L, H), float("nan"), device=self.device)
            blocks = None if self.cross else torch.full((n, L, H, 8, 8), float("nan"), device=self.device).half()
            for i, v, b in self._parts:
                values[i] = v
                if blocks is not None:
                    blocks[i] = b
            self._whole = (values, blocks)
        return self._whole

    @property
    def totals(self) -> Tensor:
        """The pooled sums and counts, ``(2, len(METRICS), L, H)`` (a copy; assign to replace them)."""
        return torch.stack([self._sum, self._count])

    @totals.setter
    def totals(self, value: Tensor) -> None:
        self._sum, self._count = value[0].clone(), value[1].clone()

    def pack(self) -> Tensor:
        """The lines read here as one float32 ``(lines, 1 + ...)`` tensor: each line's index, scores and block
        (float16 blocks are exact in float32), for another process to :meth:`unpack`."""
        rows = [
            torch.cat([i[:, None].float(), v.flatten(1)] + ([] if b is None else [b.float().flatten(1)]), 1)
            for i, v, b in self._parts
        ]
        return torch.cat(rows) if rows else torch.empty(0, self._row_width(), device=self.device)

    def _row_width(self) -> int:
        L, H = self.shape
        return 1 + len(self.line_metrics) * L * H + (0 if self.cross else L * H * 64)

    def unpack(self, rows: Tensor) -> None:
        """Replace the lines read so far with ``rows`` (:meth:`pack` of every process; index -1: padding)."""
        rows = rows[rows[:, 0] >= 0]
        L, H, M = *self.shape, len(self.line_metrics)
        values = rows[:, 1 : 1 + M * L * H].reshape(-1, M, L, H)
        blocks = None if self.cross else rows[:, 1 + M * L * H :].reshape(-1, L, H, 8, 8).half()
        self._parts = [(rows[:, 0].long(), values, blocks)]
        self.lines = len(rows)
        self._whole = None

    @property
    def per_line(self) -> dict[str, np.ndarray]:
        """metric -> ``(lines, L, H)`` float32 scores, line by line in corpus order (NaN: none)."""
        values = self.whole()[0].cpu().numpy()
        return {m: values[:, j] for j, m in enumerate(self.line_metrics)}

    @property
    def blocks(self) -> list[np.ndarray]:
        """Per line its first ``(L, H, 8, 8)`` block as float16, NaN past the line; empty for cross-attention."""
        blocks = self.whole()[1]
        return [] if blocks is None else list(blocks.cpu().numpy())

    def scores(self) -> dict[str, np.ndarray]:
        """metric -> ``(L, H)`` pooled means; NaN where the metric does not apply or had no rows."""
        c = self._count
        means = torch.where(c > 0, self._sum / torch.where(c > 0, c, 1.0), float("nan"))
        out = means.cpu().numpy()
        return {
            m: out[j] if applies(m, cross=self.cross, causal=self.causal) else out[j] * np.nan
            for j, m in enumerate(METRICS)
        }

    def examples(self, k: int = 10) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """metric -> each head's example lines ``(k + 1, L, H)`` (the top line, then one per decile), their
        scores, and whether each pick exists; chosen on the device, only the picks come back."""
        values = self.whole()[0]
        if not len(values):
            return {}
        idx, ok = decile_picks(values, k)  # (k + 1, M, L, H)
        picked = values.gather(0, idx)
        idx, picked, ok = idx.cpu().numpy(), picked.cpu().numpy(), ok.cpu().numpy()
        return {m: (idx[:, j], picked[:, j], ok[:, j]) for j, m in enumerate(self.line_metrics)}
