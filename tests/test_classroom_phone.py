"""What a student's phone shows of a classroom round (issue 43, item 10): the explorers a question uses
come compact (the map, its tabs and legend; no view tabs, colour-scale or SVG buttons, no keyboard
help that says a click "explains the weight"), and the room's charts have no Plotly toolbar, which a
tap on a touch screen draws over the chart's title. A question's candidate maps are one chart each (a
phone stacks them at its full width; issue 51), and answer counts tick in whole numbers (issue 52)."""

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
def fresh_store(monkeypatch, tmp_path):
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setenv("ATTENTION_ROOMS_DIR", str(tmp_path))
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


@pytest.mark.parametrize("top, step", [(1, 1), (3, 1), (6, 1), (7, 2), (13, 5), (40, 10), (250, 50)])
def test_the_histogram_counts_in_whole_numbers(top, step):
    """A count axis ticks 0, 1, 2, ... (never 0.5 answers), at most 6 steps, however large the room."""
    from viz.classroom import answer_histogram

    axis = answer_histogram(["a", "b"], [top, 0]).to_plotly_json()["layout"]["xaxis"]
    assert (axis["tick0"], axis["dtick"], axis["tickformat"]) == (0, step, "d")
    assert isinstance(axis["dtick"], int) and axis["range"][1] / axis["dtick"] <= 6 * 1.3


def test_each_candidate_head_is_its_own_chart_on_one_scale():
    """One head a chart (a phone stacks them, each at its full width), titled with its name, the four on the
    colour scale of the largest weight among them, so they compare as in one grid."""
    import numpy as np

    from model.lessons.questions import previous_question
    from viz.classroom import candidate_head

    maps = np.full((2, 2, 4, 4), 0.25)
    maps[1, 1] = np.eye(4)
    q = previous_question(1, maps, list("ab c"))
    figures = [candidate_head(q.figure, i).to_plotly_json() for i in range(4)]
    assert [f["layout"]["title"]["text"] for f in figures] == list(q.options)
    assert all(len(f["data"]) == 1 and f["data"][0]["type"] == "heatmap" for f in figures)
    assert {f["layout"]["coloraxis"]["cmax"] for f in figures} == {1.0}
    assert all(name in f["data"][0]["hovertemplate"] for name, f in zip(q.options, figures))
    with pytest.raises(ValueError):
        candidate_head(q.figure, 4)
