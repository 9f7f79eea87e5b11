"""Rooms in one SQLite file on this machine: the default store, so a room outlives the app process.

The :class:`~rooms.store.RoomStore` of ``rooms.store`` with the same rules, kept in the standard
library's SQLite in WAL mode. Every change is one ``BEGIN IMMEDIATE`` transaction (one writer at a
time, across threads and across app processes on this machine; readers never wait for it) and every
read one snapshot, so two answers at the same moment are both kept and a reveal and an answer never
interleave. A commit is in the file's write-ahead log before the call returns, so killing the app,
even with SIGKILL, loses no acknowledged change, and the next process on the same file carries on
with the same rooms, students, answers, question and reveal. (``synchronous=NORMAL``: the log is
flushed to the disk at checkpoints, not at every answer; a power cut may lose the last moments,
an app crash loses nothing.)

Tables: ``rooms`` (code, secret hash, last change, closed, revealed, round, options, version),
``people`` (room, participant id, nickname, joining order), ``questions`` (room, round, question
JSON) and ``answers`` (room, round, participant id, option). Rooms expire :data:`ROOM_TTL_S` after
their last change by the wall clock (it survives a restart, unlike a monotonic one): reads skip an
expired room and the next new room deletes it.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rooms.question import Question, parse_question
from rooms.rules import (
    MAX_PARTICIPANTS,
    MAX_ROOMS,
    MAX_ROUNDS,
    ROOM_TTL_S,
    RoomData,
    RoomError,
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

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
    code TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    touched REAL NOT NULL,
    closed INTEGER NOT NULL DEFAULT 0,
    revealed INTEGER NOT NULL DEFAULT 0,
    round INTEGER NOT NULL DEFAULT 0,
    options INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS people (
    code TEXT NOT NULL, member TEXT NOT NULL, nickname TEXT NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (code, member)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS questions (
    code TEXT NOT NULL, round INTEGER NOT NULL, question TEXT NOT NULL,
    PRIMARY KEY (code, round)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, round INTEGER NOT NULL, member TEXT NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (code, round, member)
) WITHOUT ROWID;
"""
BUSY_TIMEOUT_S = 10.0  # how long a change waits for another writer before the store reports itself unavailable
IDLE_CONNECTIONS = 64  # connections kept open for later calls (Streamlit runs each page run in a thread of its own)
ROOM_COLUMNS = "secret_hash, closed, revealed, round, options, version"
# What every device polls, in one statement: the room, its head count, the current round's choices
# (comma-separated) and the asking participant's own.
STATUS = """SELECT closed, revealed, round, options, version,
    (SELECT COUNT(*) FROM people p WHERE p.code = rooms.code),
    (SELECT group_concat(choice) FROM answers a WHERE a.code = rooms.code AND a.round = rooms.round),
    (SELECT choice FROM answers a WHERE a.code = rooms.code AND a.round = rooms.round AND a.member = ?)"""


