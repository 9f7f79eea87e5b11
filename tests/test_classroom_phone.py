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


def test_the_reveal_costs_each_device_little(monkeypatch):
    """At the reveal every device redraws at once (a lecture: 250 on one process, bench.classroom_load), so
    what is the same on every device is built once (the answers' histogram), and a student's own results
    are a Markdown table, not a data grid (its Arrow conversion was a third of a student's page run)."""
    from pages.teach import room_parts

    room_parts.revealed_histogram.cache_clear()
    built = []
    real = room_parts.answer_histogram
    monkeypatch.setattr(room_parts, "answer_histogram", lambda *a, **k: built.append(1) or real(*a, **k))
    teacher, code = start_room()
    students = [join(code, name) for name in ("Ann", "Bob", "Cy")]
    ask(teacher, "attend", 0)
    for s, key in zip(students, (4, 0, 4)):
        s.run()
        click_key(s, key)
    teacher.button(key="cr_reveal").click().run()
    for s in students:
        s.run()
        assert "The answer" in " ".join(m.value for m in [*s.success, *s.info])
    assert len(built) == 1  # one histogram for the teacher and the three students
    ann = students[0]
    assert not ann.dataframe  # the student's results: no data grid
    table = next(m.value for m in ann.markdown if m.value.startswith("| round |"))
    assert "| 1 |" in table and "4:dessert" in table and "1.00" in table
