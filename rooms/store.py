"""Classroom rooms: a teacher asks, every student answers, the teacher reveals; no streamlit here.

A room has a short join code, a teacher secret (only its holder may ask, reveal or close), its
participants (a random id each, known only to that student's session and page address, and a nickname) and its
rounds: one :class:`~rooms.question.Question` each, with at most one answer per
participant, changeable until the reveal. Every store (:class:`RoomStore`) keeps the same data
and obeys the same rules (``tests/test_room_contract.py`` runs one suite against each):

- ``rooms.sqlite_store.SqliteStore``, the default: one SQLite file on this machine
  (:func:`rooms_path`: ``.attention/rooms.sqlite3`` in the checkout, or in ``$ATTENTION_ROOMS_DIR``),
  so rooms survive a restart of the app and app processes on one machine share them;
- ``rooms.redis_store.RedisStore`` at ``$ATTENTION_ROOMS_REDIS_URL``, for app processes on several
  machines;
- :class:`MemoryStore`, in this process's memory, for tests.

:func:`open_store` picks Redis when its URL is set, else the file. Rooms expire after ``ROOM_TTL_S``
seconds without a change. The rules every store applies, and the types they return, are in
``rooms.rules``; a store that does not answer raises :class:`~rooms.rules.StoreUnavailable`.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rooms.question import Question
from rooms.rules import (
    MAX_PARTICIPANTS,
    MAX_ROOMS,
    MAX_ROUNDS,
    ROOM_TTL_S,
    RoomData,
    RoomKeys,
    RoomStatus,
    StoreUnavailable,
    check_answer,
    clean_nickname,
    new_code,
    normalise_code,
    refuse,
    same_secret,
    secret_hash,
    unique_nickname,
)

REDIS_ENV = "ATTENTION_ROOMS_REDIS_URL"
ROOMS_DIR_ENV = "ATTENTION_ROOMS_DIR"
ROOMS_DIR = Path(__file__).resolve().parents[1] / ".attention"  # ignored by git
ROOMS_FILE = "rooms.sqlite3"


class RoomStore(Protocol):
    """The one interface of every store. Every method is atomic; a refusal raises
    :class:`~rooms.rules.RoomError` (its subclass :class:`~rooms.rules.StoreUnavailable` when the
    store does not answer)."""

    def create_room(self) -> RoomKeys: ...
    def get(self, code: str, member: str | None = None) -> RoomStatus: ...
    def question(self, code: str, round: int) -> Question: ...
    def join(self, code: str, nickname: str = "") -> tuple[str, str]: ...
    def nickname(self, code: str, member: str) -> str: ...
    def set_question(self, code: str, secret: str, question: Question) -> int: ...
    def answer(self, code: str, member: str, round: int, choice: int) -> None: ...
    def reveal(self, code: str, secret: str) -> None: ...
    def close(self, code: str, secret: str) -> None: ...
    def is_teacher(self, code: str, secret: str | None) -> bool: ...
    def data(self, code: str) -> RoomData: ...


@dataclass
class _Room:
    secret_hash: str
    touched: float
    closed: bool = False
    revealed: bool = False
    version: int = 0
    nicknames: dict[str, str] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    answers: list[dict[str, int]] = field(default_factory=list)


class MemoryStore:
    """Rooms in this process's memory behind one lock: every method is atomic."""

    def __init__(
        self, *, ttl_s: float = ROOM_TTL_S, max_rooms: int = MAX_ROOMS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl_s, self.max_rooms, self.clock = ttl_s, max_rooms, clock
        self._rooms: dict[str, _Room] = {}
        self._lock = threading.Lock()

    def _expire(self) -> None:
        now = self.clock()
        for code in [c for c, r in self._rooms.items() if now - r.touched > self.ttl_s]:
            del self._rooms[code]

    def _room(self, code: str) -> _Room:
        self._expire()
        room = self._rooms.get(normalise_code(code))
        if room is None:
            raise refuse("not_found")
        return room

    def _teacher_room(self, code: str, secret: str) -> _Room:
        room = self._room(code)
        if not same_secret(secret, room.secret_hash):
            raise refuse("teacher")
        if room.closed:
            raise refuse("closed")
        return room

    def create_room(self) -> RoomKeys:
        with self._lock:
            self._expire()
            if len(self._rooms) >= self.max_rooms:
                raise refuse("rooms")
            code = new_code()
            while code in self._rooms:
                code = new_code()
            secret = secrets.token_urlsafe(24)
            self._rooms[code] = _Room(secret_hash(secret), self.clock())
            return RoomKeys(code, secret)

    def get(self, code: str, member: str | None = None) -> RoomStatus:
        with self._lock:
            room = self._room(code)
            n = len(room.questions)
            answers = room.answers[-1] if n else {}
            counts = [0] * (len(room.questions[-1].options) if n else 0)
            for choice in answers.values():
                counts[choice] += 1
            return RoomStatus(
                normalise_code(code),
                room.closed,
                n,
                room.revealed,
                len(room.nicknames),
                len(answers),
                tuple(counts),
                answers.get(member) if member else None,
                room.version,
            )

    def question(self, code: str, round: int) -> Question:
        with self._lock:
            room = self._room(code)
            if not 1 <= round <= len(room.questions):
                raise refuse("no_question")
            return room.questions[round - 1]

    def join(self, code: str, nickname: str = "") -> tuple[str, str]:
        name = clean_nickname(nickname)
        with self._lock:
            room = self._room(code)
            if room.closed:
                raise refuse("closed")
            if len(room.nicknames) >= MAX_PARTICIPANTS:
                raise refuse("full")
            member = secrets.token_urlsafe(16)
            name = unique_nickname(name, set(room.nicknames.values()), len(room.nicknames) + 1)
            room.nicknames[member] = name
            room.touched = self.clock()
            return member, name

    def nickname(self, code: str, member: str) -> str:
        with self._lock:
            room = self._room(code)
            if member not in room.nicknames:
                raise refuse("member")
            return room.nicknames[member]

    def set_question(self, code: str, secret: str, question: Question) -> int:
        with self._lock:
            room = self._teacher_room(code, secret)
            if len(room.questions) >= MAX_ROUNDS:
                raise refuse("rounds")
            room.questions.append(question)
            room.answers.append({})
            room.revealed, room.version, room.touched = False, room.version + 1, self.clock()
            return len(room.questions)

    def answer(self, code: str, member: str, round: int, choice: int) -> None:
        with self._lock:
            room = self._room(code)
            if member not in room.nicknames:
                raise refuse("member")
            check_answer(room.closed, room.revealed, len(room.questions), round)
            if not 0 <= choice < len(room.questions[-1].options):
                raise refuse("choice")
            room.answers[-1][member] = choice
            room.touched = self.clock()

    def reveal(self, code: str, secret: str) -> None:
        with self._lock:
            room = self._teacher_room(code, secret)
            if not room.questions:
                raise refuse("no_question")
            room.revealed, room.version, room.touched = True, room.version + 1, self.clock()

    def close(self, code: str, secret: str) -> None:
        with self._lock:
            room = self._room(code)
            if not same_secret(secret, room.secret_hash):
                raise refuse("teacher")
            room.closed, room.version, room.touched = True, room.version + 1, self.clock()

    def is_teacher(self, code: str, secret: str | None) -> bool:
        with self._lock:
            return same_secret(secret, self._room(code).secret_hash)

    def data(self, code: str) -> RoomData:
        with self._lock:
            r = self._room(code)
            return RoomData(
                normalise_code(code),
                r.closed,
                r.revealed,
                dict(r.nicknames),
                list(r.questions),
                [dict(a) for a in r.answers],
            )


_stores: dict[tuple[str, str], RoomStore] = {}
_stores_lock = threading.Lock()


def rooms_path() -> Path:
    """The default store's file: ``rooms.sqlite3`` in ``$ATTENTION_ROOMS_DIR``, else in ``.attention/``
    of the checkout."""
    folder = os.environ.get(ROOMS_DIR_ENV, "").strip()
    return (Path(folder).expanduser() if folder else ROOMS_DIR) / ROOMS_FILE


def open_store() -> RoomStore:
    """The process's store: Redis at ``$ATTENTION_ROOMS_REDIS_URL`` when set, else the SQLite file at
    :func:`rooms_path`. One store object per setting, shared by every session of the process."""
    url = os.environ.get(REDIS_ENV, "").strip()
    key = ("redis", url) if url else ("sqlite", str(rooms_path()))
    with _stores_lock:
        if key not in _stores:
            if url:
                from rooms.redis_store import RedisStore

                _stores[key] = RedisStore.from_url(url)
            else:
                from rooms.sqlite_store import SqliteStore

                _stores[key] = SqliteStore(key[1])
        return _stores[key]


def reset_stores() -> None:
    """Forget the process's store objects (the rooms stay in their file or Redis): tests that point
    ``$ATTENTION_ROOMS_DIR`` at a fresh folder then start from an empty store."""
    with _stores_lock:
        for store in _stores.values():
            getattr(store, "shutdown", lambda: None)()
        _stores.clear()


__all__ = ["MemoryStore", "RoomStore", "StoreUnavailable", "open_store", "reset_stores", "rooms_path"]
