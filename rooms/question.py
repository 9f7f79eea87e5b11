"""The record of one classroom round: self-contained plain values (text, numbers, lists), so every
device and every app process shows the same round without running a model, and a store keeps it as
JSON. Questions are built from models in ``model.lessons.questions``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache


@dataclass(frozen=True)
class Question:
    """One round. ``prompt`` and ``explanation`` are plain text (pages escape them);
    ``figure`` holds the numbers shown with the question (``{}``: none) and ``reveal`` those shown
    with the answer: ``{"title", "tokens", "weights", "highlight_row", "names", "causal"}``, where
    ``weights`` is ``(T, T)`` for one map or ``(n, T, T)`` with one name per map, and ``causal`` (when
    true) says the model cannot see later tokens. Every value is JSON-able (lists, not arrays)."""

    kind: str
    number: int
    title: str
    prompt: str
    options: tuple[str, ...]
    points: tuple[float, ...]  # per option: 1 for the answer, partial credit or 0 otherwise
    answer: int
    explanation: str
    figure: dict = field(default_factory=dict)
    reveal: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.options) < 2 or len(set(self.options)) != len(self.options):
            raise ValueError("a question needs at least two different options")
        if len(self.points) != len(self.options) or not 0 <= self.answer < len(self.options):
            raise ValueError("points must match the options and the answer must be one of them")

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Question:
        d = json.loads(text)
        return cls(**{**d, "options": tuple(d["options"]), "points": tuple(d["points"])})


@lru_cache(maxsize=64)
def parse_question(text: str) -> Question:
    """:meth:`Question.from_json`, once per text: a store reads the same round for every device of a room
    (250 at a lecture's reveal), and a question with its reveal's weights is long to parse. Every caller
    gets the same record, as from the in-process store: read it, never change it."""
    return Question.from_json(text)
