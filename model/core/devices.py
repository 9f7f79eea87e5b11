"""Which device a command runs on: ``auto`` (CUDA, then Apple MPS, then the CPU, as
:func:`pick_device` picks) or the one named, refused with the devices that are there
when it is not."""

from __future__ import annotations

import torch

NAMES = ("auto", "cpu", "cuda", "mps")


class DeviceError(ValueError):
    """A device this machine does not have (or a name that is no device): the message lists those it has."""


def pick_device(name: str = "auto") -> torch.device:
    """CUDA, then Apple MPS, then CPU, unless ``name`` names one."""
    if name != "auto":
        return torch.device(name)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def available() -> list[str]:
    """The kinds of device this machine has: ``cpu``, and ``cuda`` and ``mps`` where torch sees them."""
    out = ["cpu"]
    if torch.cuda.is_available():
        out.append("cuda" if torch.cuda.device_count() == 1 else f"cuda (0..{torch.cuda.device_count() - 1})")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        out.append("mps")
    return out


def choose(name: str = "auto", *, index: int | None = None) -> torch.device:
    """The device ``name`` (``auto``, ``cpu``, ``cuda``, ``cuda:1``, ``mps``) stands for here; ``index`` picks
    the GPU where the name does not (one process per GPU: its local rank). :class:`DeviceError` for a
    device that is not there."""
    try:
        device = pick_device(name or "auto")
    except RuntimeError as err:  # torch.device("gpu"): "Expected one of cpu, cuda, ... device type"
        raise DeviceError(f"--device {name!r} is not a device; give one of {', '.join(NAMES)}") from err
    here = ", ".join(available())
    if device.type not in ("cpu", "cuda", "mps"):
        raise DeviceError(f"--device {name}: this command runs on {', '.join(NAMES)}; this machine has {here}")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"--device {name}: there is no CUDA device here; this machine has {here}")
    if device.type == "mps" and "mps" not in here:
        raise DeviceError(f"--device {name}: there is no Apple MPS device here; this machine has {here}")
    if device.type == "cuda" and device.index is None and index is not None:
        if index >= torch.cuda.device_count():
            raise DeviceError(f"process {index} has no GPU of its own here ({here}): start one process per GPU")
        device = torch.device("cuda", index)
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise DeviceError(f"--device {name}: there is no GPU {device.index} here; this machine has {here}")
    return device
