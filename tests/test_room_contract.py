"""The one contract of every classroom store (``rooms.store.RoomStore``): each rule, run against the
in-process store, the default SQLite file and a real ``redis-server`` (started on a free loopback port
for this module), plus the summaries and CSV files built from what a store returns."""

from __future__ import annotations

import csv
import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rooms.question import Question
from rooms.rules import MAX_PARTICIPANTS, MAX_ROUNDS, NICKNAME_MAX, RoomError
from rooms.sqlite_store import SqliteStore
from rooms.store import MemoryStore
from rooms.summary import answers_csv, participants_csv, questions_csv, summarise

BACKENDS = ["memory", "sqlite", "redis"]


@pytest.fixture(scope="module")
def redis_url():
    from fixtures.server import redis_server

    try:
        with redis_server() as url:
            yield url
    except RuntimeError as e:
        pytest.skip(f"no redis-server: {e} (`make redis-server` installs it as root)")


@pytest.fixture(params=BACKENDS)
def make_store(request, tmp_path):
    """A factory of stores that share one backend (two calls: two app processes on one file or one Redis;
    the in-process store has one object, unless a call passes settings)."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda **kw: MemoryStore(**kw) if kw else shared
        return
    if request.param == "sqlite":
        path = tmp_path / "rooms.sqlite3"
        stores = []
        yield lambda **kw: stores.append(SqliteStore(path, **kw)) or stores[-1]
        for s in stores:
            s.shutdown()
        return
    import redis

    from rooms.redis_store import RedisStore

    url = request.getfixturevalue("redis_url")
    redis.Redis.from_url(url).flushdb()
    yield lambda **kw: RedisStore.from_url(url, **kw)


@pytest.fixture
def store(make_store):
    return make_store()


def question(n_options: int = 4, answer: int = 1, title: str = "q") -> Question:
    points = tuple(1.0 if i == answer else 0.25 * (i % 2) for i in range(n_options))
    return Question("attend", 0, title, "prompt", tuple(f"{i}:o" for i in range(n_options)), points, answer, "why")


def reason(fn, *args) -> str:
    with pytest.raises(RoomError) as e:
        fn(*args)
    return e.value.reason


# ---- one room --------------------------------------------------------------------------------------


def test_a_whole_round(store):
    keys = store.create_room()
    ann, ann_name = store.join(keys.code.lower(), "Ann")
    bob, bob_name = store.join(keys.code, "Ann")
    nobody, nobody_name = store.join(keys.code)
    assert (ann_name, bob_name, nobody_name) == ("Ann", "Ann (2)", "Student 3")
    assert store.nickname(keys.code, bob) == "Ann (2)"
    s = store.get(keys.code)
    assert (s.round, s.participants, s.answered, s.counts, s.closed, s.revealed) == (0, 3, 0, (), False, False)
    assert reason(store.answer, keys.code, ann, 1, 0) == "no_question"
    assert store.set_question(keys.code, keys.secret, question()) == 1
    assert store.get(keys.code).version > s.version
    store.answer(keys.code, ann, 1, 1)
    store.answer(keys.code, bob, 1, 0)
    store.answer(keys.code, bob, 1, 3)  # changed: one answer each
    s = store.get(keys.code, bob)
    assert (s.answered, s.counts, s.mine) == (2, (0, 1, 0, 1), 3)
    assert store.get(keys.code, nobody).mine is None
    assert store.question(keys.code, 1) == question()
    store.reveal(keys.code, keys.secret)
    assert store.get(keys.code).revealed
    assert reason(store.answer, keys.code, nobody, 1, 1) == "revealed"
    assert store.set_question(keys.code, keys.secret, question(3, 2, "second")) == 2
    assert reason(store.answer, keys.code, ann, 1, 1) == "stale"
    assert reason(store.answer, keys.code, ann, 2, 3) == "choice"
    assert reason(store.answer, keys.code, ann, 2, -1) == "choice"
    s = store.get(keys.code, ann)
    assert (s.round, s.revealed, s.answered, s.counts, s.mine) == (2, False, 0, (0, 0, 0), None)
    store.close(keys.code, keys.secret)
    assert store.get(keys.code).closed
    assert reason(store.answer, keys.code, ann, 2, 0) == "closed"
    assert reason(store.join, keys.code, "Late") == "closed"
    assert reason(store.set_question, keys.code, keys.secret, question()) == "closed"


def test_only_the_teacher_may_ask_reveal_or_close(store):
    keys = store.create_room()
    member, _ = store.join(keys.code, "Eve")
    other = store.create_room()
    for secret in ("", "guess", member, other.secret, keys.secret + "x"):
        assert reason(store.set_question, keys.code, secret, question()) == "teacher"
        assert reason(store.reveal, keys.code, secret) == "teacher"
        assert reason(store.close, keys.code, secret) == "teacher"
        assert not store.is_teacher(keys.code, secret)
    assert store.is_teacher(keys.code, keys.secret) and not store.is_teacher(keys.code, None)
    assert reason(store.reveal, keys.code, keys.secret) == "no_question"
    assert not store.get(keys.code).closed and store.get(keys.code).round == 0


def test_wrong_codes_and_strangers(store):
    keys = store.create_room()
    code = next(c + keys.code[1:] for c in "ABCDEFGH" if c != keys.code[0])
    for fn, args in [(store.get, ()), (store.join, ("x",)), (store.question, (1,)), (store.data, ())]:
        assert reason(fn, code, *args) == "not_found"
    assert reason(store.answer, keys.code, "not-a-member", 1, 0) == "member"
    assert reason(store.nickname, keys.code, "not-a-member") == "member"
    assert reason(store.question, keys.code, 1) == "no_question"
    assert reason(store.join, keys.code, "<b>x</b>") == "nickname"
    assert store.get(keys.code).participants == 0


def test_rooms_never_share_anything(store):
    a, b = store.create_room(), store.create_room()
    assert a.code != b.code and a.secret != b.secret
    ann, _ = store.join(a.code, "Ann")
    bob, _ = store.join(b.code, "Bob")
    store.set_question(a.code, a.secret, question())
    store.set_question(b.code, b.secret, question(3, 0))
    store.answer(a.code, ann, 1, 1)
    assert reason(store.answer, b.code, ann, 1, 0) == "member"
    assert reason(store.answer, a.code, bob, 1, 0) == "member"
    assert reason(store.reveal, b.code, a.secret) == "teacher"
    assert store.get(b.code).answered == 0 and store.get(a.code).answered == 1
    assert list(store.data(b.code).nicknames.values()) == ["Bob"]


def test_room_is_full_at_its_limit(store):
    keys = store.create_room()
    assert MAX_PARTICIPANTS >= 200
    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(lambda i: store.join(keys.code, f"p{i}")[1], range(MAX_PARTICIPANTS)))
    assert len(set(names)) == MAX_PARTICIPANTS
    assert reason(store.join, keys.code, "one more") == "full"
    assert store.get(keys.code).participants == MAX_PARTICIPANTS


def test_limit_on_rooms(make_store):
    store = make_store(max_rooms=2)
    store.create_room(), store.create_room()
    assert reason(store.create_room) == "rooms"


def test_limit_on_rounds(store):
    keys = store.create_room()
    for _ in range(MAX_ROUNDS):
        store.set_question(keys.code, keys.secret, question())
    assert reason(store.set_question, keys.code, keys.secret, question()) == "rounds"


def test_concurrent_answers_are_never_lost(store):
    keys = store.create_room()
    members = [store.join(keys.code, f"s{i}")[0] for i in range(200)]
    store.set_question(keys.code, keys.secret, question(4))
    start = threading.Barrier(16)

    def answer_all(chunk: list[str]) -> None:
        start.wait()
        for i, m in enumerate(chunk):
            store.answer(keys.code, m, 1, i % 4)
            store.answer(keys.code, m, 1, (i + 1) % 4)  # each changes its mind once

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(answer_all, [members[i::16] for i in range(16)]))
    s = store.get(keys.code)
    expected = [0, 0, 0, 0]
    for chunk in (members[i::16] for i in range(16)):
        for i, _ in enumerate(chunk):
            expected[(i + 1) % 4] += 1
    assert s.answered == 200 and list(s.counts) == expected


def test_two_app_processes_see_the_same_room(make_store):
    first, second = make_store(), make_store()
    keys = first.create_room()
    member, _ = second.join(keys.code, "Ann")
    first.set_question(keys.code, keys.secret, question())
    second.answer(keys.code, member, 1, 2)
    assert first.get(keys.code, member).mine == 2
    second.reveal(keys.code, keys.secret)
    assert first.get(keys.code).revealed


def test_idle_rooms_expire(make_store):
    now = [0.0]
    try:
        store = make_store(ttl_s=1, clock=lambda: now[0])  # the in-process and file stores read a clock we move
        moved_clock = True
    except TypeError:
        store = make_store(ttl_s=1)  # Redis expires keys by its own clock: wait it out
        moved_clock = False
    keys = store.create_room()
    store.join(keys.code, "Ann")
    now[0] += 0.5
    store.get(keys.code)
    now[0] += 1.5
    if not moved_clock:  # Redis expires keys by its own clock: poll until it has
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            try:
                store.get(keys.code)  # a read: it does not renew the room
            except RoomError:
                break
            time.sleep(0.05)
    assert reason(store.get, keys.code) == "not_found"
    assert reason(store.join, keys.code, "Bob") == "not_found"


# ---- summaries -------------------------------------------------------------------------------------


def test_summary_counts_finished_rounds_only(store):
    keys = store.create_room()
    ann, _ = store.join(keys.code, "Ann")
    bob, _ = store.join(keys.code, "-Bob")
    store.join(keys.code, "Cy")
    store.set_question(keys.code, keys.secret, question(4, 1, "one"))
    store.answer(keys.code, ann, 1, 1)
    store.answer(keys.code, bob, 1, 3)
    assert summarise(store.data(keys.code)).finished == 0  # not revealed: nothing counts yet
    store.reveal(keys.code, keys.secret)
    store.set_question(keys.code, keys.secret, question(2, 0, "two"))
    store.answer(keys.code, ann, 2, 1)
    s = summarise(store.data(keys.code))
    assert s.finished == 1 and [q.title for q in s.questions] == ["one"]
    q = s.questions[0]
    assert (q.answer, q.answered, q.correct, q.counts, q.share_correct) == ("1:o", 2, 1, (0, 1, 0, 1), 0.5)
    ann_row, bob_row, cy_row = s.participants
    assert (ann_row.nickname, ann_row.answered, ann_row.correct, ann_row.points, ann_row.choices) == (
        "Ann",
        1,
        1,
        1.0,
        ("1:o",),
    )
    assert (bob_row.correct, bob_row.points, cy_row.answered, cy_row.choices) == (0, 0.25, 0, (None,))
    assert s.of("Cy") is cy_row and s.of("nobody") is None
    store.close(keys.code, keys.secret)
    s = summarise(store.data(keys.code))
    assert s.finished == 2 and s.of("Ann").points == 1.25  # round two: the wrong one, a quarter point
    rows = list(csv.reader(io.StringIO(participants_csv(s))))
    assert rows[0] == ["nickname", "answered", "correct", "points", "round 1", "round 2"]
    assert rows[1] == ["Ann", "2", "1", "1.25", "1:o", "1:o"]
    assert rows[2][0] == "'-Bob"  # never a spreadsheet formula
    assert [r[0] for r in rows[1:]] == ["Ann", "'-Bob", "Cy"]
    qrows = list(csv.reader(io.StringIO(questions_csv(s))))
    arows = list(csv.reader(io.StringIO(answers_csv(s))))  # one row per participant and round
    assert arows[0] == ["nickname", "round", "question", "chosen", "answer", "right", "points"]
    assert arows[1:] == [
        ["Ann", "1", "one", "1:o", "1:o", "yes", "1.0"],
        ["Ann", "2", "two", "1:o", "0:o", "no", "0.25"],
        ["'-Bob", "1", "one", "3:o", "1:o", "no", "0.25"],
        ["'-Bob", "2", "two", "", "0:o", "", ""],
        ["Cy", "1", "one", "", "1:o", "", ""],
        ["Cy", "2", "two", "", "0:o", "", ""],
    ]
    assert bob_row.scores == (0.25,) and cy_row.scores == (None,)
    assert qrows[0][:4] == ["round", "kind", "question", "answer"] and [r[2] for r in qrows[1:]] == ["one", "two"]


def test_nickname_limit_is_kept_with_suffixes(store):
    keys = store.create_room()
    long = "n" * NICKNAME_MAX
    names = [store.join(keys.code, long)[1] for _ in range(3)]
    assert names[0] == long and all(len(n) <= NICKNAME_MAX for n in names) and len(set(names)) == 3


def test_data_keeps_every_round_and_the_joining_order(make_store):
    first, second = make_store(), make_store()
    keys = first.create_room()
    members = [second.join(keys.code, name)[0] for name in ("Cy", "Ann", "Bob")]
    for rnd, choices in enumerate([(0, 1, 2), (2, None, 0), (None, None, 1)], start=1):
        first.set_question(keys.code, keys.secret, question(3, 0, f"r{rnd}"))
        for m, c in zip(members, choices):
            if c is not None:
                second.answer(keys.code, m, rnd, c)
        first.reveal(keys.code, keys.secret)
    d = second.data(keys.code)
    assert list(d.nicknames.values()) == ["Cy", "Ann", "Bob"] and list(d.nicknames) == members
    assert [q.title for q in d.questions] == ["r1", "r2", "r3"] and d.revealed and not d.closed
    cy, ann, bob = members
    assert d.answers == [{cy: 0, ann: 1, bob: 2}, {cy: 2, bob: 0}, {bob: 1}]


# ---- which store a process opens ---------------------------------------------------------------------


def test_the_default_store_is_the_file_in_the_rooms_folder(tmp_path, monkeypatch):
    from rooms.store import REDIS_ENV, ROOMS_DIR_ENV, open_store, reset_stores, rooms_path

    monkeypatch.delenv(REDIS_ENV, raising=False)
    monkeypatch.setenv(ROOMS_DIR_ENV, str(tmp_path / "here"))
    reset_stores()
    try:
        store = open_store()
        assert isinstance(store, SqliteStore) and store is open_store()
        assert rooms_path() == tmp_path / "here" / "rooms.sqlite3" == store.path and store.path.exists()
        keys = store.create_room()
        reset_stores()  # the store object goes, the rooms stay in the file
        assert open_store() is not store and open_store().is_teacher(keys.code, keys.secret)
        monkeypatch.setenv(ROOMS_DIR_ENV, str(tmp_path / "there"))
        assert reason(open_store().get, keys.code) == "not_found"  # the setting moves the file
    finally:
        reset_stores()


def test_without_the_setting_rooms_go_to_the_checkouts_ignored_folder(monkeypatch):
    import subprocess

    from rooms.store import ROOMS_DIR, ROOMS_DIR_ENV, rooms_path

    monkeypatch.delenv(ROOMS_DIR_ENV, raising=False)
    assert rooms_path() == ROOMS_DIR / "rooms.sqlite3" and ROOMS_DIR.name == ".attention"
    ignored = subprocess.run(["git", "check-ignore", "-q", str(rooms_path())], cwd=ROOMS_DIR.parent)
    assert ignored.returncode == 0  # git never offers the rooms file for a commit


def test_with_a_redis_url_the_process_opens_redis(redis_url, monkeypatch):
    from rooms.redis_store import RedisStore
    from rooms.store import REDIS_ENV, open_store, reset_stores

    monkeypatch.setenv(REDIS_ENV, redis_url)
    reset_stores()
    try:
        assert isinstance(open_store(), RedisStore)
    finally:
        reset_stores()


def test_one_summary_per_state_of_the_room(make_store):
    """``room_summary`` is ``summarise(data)`` at every step, worked out once per state: the pages of a
    room (even in two app processes) share it until the teacher acts or someone joins."""
    from rooms.summary import room_summary

    first, second = make_store(), make_store()
    keys = first.create_room()
    ann, _ = first.join(keys.code, "Ann")
    first.set_question(keys.code, keys.secret, question(4, 1, "one"))
    before = room_summary(first, keys.code)
    assert before == summarise(first.data(keys.code)) and before.finished == 0
    second.answer(keys.code, ann, 1, 1)  # an answer to the open round: nothing finished changes
    assert room_summary(first, keys.code) is before
    bob, _ = second.join(keys.code, "Bob")  # a newcomer has a row of their own at once
    joined = room_summary(first, keys.code)
    assert joined is not before and joined.of("Bob") is not None and joined == summarise(first.data(keys.code))
    second.reveal(keys.code, keys.secret)  # another process reveals: the next read sees the finished round
    revealed = room_summary(first, keys.code)
    assert revealed.finished == 1 and revealed.of("Ann").correct == 1 and revealed == summarise(second.data(keys.code))
    assert room_summary(first, keys.code) is revealed
