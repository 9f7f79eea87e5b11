"""The Classroom page through AppTest: one teacher and several students, each an AppTest (its own
session) on the same in-process store, play rounds; bad codes, nicknames, late answers, a student
trying the teacher's controls and two rooms at once each get a clear message."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

from fixtures.widget_events import component_event
from model.lessons.questions import CREDIT, build_question
from model.lessons.workshop import hand_question
from pages.shared.text import markdown_escape
from pages.teach import join_link
from rooms.rules import MAX_PARTICIPANTS
from rooms.store import open_store, reset_stores
from tests.apptest import charts, explorers, page, run, url

PAGE = page("classroom")
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch):
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setattr(join_link, "lan_address", lambda: "192.168.1.20")  # the link names the network address
    reset_stores()
    yield
    reset_stores()


def texts(at: AppTest) -> str:
    parts = [
        e.value
        for kind in ("markdown", "caption", "subheader", "success", "info", "warning", "error")
        for e in getattr(at, kind)
    ]
    return " ".join(str(p) for p in parts)


def start_room() -> tuple[AppTest, str]:
    teacher = run(PAGE)
    teacher.button(key="cr_start").click().run()
    code = url(teacher, "room")
    assert code and not teacher.exception
    return teacher, code


def join(code: str, nickname: str = "") -> AppTest:
    student = run(PAGE, query={"room": code})
    student.text_input(key="cr_name").input(nickname).run()
    student.button(key="cr_join_here").click().run()
    assert not student.exception
    return student


def ask(teacher: AppTest, kind: str = "attend", number: int = 0) -> None:
    teacher.selectbox(key="cr_kind").set_value(kind)
    teacher.number_input(key="cr_number").set_value(number)
    teacher.button(key="cr_ask").click().run()
    assert not teacher.exception and not teacher.error, [e.value for e in teacher.error]


def pick(student: AppTest):
    pills = student.pills
    assert len(pills) == 1
    return pills[0]


def click_key(student: AppTest, key: int, kind: str = "choice") -> AppTest:
    """A click on key ``key`` of the page's first explorer, sent as the browser sends it: the element's
    "cell" event (AppTest has no API for components v2 events, so the run gets it with the widgets)."""
    element = student.get("bidi_component")[0]
    states = WidgetStates()
    states.CopyFrom(student._tree.get_widget_states())
    cell = {"kind": kind, "layer": 0, "head": 0, "query": 0, "key": key, "weight": 0.0}
    states.widgets.append(component_event(element.proto.id, "cell", cell))
    return student._run(states)


def choice_row(student: AppTest) -> dict:
    """The one explorer a student answers in: its only kind, the query's row."""
    (payload,) = explorers(student)
    (kind,) = payload["kinds"]
    return {**kind, "weights": payload["arrays"][kind["name"]]}


def test_lobby_never_polls_the_store(monkeypatch):
    store = open_store()
    calls = []
    monkeypatch.setattr(store, "get", lambda *a, **k: calls.append(a))
    at = run(PAGE)
    assert not at.exception and not at.error
    assert {b.key for b in at.button} == {"cr_join", "cr_start"}
    assert not calls  # outside a room nothing asks the store, so nothing polls


