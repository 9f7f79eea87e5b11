"""Rooms outlive the processes that hold them, with real kills: an app process killed with SIGKILL in
the middle of a round (its rooms in the default SQLite file, or in Redis) and started again, or a
second one, carries on with the same room, students, answers, question and reveal, and a student's id
still answers without joining again; a real ``redis-server`` with its append-only file, killed and
started again mid-round, loses no acknowledged answer, and while it is down every call says so with
:class:`~rooms.rules.StoreUnavailable`; processes on one machine share the SQLite file safely. The
processes are :mod:`fixtures.room_processes`."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.room_processes import AofRedis, RoomApp, open_target
from rooms.question import Question
from rooms.rules import RoomError, StoreUnavailable
from rooms.sqlite_store import SqliteStore

ROOT = Path(__file__).resolve().parents[1]


def check_the_room_carries_on(store, room: dict, students: dict[str, int], extra: int) -> None:
    """What a restarted (or another) app process finds: the same room, students, answers, question and
    reveal state; the teacher's secret still controls it and a student's id answers without joining."""
    code, secret, ann, bob = room["code"], room["secret"], room["ann"], room["bob"]
    status = store.get(code)
    assert (status.round, status.revealed, status.closed) == (2, False, False)
    assert store.is_teacher(code, secret) and store.question(code, 2).title == "two"
    data = store.data(code)
    assert list(data.nicknames)[:2] == [ann, bob] and list(data.nicknames.values())[:2] == ["Ann", "Bob"]
    assert data.answers[0] == {ann: 1, bob: 2} and data.questions[0].title == "one"
    for member, i in students.items():  # every acknowledged student and answer is there
        assert data.nicknames[member] == f"s{i}" and data.answers[1][member] == i % 4
    others = set(data.nicknames) - {ann, bob} - set(students)
    assert len(others) <= 1 and len(data.nicknames) <= 2 + extra  # at most the one in flight at the kill
    before = store.get(code).answered
    store.answer(code, bob, 2, 0)  # Bob never joined this process: his id is enough
    assert store.get(code, bob).mine == 0 and store.get(code).answered == before + 1
    store.reveal(code, secret)
    after = store.get(code, ann)
    assert after.revealed and after.mine == 3 and after.version > status.version


# ---- where the rooms are ---------------------------------------------------------------------------


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[AofRedis]:
    try:
        server = AofRedis(tmp_path / "redis")
    except RuntimeError as e:
        pytest.skip(str(e))
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def target(request, tmp_path: Path) -> str:
    """Where an app process keeps its rooms: the default SQLite file, or a Redis with its append-only file."""
    if request.param == "sqlite":
        return str(tmp_path / "rooms.sqlite3")
    return request.getfixturevalue("aof_redis").url


# ---- an app process killed mid-round --------------------------------------------------------------


def test_an_app_process_killed_mid_round_loses_nothing(target):
    """SIGKILL while the app is writing, then the same file (a restart) or the same Redis (another app
    process): every acknowledged join and answer is there and the round goes on."""
    app = RoomApp(target, extra=200)
    try:
        app.read(12)
        app.kill(signal.SIGKILL)  # in the middle of its stream of joins and answers
    finally:
        if app.alive():
            app.kill()
    assert app.proc.returncode == -signal.SIGKILL and 12 <= len(app.students) < app.extra
    store = open_target(target)
    check_the_room_carries_on(store, app.room, app.students, app.extra)
    if isinstance(store, SqliteStore):
        with sqlite3.connect(store.path) as c:
            assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_processes_on_one_machine_share_the_file_without_losing_answers(tmp_path):
    """Four processes answer for 40 students each at the same moment, in one room of one file."""
    path = tmp_path / "rooms.sqlite3"
    store = SqliteStore(path)
    keys = store.create_room()
    members = [store.join(keys.code, f"p{i}")[0] for i in range(160)]
    store.set_question(keys.code, keys.secret, Question("attend", 0, "q", "p", ("a", "b", "c"), (1, 0, 0), 0, "w"))
    script = (
        "import json, sys\nfrom rooms.sqlite_store import SqliteStore\n"
        "store = SqliteStore(sys.argv[1])\ncode, members = sys.argv[2], json.loads(sys.argv[3])\n"
        "for i, m in enumerate(members):\n    store.answer(code, m, 1, i % 3)\n    store.answer(code, m, 1, (i + 1) % 3)\n"
    )
    chunks = [members[k::4] for k in range(4)]
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), keys.code, json.dumps(chunk)], cwd=ROOT)
        for chunk in chunks
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    expected = [0, 0, 0]
    for chunk in chunks:
        for i, _ in enumerate(chunk):
            expected[(i + 1) % 3] += 1
    status = store.get(keys.code)
    assert status.answered == 160 and list(status.counts) == expected


def test_a_locked_file_says_so_and_reads_go_on(tmp_path):
    """A change that waits past the busy timeout for another process's write raises StoreUnavailable (a
    RoomError with a message for people); reads never wait (WAL); the change works once the lock goes."""
    path = tmp_path / "rooms.sqlite3"
    store = SqliteStore(path, busy_timeout_s=0.2)
    keys = store.create_room()
    member, _ = store.join(keys.code, "Ann")
    store.set_question(keys.code, keys.secret, Question("attend", 0, "q", "p", ("a", "b"), (1, 0), 0, "w"))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(StoreUnavailable) as e:
            store.answer(keys.code, member, 1, 1)
        assert isinstance(e.value, RoomError) and e.value.reason == "unavailable"
        assert "not answering" in str(e.value) and "sqlite" not in str(e.value).lower()
        assert store.get(keys.code).round == 1  # reading needs no lock
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.answer(keys.code, member, 1, 1)
    assert store.get(keys.code, member).mine == 1


# ---- Redis restarted -------------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_redis_restarted_mid_round_loses_no_answer(aof_redis, sig):
    """Redis goes down and comes back on the same folder while an app process is joining and answering:
    the app's calls wait it out (the client retries) and no acknowledged answer is lost."""
    app = RoomApp(aof_redis.url, extra=60)
    try:
        app.read(10)
        aof_redis.stop(sig)  # mid-round, mid-stream
        time.sleep(0.5)  # down for a moment
        aof_redis.start()
        app.read()
        assert app.alive(), app.proc.stderr.read()  # the app never failed: the blip healed inside its calls
    finally:
        app.kill()
    assert app.done and len(app.students) == app.extra
    check_the_room_carries_on(open_target(aof_redis.url), app.room, app.students, app.extra)


def test_while_redis_is_down_every_call_says_so_then_heals(aof_redis):
    from rooms.redis_store import RedisStore

    store, second = RedisStore.from_url(aof_redis.url), RedisStore.from_url(aof_redis.url)
    keys = store.create_room()
    member, _ = store.join(keys.code, "Ann")
    store.set_question(keys.code, keys.secret, Question("attend", 0, "q", "p", ("a", "b"), (1, 0), 0, "w"))
    store.answer(keys.code, member, 1, 1)
    aof_redis.stop()
    for call in (lambda: store.get(keys.code), lambda: store.answer(keys.code, member, 1, 0)):
        with pytest.raises(StoreUnavailable) as e:  # after the client's retries
            call()
        assert e.value.reason == "unavailable" and str(e.value).startswith("The room is not answering right now")
    aof_redis.start()
    assert store.get(keys.code, member).mine == 1  # the answer from before the outage, kept by the append-only file
    second.answer(keys.code, member, 1, 0)  # any app process carries on
    second.reveal(keys.code, keys.secret)
    assert store.get(keys.code, member).mine == 0 and store.get(keys.code).revealed