class SqliteStore:
    """Rooms in the SQLite file at ``path`` (its folder is made when missing); safe across threads
    (each call borrows a connection of its own) and across processes on one machine (SQLite's locks)."""

    def __init__(
        self,
        path: str | Path,
        *,
        ttl_s: float = ROOM_TTL_S,
        max_rooms: int = MAX_ROOMS,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        self.ttl_s, self.max_rooms, self.clock, self.busy_timeout_s = ttl_s, max_rooms, clock, busy_timeout_s
        self._idle: list[sqlite3.Connection] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as c:
            version = c.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise RuntimeError(
                    f"{self.path} holds rooms in another layout (version {version}); move it away to start afresh"
                )
            c.executescript(SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")

    # ---- connections and transactions

    def _open(self) -> sqlite3.Connection:
        c = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        return c

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for this call alone; SQLite's own failures (a lock held past the busy timeout,
        a full disk, an unreadable file) become :class:`StoreUnavailable`."""
        try:
            c = self._idle.pop()
        except IndexError:
            try:
                c = self._open()
            except sqlite3.OperationalError as e:
                raise StoreUnavailable() from e
        try:
            yield c
        except sqlite3.OperationalError as e:
            c.close()
            raise StoreUnavailable() from e
        except BaseException:
            if c.in_transaction:
                c.close()
            else:
                self._keep(c)
            raise
        else:
            self._keep(c)

    def _keep(self, c: sqlite3.Connection) -> None:
        if len(self._idle) < IDLE_CONNECTIONS:
            self._idle.append(c)
        else:
            c.close()

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[sqlite3.Connection]:
        """One atomic change (``BEGIN IMMEDIATE``: the write lock from the start, so no two changes
        interleave) or one consistent read (a snapshot)."""
        with self._connection() as c:
            c.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield c
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")

    def shutdown(self) -> None:
        """Close the idle connections (the store stays usable: the next call opens one)."""
        while self._idle:
            self._idle.pop().close()

    # ---- helpers inside a transaction

    def _row(self, c: sqlite3.Connection, code: str) -> tuple:
        """The live room's ``(code, secret_hash, closed, revealed, round, options, version)``."""
        code = normalise_code(code)
        row = c.execute(
            f"SELECT {ROOM_COLUMNS} FROM rooms WHERE code = ? AND touched >= ?", (code, self.clock() - self.ttl_s)
        ).fetchone()
        if row is None:
            raise refuse("not_found")
        return (code, *row)

    def _teacher_row(self, c: sqlite3.Connection, code: str, secret: str) -> tuple:
        row = self._row(c, code)
        if not same_secret(secret, row[1]):
            raise refuse("teacher")
        if row[2]:
            raise refuse("closed")
        return row

    def _touch(self, c: sqlite3.Connection, code: str, *, bump: bool = False) -> None:
        c.execute("UPDATE rooms SET touched = ?, version = version + ? WHERE code = ?", (self.clock(), int(bump), code))

    def _purge(self, c: sqlite3.Connection) -> None:
        """Delete the expired rooms with everything they hold."""
        old = (self.clock() - self.ttl_s,)
        for table in ("people", "questions", "answers"):
            c.execute(f"DELETE FROM {table} WHERE code IN (SELECT code FROM rooms WHERE touched < ?)", old)
        c.execute("DELETE FROM rooms WHERE touched < ?", old)

    # ---- the RoomStore protocol

    def create_room(self) -> RoomKeys:
        secret = secrets.token_urlsafe(24)
        with self._transaction(write=True) as c:
            self._purge(c)
            if c.execute("SELECT COUNT(*) FROM rooms").fetchone()[0] >= self.max_rooms:
                raise refuse("rooms")
            code = new_code()
            while c.execute("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone():
                code = new_code()
            c.execute(
                "INSERT INTO rooms (code, secret_hash, touched) VALUES (?, ?, ?)",
                (code, secret_hash(secret), self.clock()),
            )
        return RoomKeys(code, secret)

    def _read(self, sql: str, code: str, *args: object) -> tuple:
        """One statement about the live room ``code`` (the room's columns in ``sql`` refer to ``rooms``):
        a single statement is its own snapshot, so a read needs no transaction. The statement's
        parameters are ``args`` then the code and the expiry time."""
        with self._connection() as c:
            row = c.execute(
                f"{sql} FROM rooms WHERE code = ? AND touched >= ?",
                (*args, normalise_code(code), self.clock() - self.ttl_s),
            ).fetchone()
        if row is None:
            raise refuse("not_found")
        return row

    def get(self, code: str, member: str | None = None) -> RoomStatus:
        closed, revealed, rnd, options, version, people, choices, mine = self._read(STATUS, code, member or "")
        counts = [0] * options
        for choice in choices.split(",") if choices else ():
            counts[int(choice)] += 1
        return RoomStatus(
            normalise_code(code), bool(closed), rnd, bool(revealed), people, sum(counts), tuple(counts), mine, version
        )

    def question(self, code: str, round: int) -> Question:
        (text,) = self._read(
            "SELECT (SELECT question FROM questions q WHERE q.code = rooms.code AND q.round = ?)", code, round
        )
        if text is None:
            raise refuse("no_question")
        return parse_question(text)

    def join(self, code: str, nickname: str = "") -> tuple[str, str]:
        name = clean_nickname(nickname)
        member = secrets.token_urlsafe(16)
        with self._transaction(write=True) as c:
            code, _, closed, *_ = self._row(c, code)
            if closed:
                raise refuse("closed")
            taken = {n for (n,) in c.execute("SELECT nickname FROM people WHERE code = ?", (code,))}
            if len(taken) >= MAX_PARTICIPANTS:
                raise refuse("full")
            name = unique_nickname(name, taken, len(taken) + 1)
            c.execute("INSERT INTO people VALUES (?, ?, ?, ?)", (code, member, name, len(taken)))
            self._touch(c, code)
        return member, name

    def nickname(self, code: str, member: str) -> str:
        (name,) = self._read(
            "SELECT (SELECT nickname FROM people p WHERE p.code = rooms.code AND p.member = ?)", code, member
        )
        if name is None:
            raise refuse("member")
        return name

    def set_question(self, code: str, secret: str, question: Question) -> int:
        with self._transaction(write=True) as c:
            code, *_, rnd, _, _ = self._teacher_row(c, code, secret)
            if rnd >= MAX_ROUNDS:
                raise refuse("rounds")
            rnd += 1
            c.execute("INSERT OR REPLACE INTO questions VALUES (?, ?, ?)", (code, rnd, question.to_json()))
            c.execute(
                "UPDATE rooms SET round = ?, options = ?, revealed = 0 WHERE code = ?",
                (rnd, len(question.options), code),
            )
            self._touch(c, code, bump=True)
        return rnd

    def answer(self, code: str, member: str, round: int, choice: int) -> None:
        with self._transaction(write=True) as c:
            code, _, closed, revealed, rnd, options, _ = self._row(c, code)
            if not c.execute("SELECT 1 FROM people WHERE code = ? AND member = ?", (code, member)).fetchone():
                raise refuse("member")
            check_answer(bool(closed), bool(revealed), rnd, round)
            if not 0 <= choice < options:
                raise refuse("choice")
            c.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (code, rnd, member, int(choice)))
            self._touch(c, code)

    def reveal(self, code: str, secret: str) -> None:
        with self._transaction(write=True) as c:
            code, *_, rnd, _, _ = self._teacher_row(c, code, secret)
            if not rnd:
                raise refuse("no_question")
            c.execute("UPDATE rooms SET revealed = 1 WHERE code = ?", (code,))
            self._touch(c, code, bump=True)

    def close(self, code: str, secret: str) -> None:
        with self._transaction(write=True) as c:
            row = self._row(c, code)
            if not same_secret(secret, row[1]):
                raise refuse("teacher")
            c.execute("UPDATE rooms SET closed = 1 WHERE code = ?", (row[0],))
            self._touch(c, row[0], bump=True)

    def is_teacher(self, code: str, secret: str | None) -> bool:
        return same_secret(secret, self._read("SELECT secret_hash", code)[0])

    def data(self, code: str) -> RoomData:
        with self._transaction(write=False) as c:
            code, _, closed, revealed, rnd, *_ = self._row(c, code)
            people = c.execute("SELECT member, nickname FROM people WHERE code = ? ORDER BY seq", (code,)).fetchall()
            questions = c.execute(
                "SELECT question FROM questions WHERE code = ? AND round <= ? ORDER BY round", (code, rnd)
            ).fetchall()
            answers: list[dict[str, int]] = [{} for _ in range(rnd)]
            for r, member, choice in c.execute("SELECT round, member, choice FROM answers WHERE code = ?", (code,)):
                if 1 <= r <= rnd:
                    answers[r - 1][member] = choice
        return RoomData(
            code, bool(closed), bool(revealed), dict(people), [parse_question(q) for (q,) in questions], answers
        )


__all__ = ["RoomError", "SqliteStore"]