def test_a_whole_round_with_three_students():
    teacher, code = start_room()
    assert f"Room code: {code}" in texts(teacher)
    assert [c.value for c in teacher.code] == [
        f"http://192.168.1.20:8501/classroom?room={code}"
    ]  # as typed, no escapes
    assert teacher.get("image")  # the QR code
    link = next(t.value for t in teacher.text if "teacher=" in t.value)
    assert link.startswith("http") and f"room={code}&teacher=" in link
    students = [join(code, name) for name in ("Ann", "Bob", "")]
    assert "Waiting for the teacher's first question" in texts(students[0])
    assert "You are Student 3" in texts(students[2])
    ask(teacher, "attend", 0)
    assert "Question 1: Which key does 1:is attend to most?" in texts(teacher)
    assert not explorers(teacher)  # the teacher's screen shows no weights before the reveal
    for s in students:
        s.run()
        row = choice_row(s)
        assert "Question 1" in texts(s) and not s.pills  # a key question is answered in the explorer
        assert row["queries"] == ["is"] and row["keys"] == hand_question(0).tokens
        # no weight sent (NaN): nothing gives the answer away, and nothing reads as a weight of the model
        assert np.isnan(row["weights"]).all()
    click_key(students[0], 4)
    click_key(students[1], 0)
    assert "Answer sent: 0:Life" in texts(students[1])
    click_key(students[1], 4)  # changed: still one answer
    assert "Answer sent: 4:dessert" in texts(students[1])
    click_key(students[2], 4, kind="row")  # a click that names no key of the question is no answer
    click_key(students[2], 99)
    assert "Answer sent" not in texts(students[2]) and not students[2].exception
    teacher.run()
    assert teacher.metric[0].value == "2 / 3"
    assert not charts(teacher)  # the histogram waits for the teacher
    teacher.toggle(key="cr_show_hist").set_value(True).run()
    (hist,) = charts(teacher)
    assert hist["data"][0]["x"] == [0, 0, 0, 0, 2, 0] and "2 answers" in hist["layout"]["title"]["text"]
    teacher.button(key="cr_reveal").click().run()
    assert "The answer: **4:dessert**" in texts(teacher)
    truth = hand_question(0).weights
    for s, verdict in zip([teacher, *students], ("The answer", "You got it.", "You got it.", "The answer")):
        s.run()
        assert verdict in texts(s) and not s.pills
        (payload,) = explorers(s)  # the real weights of the head, in the explorer
        assert [k["name"] for k in payload["kinds"]] == ["row", "map"]
        np.testing.assert_allclose(payload["arrays"]["row"][0, 0, 0], truth[1], atol=1e-4)
        np.testing.assert_allclose(payload["arrays"]["map"][0, 0], truth, atol=1e-4)
        assert payload["arrays"]["map"][0, 0, 1, 4] == pytest.approx(0.4917, abs=1e-4)
    assert "1 of 1 right, 1.00 points" in texts(students[0])
    assert "0 of 1 right" in texts(students[2])
    teacher.button(key="cr_close").click().run()
    assert "This room is closed" in texts(teacher)
    people = teacher.dataframe[0].value
    assert list(people["nickname"]) == ["Ann", "Bob", "Student 3"] and list(people["correct"]) == [1, 1, 0]
    assert {b.key for b in teacher.get("download_button")} >= {
        "cr_csv_participants",
        "cr_csv_answers",
        "cr_csv_questions",
    }
    students[0].run()
    assert "closed this room" in texts(students[0]) and not students[0].exception


def test_a_reload_resumes_the_same_student():
    """A reload is a new session with the same address: the member id the join wrote there (never the
    teacher's secret) brings the same student back, whose answer counts once, the latest kept."""
    teacher, code = start_room()
    ask(teacher, "attend", 0)
    bob = join(code, "Bob")
    member = url(bob, "room_member")
    assert member and member in open_store().data(code).nicknames and url(bob, "teacher") is None
    click_key(bob, 4)
    reloaded = run(PAGE, query={"room": code, "room_member": member})
    assert "You are Bob" in texts(reloaded) and "Answer sent: 4:dessert" in texts(reloaded)
    click_key(reloaded, 0)
    assert "Answer sent: 0:Life" in texts(reloaded)
    status = open_store().get(code, member)
    assert (status.participants, status.answered, status.mine) == (1, 1, 0)
    teacher.run()
    assert teacher.metric[0].value == "1 / 1"
    join(code, "Cy")  # a new student still joins
    teacher.run()
    assert teacher.metric[0].value == "1 / 2"
    forged = run(PAGE, query={"room": code, "room_member": "not-a-member"})
    assert "not valid for this room" in forged.warning[0].value and url(forged, "room_member") is None
    assert forged.button(key="cr_join_here") and open_store().get(code).participants == 2


