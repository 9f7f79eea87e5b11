"""The Classroom page through AppTest: one teacher and several students, each an AppTest (its own
session) on the same store (a file in a fresh folder per test), play rounds; bad codes, nicknames, late
answers, a student trying the teacher's controls and two rooms at once each get a clear message. The
teacher comes back to a running room (another page and back, a reload: a new session with the cookies
the page had the browser keep), the lobby lists the browser's rooms and asks before a second one, says
before a room is made when phones cannot reach the app, and the projector screen shows the room without
its controls."""

from __future__ import annotations

import json

import numpy as np
import pytest
import streamlit as st
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

from fixtures.widget_events import component_event
from model.lessons.questions import CREDIT, build_question
from model.lessons.workshop import hand_question
from pages.shared.text import markdown_escape
from pages.teach import join_link, teacher_keys
from rooms.rules import MAX_PARTICIPANTS, StoreUnavailable
from rooms.store import open_store, reset_stores
from tests.apptest import charts, explorers, page, run, url

PAGE = page("classroom")
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(autouse=True)
def fresh_store(monkeypatch, tmp_path):
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setenv("ATTENTION_ROOMS_DIR", str(tmp_path))  # the default store's file: a fresh one
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
    if kind == "previous":  # the four heads, one chart each (a phone stacks them, each at its full width)
        maps = charts(student)
        assert [m["layout"]["title"]["text"] for m in maps] == list(q.options)
        assert all(len(m["data"]) == 1 and m["data"][0]["type"] == "heatmap" for m in maps)
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


# ---- the teacher never loses the room (issue 52) -------------------------------------------------

TEACHER_BUTTONS = {"cr_ask", "cr_reveal", "cr_close"}


def buttons(at: AppTest) -> set[str]:
    return {b.key for b in at.button}


def kept_cookies(at: AppTest, jar: dict | None = None) -> dict[str, str]:
    """The cookies the page had the browser keep (the teacher-keys element's data), applied to ``jar``:
    what a browser holds after this run."""
    jar = dict(jar or {})
    for element in at.get("bidi_component"):
        if element.proto.component_name.endswith("room_teacher_keys"):
            for name, value, age in json.loads(element.proto.json)["cookies"]:
                if age > 0:
                    jar[name] = value
                else:
                    jar.pop(name, None)
    return jar


