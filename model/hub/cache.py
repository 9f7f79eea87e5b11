"""Many learners, one server: Hugging Face models kept by id within a memory budget.

Every session of the app may open a model of its own. :class:`ModelCache` keeps each loaded model by its key
(the id or folder and the device) while the models together fit a byte budget (:func:`memory_budget`:
``$ATTENTION_HUB_MEMORY_MB``, else :data:`DEFAULT_MEMORY_MB`). A model a live session is using is **pinned**:
the cache never lets it go. To make room for another, it lets go of unpinned models, least recently used first;
when the pinned ones leave no room, it refuses with :class:`CacheFull` (a :class:`~model.hub.errors.HubError`
whose message says so in plain words) rather than take a model from someone using it.

A holder (a session, or one panel of a session) pins one model at a time: opening another moves its pin. A pin
is a lease, renewed each time its holder asks for its model; one not renewed for :data:`PIN_TTL_S` seconds
lapses (the session was closed or left idle), so a model nobody is using can go. The size of a model is the
bytes of its parameters and buffers (:func:`model_bytes`); before a download, :data:`BYTES_PER_PARAM` times its
parameter count (float32, as :func:`model.hub.load.load` loads). Pure Python and thread-safe: the app keeps one
cache per process and calls it from every session's thread.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from model.hub.errors import HubError

MEMORY_ENV = "ATTENTION_HUB_MEMORY_MB"
# README, "Memory on Streamlit Community Cloud": plan for about 1 GB, of which the app with its own three models
# takes 542 MB; a 124 M-parameter model (GPT-2 small) is 500 MB of float32 weights. 600 MB holds one such
# model, as the one-model page always did, or several small ones (DistilBERT 66 M: 265 MB).
DEFAULT_MEMORY_MB = 600
BYTES_PER_PARAM = 4  # float32
PIN_TTL_S = 30 * 60.0  # a holder that has not asked for its model in this long no longer keeps it


class CacheFull(HubError):
    """The models in use leave no room for another one within the budget."""


def memory_budget() -> int:
    """The bytes the cache may keep: ``$ATTENTION_HUB_MEMORY_MB`` megabytes, else :data:`DEFAULT_MEMORY_MB`."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return DEFAULT_MEMORY_MB * 2**20
    try:
        mb = float(raw)
    except ValueError as err:
        raise HubError(f"{MEMORY_ENV}={raw!r} is not a number of megabytes (e.g. 1500)") from err
    if mb <= 0:
        raise HubError(f"{MEMORY_ENV}={raw!r} must be more than 0 megabytes")
    return int(mb * 2**20)


def model_bytes(module: Any) -> int:
    """The bytes of a PyTorch module's parameters and buffers (shared tensors counted once)."""
    seen, total = set(), 0
    for t in [*module.parameters(), *module.buffers()]:
        if t.data_ptr() in seen:
            continue
        seen.add(t.data_ptr())
        total += t.numel() * t.element_size()
    return total


def megabytes(n: int) -> str:
    """Bytes as a reader says them: ``"about 480 MB"``."""
    return f"about {n / 2**20:,.0f} MB"


@dataclass
class _Entry:
    value: Any
    nbytes: int