def test_partial_credit_says_how_it_is_counted():
    teacher, code = start_room()
    ask(teacher, "attend", 0)
    ann, bob = join(code, "Ann"), join(code, "Bob")
    click_key(ann, 4)
    click_key(bob, 0)  # 0:Life: wrong, and part of a point (its weight relative to 4:dessert's)
    teacher.button(key="cr_reveal").click().run()
    ann.run(), bob.run()
    assert "0 of 1 right, 0.59 points" in texts(bob) and CREDIT in texts(bob)
    (table,) = [m.value for m in bob.markdown if m.value.startswith("| round |")]  # the student's own results
    assert table.splitlines()[-1].endswith("| 0.59 |")
    assert "1 of 1 right, 1.00 points" in texts(ann) and CREDIT not in texts(ann)  # nothing partial to explain


@pytest.mark.parametrize("kind, number", [("shape", 1), ("head", 2), ("previous", 0), ("ablation", 3)])
def test_every_kind_of_question_plays(kind, number):
    teacher, code = start_room()
    student = join(code, "Ann")
    ask(teacher, kind, number)
    student.run()
    q = open_store().question(code, 1)
    assert q.kind == kind
    if kind == "head":  # a key: clicked in the explorer, no pills
        assert not student.pills and choice_row(student)["keys"] == q.reveal["tokens"]
        click_key(student, q.answer)
    else:  # a shape, a head among four, an outcome: pills
        assert pick(student).options == [markdown_escape(o) for o in q.options] and not explorers(student)
        pick(student).set_value(q.answer).run()
    if kind == "previous":
        assert charts(student)[0]["layout"]["annotations"][0]["text"] == q.options[0]  # the four heads
    teacher.button(key="cr_reveal").click().run()
    student.run()
    assert "You got it." in texts(student) and not student.exception
    shown = explorers(student)
    if kind == "shape":
        assert not shown  # no map to reveal
    else:
        (payload,) = shown
        whole = payload["arrays"]["map"][0, 0]
        np.testing.assert_allclose(whole, q.reveal["weights"], atol=1e-6)
        mask = next(k for k in payload["kinds"] if k["name"] == "map")["mask"]
        assert ("0" in mask) == (kind == "previous")  # the generator's future stays hidden


def test_a_question_the_models_cannot_ask_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_CHECKPOINTS", str(tmp_path))
    teacher, _ = start_room()
    teacher.selectbox(key="cr_kind").set_value("previous")
    teacher.button(key="cr_ask").click().run()
    assert "generator model, which is not trained here" in teacher.error[0].value
    assert not teacher.exception and not teacher.pills


@pytest.mark.parametrize("raw", ["ZZZZZZ", "abc", "<script>alert(1)</script>", "x" * 5000])
def test_wrong_codes_get_a_message_and_the_lobby(raw):
    at = run(PAGE, query={"room": raw})
    assert not at.exception
    assert "There is no room with that code" in at.error[0].value and "<script>" not in texts(at)
    assert at.button(key="cr_start")


def test_joining_from_the_lobby_with_a_typed_code():
    _, code = start_room()
    at = run(PAGE)
    at.text_input(key="cr_code").input(code.lower()).run()
    at.text_input(key="cr_name").input("Dee").run()
    at.button(key="cr_join").click().run()
    assert url(at, "room") == code and "You are Dee" in texts(at)


@pytest.mark.parametrize("name", ["<b>bold</b>", "x" * 5000, "**hi**", "<script>alert(1)</script>"])
def test_bad_nicknames_are_refused_clearly(name):
    _, code = start_room()
    at = run(PAGE, query={"room": code})
    at.text_input(key="cr_name").input(name).run()
    at.button(key="cr_join_here").click().run()
    assert not at.exception and "nickname" in at.error[0].value.lower()
    if "<" in name or "*" in name:  # markup: the message says so, whatever the length
        assert "letters, digits, spaces" in at.error[0].value
    assert name[:6] not in texts(at) and open_store().get(code).participants == 0


def test_a_full_room_says_so():
    _, code = start_room()
    store = open_store()
    for i in range(MAX_PARTICIPANTS):
        store.join(code, f"p{i}")
    at = run(PAGE, query={"room": code})
    at.button(key="cr_join_here").click().run()
    assert "This room is full" in at.error[0].value and not at.exception