def open_in(jar: dict, query: dict | None = None) -> AppTest:
    """A new session of the browser that holds ``jar`` (a reload, a new tab, the app restarted)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(teacher_keys, "browser_cookies", lambda: jar)
        return run(PAGE, query=query)


def page_strings(at: AppTest) -> str:
    """Everything the page shows as text, and its address."""
    parts = [texts(at), *(t.value for t in at.text), *(c.value for c in at.code), json.dumps(dict(at.query_params))]
    return " ".join(map(str, parts))


def test_the_teacher_comes_back_to_the_running_room():
    """Another page and back (the same session, the classroom's address without a room): the running room
    with the teacher's controls, not an empty lobby."""
    teacher, code = start_room()
    join(code, "Ann")
    ask(teacher, "shape", 1)
    teacher.query_params.clear()
    teacher.run()
    assert url(teacher, "room") == code and TEACHER_BUTTONS <= buttons(teacher)
    assert "Question 1: What shape" in texts(teacher) and teacher.metric[0].value == "0 / 1"
    teacher.button(key="cr_close").click().run()
    teacher.query_params.clear()
    teacher.run()  # a closed room is not opened again: the lobby lists it
    assert url(teacher, "room") is None and f"Room {code}**: closed" in texts(teacher)


def test_a_reload_keeps_control_and_students_never_see_the_key():
    teacher, code = start_room()
    secret = teacher.session_state["cr_teacher"][code]
    jar = kept_cookies(teacher)
    assert jar == {f"attention_room_teacher_{code}": secret}
    ann = join(code, "Ann")
    assert secret not in page_strings(ann) and secret not in json.dumps(dict(teacher.query_params))
    reloaded = open_in(jar, {"room": code})  # the teacher's reload: a new session, the same browser
    assert TEACHER_BUTTONS <= buttons(reloaded) and f"Room code: {code}" in texts(reloaded)
    ask(reloaded, "attend", 0)
    back = open_in(jar)  # a new tab on the classroom: the running room
    assert url(back, "room") == code and "Question 1" in texts(back) and "cr_reveal" in buttons(back)
    stranger = run(PAGE, query={"room": code})  # a browser without the key: the join form
    assert stranger.button(key="cr_join_here") and not TEACHER_BUTTONS & buttons(stranger)
    forged = open_in({f"attention_room_teacher_{code}": "x" * 32}, {"room": code})
    assert not TEACHER_BUTTONS & buttons(forged)
    assert kept_cookies(forged, {f"attention_room_teacher_{code}": "x" * 32}) == {}  # a wrong key is forgotten
    assert open_store().is_teacher(code, secret)


def test_the_lobby_lists_this_browsers_rooms_and_asks_before_another():
    first, code_a = start_room()
    jar = kept_cookies(first)
    join(code_a, "Ann")
    first.button(key="cr_to_lobby").click().run()
    assert url(first, "room") is None and f"**Room {code_a}**: running, 1 student, 0 questions" in texts(first)
    first.button(key="cr_start").click().run()  # a room runs: asked first, nothing made yet
    assert url(first, "room") is None and len(first.session_state["cr_teacher"]) == 1
    assert "still running, with 1 student" in first.warning[-1].value
    first.button(key="cr_back").click().run()
    assert url(first, "room") == code_a and "cr_ask" in buttons(first)
    first.button(key="cr_to_lobby").click().run()
    first.button(key="cr_start").click().run()
    first.button(key="cr_start_anyway").click().run()
    code_b = url(first, "room")
    assert code_b and code_b != code_a and not open_store().get(code_a).closed  # the old room carries on
    jar = kept_cookies(first, jar)
    assert set(jar) == {f"attention_room_teacher_{c}" for c in (code_a, code_b)}
    lobby = open_in(jar, {"room_lobby": "1"})  # another tab of this browser: both rooms, each a button
    assert {f"cr_open_{code_a}", f"cr_open_{code_b}"} <= buttons(lobby)
    lobby.button(key=f"cr_open_{code_a}").click().run()
    assert url(lobby, "room") == code_a and "cr_ask" in buttons(lobby)
    stranger = run(PAGE)  # another browser: no rooms of its own
    assert "Your rooms" not in texts(stranger) and buttons(stranger) == {"cr_join", "cr_start"}


@pytest.fixture
def listen_on():
    before = st.get_option("server.address")
    yield lambda address: st.config.set_option("server.address", address)
    st.config.set_option("server.address", before)


def test_the_lobby_says_before_a_room_when_phones_cannot_reach_the_app(listen_on):
    listen_on("127.0.0.1")
    at = run(PAGE)
    (warning,) = [w.value for w in at.warning]  # before any room is made
    assert "make run HOST=0.0.0.0" in warning and "cannot join" in warning and not at.get("image")
    at.button(key="cr_start").click().run()
    assert url(at, "room") and not at.get("image") and not at.code  # no QR code, no link that refuses
    assert "make run HOST=0.0.0.0" in at.warning[0].value and "192.168.1.20" not in texts(at)
    listen_on("0.0.0.0")  # restarted as told: the same room, now with its link and QR code
    at.run()
    assert at.get("image") and at.code[0].value.startswith("http://192.168.1.20:8501/classroom?room=")
    lobby = run(PAGE, query={"room_lobby": "1"})
    assert not lobby.warning


def test_the_projector_screen_shows_the_room_without_its_controls():
    teacher, code = start_room()
    jar = kept_cookies(teacher)
    ann, bob = join(code, "Ann"), join(code, "Bob")
    ask(teacher, "previous", 0)
    (link,) = [b.proto.url for b in teacher.get("link_button")]
    assert f"room={code}" in link and "room_view=projector" in link and "teacher" not in link
    screen = open_in(jar, {"room": code, "room_view": "projector", "projector": "1"})
    assert not screen.exception
    shown = page_strings(screen)
    big = next(m.value for m in screen.markdown if 'data-testid="cr-room-code"' in m.value)
    assert "font-size:96px" in big and f">{code}<" in big and f"http://192.168.1.20:8501/classroom?room={code}" in big
    assert screen.get("image")  # the QR code
    assert not (TEACHER_BUTTONS | {"cr_to_lobby"}) & buttons(screen) and not screen.get("link_button")
    assert not screen.expander  # neither the teacher link nor the teacher's guide
    assert "teacher=" not in shown and teacher.session_state["cr_teacher"][code] not in shown
    assert "Question 1:" in shown
    (grid,) = [c for c in charts(screen) if c["data"][0]["type"] == "heatmap"]  # the four heads in one chart
    assert [a["text"] for a in grid["layout"]["annotations"]] == list(open_store().question(code, 1).options)
    for student in (ann, bob):
        student.run()
        pick(student).set_value(1).run()
    screen.run()
    assert screen.metric[0].value == "2 / 2"
    (hist,) = [c for c in charts(screen) if c["data"][0]["type"] == "bar"]  # live, whole-number ticks
    assert hist["data"][0]["x"] == [0, 2, 0, 0]
    assert hist["layout"]["xaxis"]["dtick"] == 1 and hist["layout"]["xaxis"]["tickformat"] == "d"
    teacher.button(key="cr_reveal").click().run()
    screen.run()
    assert "The answer:" in texts(screen) and not TEACHER_BUTTONS & buttons(screen)
    student_try = run(PAGE, query={"room": code, "room_view": "projector"})  # no key: no projector screen
    assert student_try.button(key="cr_join_here") and not student_try.metric


def test_a_store_that_does_not_answer_says_so_and_waits(monkeypatch):
    teacher, code = start_room()
    store = open_store()

    def down(*a, **k):
        raise StoreUnavailable()

    monkeypatch.setattr(store, "get", down)
    at = run(PAGE, query={"room": code})
    assert not at.exception and "not answering right now" in at.warning[0].value
    assert not at.button  # nothing to press while it is down; the page tries again by itself