class ModelCache:
    """Models by key within ``budget`` bytes: least recently used first out, never one that is pinned.

    ``clock`` (seconds, default :func:`time.monotonic`) times the pins' leases; ``on_evict(key, value)`` hears
    of every model let go (the page drops that model's kept runs with it)."""

    def __init__(
        self,
        budget: int,
        *,
        pin_ttl: float = PIN_TTL_S,
        clock: Callable[[], float] = time.monotonic,
        on_evict: Callable[[Hashable, Any], None] | None = None,
    ) -> None:
        self.budget, self.pin_ttl, self.clock, self.on_evict = int(budget), pin_ttl, clock, on_evict
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()  # oldest use first
        self._pins: dict[Hashable, tuple[Hashable, float]] = {}  # holder -> (key, when last renewed)
        self._lock = threading.RLock()
        self._loading: dict[Hashable, threading.Lock] = {}

    # what the cache holds
    def keys(self) -> list[Hashable]:
        """The kept keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def used(self) -> int:
        """Bytes of every kept model."""
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())

    def pinned(self, *, besides: Hashable | None = None) -> dict[Hashable, set[Hashable]]:
        """Kept key -> the holders whose live pins keep it (``besides``: leaving that holder out)."""
        with self._lock:
            self._lapse()
            out: dict[Hashable, set[Hashable]] = {}
            for holder, (key, _) in self._pins.items():
                if holder != besides and key in self._entries:
                    out.setdefault(key, set()).add(holder)
            return out

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    # using it
    def get(self, key: Hashable, holder: Hashable) -> Any | None:
        """The model kept under ``key``, now the most recently used and pinned by ``holder`` (whose pin on any
        other model is let go), or None when it is not kept."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            self._pins[holder] = (key, self.clock())
            return entry.value

    def room(self, holder: Hashable | None = None) -> int:
        """The most bytes a new model could have: the budget less every model pinned by another holder than
        ``holder`` (``holder``'s own pin moves to the new model)."""
        with self._lock:
            held = self.pinned(besides=holder)
            return self.budget - sum(self._entries[k].nbytes for k in held)

    def check(self, nbytes: int, holder: Hashable | None = None, *, name: str = "this model") -> None:
        """Raise :class:`CacheFull` when a model of ``nbytes`` could not be kept beside the pinned ones,
        without letting go of anything: call it before loading a model (``name`` for the message)."""
        with self._lock:
            room = self.room(holder)
            if nbytes <= room:
                return
            held = self.pinned(besides=holder)
            users = len({h for hs in held.values() for h in hs})
            if nbytes > self.budget:
                raise CacheFull(
                    f"{name} needs {megabytes(nbytes)} of memory, more than the {megabytes(self.budget)} this "
                    "server keeps for models; pick a smaller model"
                )
            raise CacheFull(
                f"this server's memory for models is full: {users} other "
                f"{'person is' if users == 1 else 'people are'} using {len(held)} "
                f"model{'s' if len(held) != 1 else ''} ({megabytes(self.budget - room)} of the "
                f"{megabytes(self.budget)} it keeps), and {name} needs {megabytes(nbytes)}. No one's model is "
                "taken away while they use it: try again in a few minutes, or pick a smaller model"
            )

    def put(self, key: Hashable, value: Any, nbytes: int, holder: Hashable, *, name: str = "this model") -> Any:
        """Keep ``value`` under ``key`` (``nbytes`` of memory), pinned by ``holder``, after letting go of
        unpinned models, least recently used first, until it fits; :class:`CacheFull` (and nothing let go)
        when the pinned ones leave no room. Returns what is kept under ``key`` (an earlier copy wins)."""
        with self._lock:
            if key in self._entries:
                return self.get(key, holder)
            self.check(nbytes, holder, name=name)
            self._pins.pop(holder, None)  # its old model is no longer in use by it
            held = self.pinned()
            for old in list(self._entries):
                if self.used() + nbytes <= self.budget:
                    break
                if old not in held:
                    self._evict(old)
            self._entries[key] = _Entry(value, int(nbytes))
            self._pins[holder] = (key, self.clock())
            return value

    def release(self, holder: Hashable) -> None:
        """``holder`` no longer uses its model (it stays kept until room is needed)."""
        with self._lock:
            self._pins.pop(holder, None)

    def loading(self, key: Hashable) -> threading.Lock:
        """A lock per key: two sessions asking for the same model at once wait for one load."""
        with self._lock:
            return self._loading.setdefault(key, threading.Lock())

    def clear(self) -> None:
        """Let go of every model and pin."""
        with self._lock:
            for key in list(self._entries):
                self._evict(key)
            self._pins.clear()

    def _evict(self, key: Hashable) -> None:
        entry = self._entries.pop(key)
        self._loading.pop(key, None)
        if self.on_evict:
            self.on_evict(key, entry.value)

    def _lapse(self) -> None:
        """Drop pins not renewed for ``pin_ttl`` seconds, and pins on keys no longer kept."""
        now = self.clock()
        for holder, (key, when) in list(self._pins.items()):
            if now - when > self.pin_ttl or key not in self._entries:
                del self._pins[holder]