def test_an_answer_after_the_reveal_is_refused():
    teacher, code = start_room()
    student = join(code, "Late")
    ask(teacher, "shape", 1)
    student.run()
    teacher.button(key="cr_reveal").click().run()
    pick(student).set_value(2).run()  # the student's page still showed the question
    assert "answers for this question are closed" in texts(student)
    ask(teacher, "attend", 0)
    student.run()
    teacher.button(key="cr_reveal").click().run()
    click_key(student, 4)  # a click on the old page: the page now shows the reveal, nothing is taken
    assert "The answer: **4:dessert**" in texts(student) and "You got it" not in texts(student)
    assert open_store().get(code).answered == 0 and open_store().data(code).answers == [{}, {}]


def test_a_student_cannot_use_the_teachers_controls():
    teacher, code = start_room()
    student = join(code, "Eve")
    ask(teacher)
    student.run()
    keys = {b.key for b in student.button}
    assert not keys & {"cr_reveal", "cr_close", "cr_ask"}
    forged = run(PAGE, query={"room": code, "teacher": "guessed-secret"})
    assert "not valid for this room" in forged.warning[0].value and url(forged, "teacher") is None
    assert not {b.key for b in forged.button} & {"cr_reveal", "cr_close", "cr_ask"}
    assert not open_store().get(code).revealed


def test_the_teacher_link_hands_the_room_to_another_session():
    teacher, code = start_room()
    link = next(t.value for t in teacher.text if "teacher=" in t.value)
    secret = link.split("teacher=")[1]
    other = run(PAGE, query={"room": code, "teacher": secret})
    assert other.button(key="cr_reveal") and url(other, "teacher") is None  # the secret leaves the URL
    ask(other, "shape", 4)
    teacher.run()
    assert "Question 1: What shape" in texts(teacher)


def test_two_rooms_at_once_never_mix():
    teacher_a, code_a = start_room()
    teacher_b, code_b = start_room()
    assert code_a != code_b
    ann, bob = join(code_a, "Ann"), join(code_b, "Bob")
    ask(teacher_a, "attend", 0)
    ask(teacher_b, "shape", 1)
    ann.run(), bob.run()
    assert "1:is" in texts(ann) and "What shape" in texts(bob)
    click_key(ann, 4)
    teacher_a.run(), teacher_b.run()
    assert teacher_a.metric[0].value == "1 / 1" and teacher_b.metric[0].value == "0 / 1"
    # one session (one tab) that teaches room A and then opens room B as a student
    teacher_a.query_params["room"] = code_b
    teacher_a.run()
    assert f"also has room {code_a}" in texts(teacher_a) and teacher_a.button(key="cr_join_here")
    assert not {b.key for b in teacher_a.button} & {"cr_reveal", "cr_close", "cr_ask"}
    data_b = open_store().data(code_b)
    assert list(data_b.nicknames.values()) == ["Bob"] and data_b.answers == [{}]


def test_questions_are_the_same_for_everyone():
    a = build_question("attend", 3, lambda task: None)
    b = build_question("attend", 3, lambda task: None)
    assert a == b and a.to_json() == b.to_json()


def test_the_page_keeps_its_rooms_in_redis_when_told(monkeypatch):
    from fixtures.server import redis_server
    from rooms.redis_store import RedisStore

    try:
        server = redis_server()
        url = server.__enter__()
    except RuntimeError as e:
        pytest.skip(f"no redis-server: {e}")
    try:
        monkeypatch.setenv("ATTENTION_ROOMS_REDIS_URL", url)
        reset_stores()
        assert isinstance(open_store(), RedisStore)
        teacher, code = start_room()
        student = join(code, "Ann")
        ask(teacher)
        student.run()
        click_key(student, 4)
        other_process = RedisStore.from_url(url)  # what a second app process would read
        assert other_process.get(code).answered == 1 and list(other_process.data(code).nicknames.values()) == ["Ann"]
        teacher.button(key="cr_reveal").click().run()
        student.run()
        assert "You got it." in texts(student)
    finally:
        server.__exit__(None, None, None)
