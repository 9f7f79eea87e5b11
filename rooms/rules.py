"""The rules every classroom store obeys, and what the stores hand back; no streamlit here.

Limits (rooms, participants, rounds), the refusals (:class:`RoomError`, one fixed ``reason`` word and
a message for people; :class:`StoreUnavailable` when the store itself does not answer), join codes, nicknames, the teacher secret (stores keep its hash) and
:func:`check_answer`; :class:`RoomKeys`, :class:`RoomStatus` and :class:`RoomData` are what
every store (``rooms.store.MemoryStore``, ``rooms.sqlite_store.SqliteStore``, ``rooms.redis_store.RedisStore``)
returns.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass, field

from rooms.question import Question

ROOM_TTL_S = 3 * 3600  # idle rooms go after three hours
MAX_ROOMS = 500  # rooms alive at once (per store)
MAX_PARTICIPANTS = 250  # per room
MAX_ROUNDS = 100  # questions per room
NICKNAME_MAX = 24
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector
CODE_LENGTH = 6
NICKNAME_PUNCTUATION = " -_.'"


class RoomError(Exception):
    """A refused action. ``reason`` is a fixed word for code and tests; ``str(e)`` is for people and
    never repeats what they typed."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


MESSAGES = {
    "not_found": "There is no room with that code: it may have ended, expired after 3 hours idle, or been mistyped.",
    "closed": "The teacher has closed this room.",
    "full": f"This room is full ({MAX_PARTICIPANTS} people).",
    "rooms": "Too many rooms are open on this server right now; try again later.",
    "teacher": "Only the teacher of this room can do that.",
    "member": "You are not in this room (yet): join it first.",
    "revealed": "The answer has been revealed: answers for this question are closed.",
    "stale": "The teacher has moved on to another question; answer the new one.",
    "no_question": "There is no question to answer yet.",
    "choice": "That is not one of the answers.",
    "rounds": f"This room has asked its {MAX_ROUNDS} questions; start a new room.",
    "unavailable": "The room is not answering right now; this page keeps trying. Answers already sent are kept.",
}


class StoreUnavailable(RoomError):
    """The store did not answer (Redis down or restarting, the room file locked for too long) after the
    store's own retries. Nothing was refused: the same call may work a moment later, so a page shows
    the message and tries again on its next poll. A :class:`RoomError`, so every page that shows a
    refusal shows this too."""

    def __init__(self) -> None:
        super().__init__("unavailable", MESSAGES["unavailable"])


def refuse(reason: str) -> RoomError:
    return RoomError(reason, MESSAGES.get(reason, "The room could not do that; try again."))


def normalise_code(raw: str | None) -> str:
    """``" abc-234 "`` -> ``"ABC234"``; RoomError("not_found") when it cannot be a code."""
    code = "".join(ch for ch in (raw or "").upper() if ch not in " -\t")
    if len(code) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in code):
        raise refuse("not_found")
    return code


def clean_nickname(raw: str | None) -> str:
    """A nickname: letters, digits, spaces and ``-_.'`` only, 1..NICKNAME_MAX characters; ``""``
    when none was given (the store then names the student). RoomError("nickname") otherwise, with
    a message that names every rule the text breaks (markup is refused for its characters, however
    long it is) and does not repeat the text."""
    name = " ".join(unicodedata.normalize("NFKC", raw or "").split())
    wrong = []
    if any(not (ch.isalnum() or ch in NICKNAME_PUNCTUATION) for ch in name):
        wrong.append(
            "A nickname may use letters, digits, spaces and - _ . ' only: this one has other characters (markup or symbols)."
        )
    if len(name) > NICKNAME_MAX:
        wrong.append(f"A nickname has at most {NICKNAME_MAX} characters: this one has {len(name)}.")
    if wrong:
        raise RoomError("nickname", " ".join(wrong))
    return name


def unique_nickname(name: str, taken: set[str], number: int) -> str:
    """``name`` (or ``"Student <number>"``), with `` (2)``, `` (3)``... when taken."""
    base = name or f"Student {number}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base[: NICKNAME_MAX - 5]} ({n})", n + 1
    return candidate


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def secret_hash(secret: str) -> str:
    """Stores keep a hash of the teacher secret, never the secret."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def same_secret(secret: str | None, stored_hash: str) -> bool:
    return bool(secret) and hmac.compare_digest(secret_hash(secret), stored_hash)


@dataclass(frozen=True)
class RoomKeys:
    """What :meth:`RoomStore.create_room` hands the teacher: the join code and the teacher secret."""

    code: str
    secret: str


@dataclass(frozen=True)
class RoomStatus:
    """The cheap view of a room that every device polls."""

    code: str
    closed: bool
    round: int  # 0 before the first question
    revealed: bool
    participants: int
    answered: int  # answers to the current round
    counts: tuple[int, ...]  # answers per option of the current round
    mine: int | None  # the asking participant's answer to the current round
    version: int  # changes with every teacher action (a new question, a reveal, closing)


@dataclass
class RoomData:
    """Everything a room holds, for summaries; the same from every store."""

    code: str
    closed: bool
    revealed: bool
    nicknames: dict[str, str]  # participant id -> nickname, in joining order
    questions: list[Question]  # round i + 1 is questions[i]
    answers: list[dict[str, int]] = field(default_factory=list)  # per round: participant id -> option


def check_answer(closed: bool, revealed: bool, rounds: int, round: int) -> None:
    """The rules every store applies before taking an answer to ``round``."""
    if closed:
        raise refuse("closed")
    if rounds == 0:
        raise refuse("no_question")
    if round != rounds:
        raise refuse("stale")
    if revealed:
        raise refuse("revealed")
