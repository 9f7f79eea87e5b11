"""The head finder's pass over several processes: ``torchrun --nproc-per-node N -m model heads SOURCE``.

torchrun starts the processes and sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and
``MASTER_PORT``; :func:`start` joins them with torch.distributed (NCCL between GPUs, gloo between CPUs),
waiting at most ``timeout`` seconds for the rendezvous. Every process reads its share of the corpus's
batches (:func:`model.analysis.head_scan.scan`), then :func:`merge` adds the pooled sums and counts
(``all_reduce``) and gathers every line's own scores and pattern block (``all_gather``), so that every
process ends with the scores one process would compute; rank 0 prints them.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

from model.analysis.head_tally import KindTally

JOIN_TIMEOUT = 60.0  # seconds to wait for every process at the rendezvous
WORK_TIMEOUT = timedelta(hours=12)  # a collective waits this long for a process still reading its share


_WORK = None  # the group the merge's collectives run in, made by start()


class DistributedError(RuntimeError):
    """The processes could not be joined: the message says where it waited and for how long."""


@dataclass(frozen=True)
class Processes:
    """This process's place among those torchrun started."""

    rank: int
    world: int
    local_rank: int


def from_env(env=None) -> Processes | None:
    """This process's place, from torchrun's variables; None for a process started alone."""
    env = os.environ if env is None else env
    if "WORLD_SIZE" not in env or "RANK" not in env:
        return None
    try:
        return Processes(int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", env["RANK"])))
    except ValueError as err:
        raise DistributedError(f"RANK, WORLD_SIZE and LOCAL_RANK must be integers ({err})") from err


def start(procs: Processes, device: torch.device, timeout: float = JOIN_TIMEOUT) -> None:
    """Join the other processes (NCCL on CUDA, else gloo), or :class:`DistributedError` after ``timeout``
    seconds when the rendezvous cannot be reached or a process does not come."""
    global _WORK
    where = f"{os.environ.get('MASTER_ADDR', '?')}:{os.environ.get('MASTER_PORT', '?')}"
    if procs.rank != 0:  # a plain socket first: torch's own retries log C++ stack traces while they wait
        _reach(os.environ.get("MASTER_ADDR", ""), os.environ.get("MASTER_PORT", ""), timeout, procs)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    try:
        dist.init_process_group(
            backend, init_method="env://", rank=procs.rank, world_size=procs.world, timeout=timedelta(seconds=timeout)
        )
        _WORK = dist.new_group(timeout=WORK_TIMEOUT)  # the merge may wait on a process still reading its share
    except (RuntimeError, ValueError, TimeoutError, OSError) as err:  # DistStoreError, DistNetworkError...
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DistributedError(
            f"process {procs.rank} of {procs.world} could not join the others at {where} within {timeout:g} s "
            f"({first}); is the rendezvous address reachable and every process started?"
        ) from err


def _reach(host: str, port: str, timeout: float, procs: Processes) -> None:
    """Wait until ``host:port`` (rank 0's store) takes a connection, or :class:`DistributedError` after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=max(0.1, min(2.0, deadline - time.monotonic()))):
                return
        except (OSError, ValueError) as err:
            if time.monotonic() >= deadline:
                raise DistributedError(
                    f"process {procs.rank} of {procs.world} could not reach the rendezvous at {host}:{port} within "
                    f"{timeout:g} s ({err}); is MASTER_ADDR reachable from here and process 0 started?"
                ) from err
            time.sleep(0.25)


def stop() -> None:
    """Leave the process group, if this process joined one."""
    global _WORK
    _WORK = None
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def merge(tallies: dict[str, KindTally], counts: np.ndarray, spec, *, device: torch.device) -> np.ndarray:
    """Make every process's ``tallies`` the whole corpus's (in ``spec``'s kind order; a process that read no
    line gets the kinds the others saw) and return ``counts`` summed over the processes."""
    group = _WORK or dist.new_group(timeout=WORK_TIMEOUT)
    shapes: list[dict] = [{}] * dist.get_world_size()
    dist.all_gather_object(shapes, {name: t.shape for name, t in tallies.items()}, group=group)
    seen = {name: shape for part in shapes for name, shape in part.items()}
    for k in spec.kinds:
        if k.name in seen and k.name not in tallies:
            tallies[k.name] = KindTally(k.name, k.cross, k.causal, seen[k.name], device)
    order = [k.name for k in spec.kinds if k.name in tallies]
    ordered = {name: tallies.pop(name) for name in order}
    tallies.update(ordered)
    for t in tallies.values():
        totals = t.totals
        dist.all_reduce(totals, group=group)
        t.totals = totals
        rows = t.pack()
        sizes: list[int] = [0] * dist.get_world_size()
        dist.all_gather_object(sizes, len(rows), group=group)
        padded = torch.full((max(sizes), rows.shape[1]), -1.0, device=rows.device)
        padded[: len(rows)] = rows
        every = [torch.empty_like(padded) for _ in sizes]
        dist.all_gather(every, padded, group=group)
        t.unpack(torch.cat(every))
    total = torch.tensor(counts, dtype=torch.float64, device=device)
    dist.all_reduce(total, group=group)
    return total.cpu().numpy().astype(np.int64)
