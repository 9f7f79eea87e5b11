"""What a student's phone shows of a classroom round (issue 43, item 10): the explorers a question uses
come compact (the map, its tabs and legend; no view tabs, colour-scale or SVG buttons, no keyboard
help that says a click "explains the weight"), and the room's charts have no Plotly toolbar, which a
tap on a touch screen draws over the chart's title."""

from __future__ import annotations

import json

import pytest

from pages.teach import join_link
from rooms.store import reset_stores
from tests.apptest import explorers, page
from tests.test_page_classroom import ask, click_key, join, start_room

PAGE = page("classroom")
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch):
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setattr(join_link, "lan_address", lambda: "192.168.1.20")
    reset_stores()
    yield
    reset_stores()


def chart_configs(at) -> list[dict]:
    return [json.loads(c.proto.config) for c in at.get("plotly_chart")]


def test_the_answer_and_the_reveal_show_only_what_the_question_uses():
    teacher, code = start_room()
    student = join(code, "Ann")
    ask(teacher, "attend", 0)
    student.run()
    (choice,) = explorers(student)
    assert choice.get("compact") is True  # the choice row: no tools around it
    click_key(student, 4)
    teacher.toggle(key="cr_show_hist").set_value(True).run()
    teacher.button(key="cr_reveal").click().run()
    student.run()
    (reveal,) = explorers(student)
    assert reveal.get("compact") is True
    for at in (teacher, student):
        configs = chart_configs(at)
        assert configs and all(c.get("displayModeBar") is False for c in configs)
