"""What a room adds up to: per participant and per question, and the CSV files the teacher downloads
(nicknames only: a room keeps no other personal data).

Only finished rounds count: every round before the current one, the current one once revealed,
and all of them once the room is closed, so a summary never gives away an answer early.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from rooms.rules import RoomData

if TYPE_CHECKING:
    from rooms.store import RoomStore


@dataclass(frozen=True)
class ParticipantRow:
    nickname: str
    answered: int  # finished rounds this participant answered
    correct: int
    points: float  # with partial credit (see each Question's points)
    choices: tuple[str | None, ...]  # per finished round: the option chosen, or None
    scores: tuple[float | None, ...]  # per finished round: the points that option earned, or None


@dataclass(frozen=True)
class QuestionRow:
    round: int
    kind: str
    title: str
    answer: str
    answered: int
    correct: int
    counts: tuple[int, ...]  # answers per option

    @property
    def share_correct(self) -> float:
        return self.correct / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class Summary:
    finished: int  # how many rounds count
    participants: tuple[ParticipantRow, ...]  # in joining order
    questions: tuple[QuestionRow, ...]

    def of(self, nickname: str) -> ParticipantRow | None:
        return next((p for p in self.participants if p.nickname == nickname), None)


def finished_rounds(data: RoomData) -> int:
    n = len(data.questions)
    return n if data.closed or data.revealed else max(n - 1, 0)


def summarise(data: RoomData) -> Summary:
    """Per-participant and per-question totals over the finished rounds of ``data``."""
    finished = finished_rounds(data)
    questions = []
    for i in range(finished):
        q, answers = data.questions[i], data.answers[i]
        counts = [0] * len(q.options)
        for choice in answers.values():
            counts[choice] += 1
        questions.append(
            QuestionRow(i + 1, q.kind, q.title, q.options[q.answer], len(answers), counts[q.answer], tuple(counts))
        )
    people = []
    for member, nickname in data.nicknames.items():
        picks = [data.answers[i].get(member) for i in range(finished)]
        qs = data.questions[:finished]
        scores = tuple(None if p is None else q.points[p] for p, q in zip(picks, qs))
        people.append(
            ParticipantRow(
                nickname,
                sum(p is not None for p in picks),
                sum(p == q.answer for p, q in zip(picks, qs)),
                round(sum(s for s in scores if s is not None), 4),
                tuple(None if p is None else q.options[p] for p, q in zip(picks, qs)),
                scores,
            )
        )
    return Summary(finished, tuple(people), tuple(questions))


def room_summary(store: RoomStore, code: str) -> Summary:
    """``summarise(store.data(code))``, worked out once per state of the room. Only finished rounds count,
    and answers change only in the round that is not finished yet, so a summary changes only when the
    teacher acts (a question, a reveal, closing: the room's version) or someone joins: at a reveal the 250
    pages of a lecture that each show their own results share one summary instead of reading the whole
    room 250 times. Any store, any number of app processes (the version is the store's)."""
    status = store.get(code)
    return _summary_at(store, status.code, status.version, status.participants)


@lru_cache(maxsize=64)
def _summary_at(store: RoomStore, code: str, version: int, participants: int) -> Summary:
    return summarise(store.data(code))


def _cell(value: object) -> object:
    """Text a spreadsheet will not run as a formula (a nickname may start with "-")."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return value


def _csv(header: list[str], rows: list[list[object]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[_cell(v) for v in row] for row in rows])
    return out.getvalue()


def participants_csv(summary: Summary) -> str:
    """One row per participant: nickname, totals, then the option chosen in each finished round."""
    header = ["nickname", "answered", "correct", "points", *(f"round {q.round}" for q in summary.questions)]
    rows = [[p.nickname, p.answered, p.correct, p.points, *(c or "" for c in p.choices)] for p in summary.participants]
    return _csv(header, rows)


def answers_csv(summary: Summary) -> str:
    """One row per participant and finished round: what they chose, the answer, whether it was right
    and the points it earned (a round they left out has empty cells)."""
    header = ["nickname", "round", "question", "chosen", "answer", "right", "points"]
    rows = []
    for p in summary.participants:
        for q, choice, score in zip(summary.questions, p.choices, p.scores):
            right = "" if choice is None else ("yes" if choice == q.answer else "no")
            rows.append([p.nickname, q.round, q.title, choice or "", q.answer, right, "" if score is None else score])
    return _csv(header, rows)


def questions_csv(summary: Summary) -> str:
    """One row per finished round: the question, its answer, how many answered and how many got it."""
    header = ["round", "kind", "question", "answer", "answered", "correct", "share correct"]
    rows = [
        [q.round, q.kind, q.title, q.answer, q.answered, q.correct, round(q.share_correct, 4)]
        for q in summary.questions
    ]
    return _csv(header, rows)
