"""Rooms outlive the processes that hold them, with real kills: an app process killed with SIGKILL in
the middle of a round (its rooms in the default SQLite file, or in Redis) and started again, or a
second one, carries on with the same room, students, answers, question and reveal, and a student's id
still answers without joining again; a real ``redis-server`` with its append-only file, killed and
started again mid-round, loses no acknowledged answer, and while it is down every call says so with
:class:`~rooms.rules.StoreUnavailable`; processes on one machine share the SQLite file safely."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.server import free_port
from rooms.question import Question
from rooms.rules import RoomError, StoreUnavailable
from rooms.sqlite_store import SqliteStore

ROOT = Path(__file__).resolve().parents[1]

# An app process in miniature: a room with two students, one revealed round and one open round, then more
# students keep joining and answering; each line it prints is a change the store acknowledged.
APP = """
import json, sys, time
target, extra = sys.argv[1], int(sys.argv[2])
if target.startswith("redis://"):
    from rooms.redis_store import RedisStore
    store = RedisStore.from_url(target)
else:
    from rooms.sqlite_store import SqliteStore
    store = SqliteStore(target)
from rooms.question import Question
q = lambda title: Question("attend", 0, title, "prompt", ("a", "b", "c", "d"), (0.0, 1.0, 0.0, 0.0), 1, "why")
keys = store.create_room()
ann, _ = store.join(keys.code, "Ann")
bob, _ = store.join(keys.code, "Bob")
store.set_question(keys.code, keys.secret, q("one"))
store.answer(keys.code, ann, 1, 1)
store.answer(keys.code, bob, 1, 2)
store.reveal(keys.code, keys.secret)
store.set_question(keys.code, keys.secret, q("two"))
store.answer(keys.code, ann, 2, 3)
print(json.dumps({"code": keys.code, "secret": keys.secret, "ann": ann, "bob": bob}), flush=True)
for i in range(extra):
    member, _ = store.join(keys.code, f"s{i}")
    store.answer(keys.code, member, 2, i % 4)
    print(json.dumps([i, member]), flush=True)
print("done", flush=True)
time.sleep(600)
"""


def start_app(target: str, extra: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", APP, target, str(extra)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    if not line:
        raise AssertionError(f"the app process stopped: {proc.wait()} {proc.stderr.read()}")
    return line.strip()


def kill(proc: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to one process we started, by its id, and wait for it to end."""
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)


def acknowledged(proc: subprocess.Popen, first: int) -> tuple[dict, dict[str, int]]:
    """The room the app process made, and the students it had acknowledged (id -> number) by the time it
    ended or said ``done``; reads at least ``first`` of them before returning when the process lives."""
    room, students = json.loads(read_line(proc)), {}
    while True:
        line = proc.stdout.readline().strip()
        if not line or line == "done":
            return room, students
        i, member = json.loads(line)
        students[member] = i
        if len(students) == first and proc.poll() is None:
            return room, students


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


# ---- a real redis-server with its append-only file -----------------------------------------------


class AofRedis:
    """``redis-server`` on a fixed loopback port with ``appendonly yes`` in ``folder``, which the test may
    kill and start again on the same port and folder; stopped by its process id."""

    def __init__(self, folder: Path) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed (`make redis-server` installs it as root)")
        self.cmd = [exe, "--port", str(free_port()), "--bind", "127.0.0.1", "--dir", str(folder)]
        self.cmd += ["--appendonly", "yes", "--save", "", "--daemonize", "no"]
        self.url = f"redis://127.0.0.1:{self.cmd[2]}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        import redis

        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client, deadline = redis.Redis.from_url(self.url), time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, redis.BusyLoadingError):
                assert self.proc.poll() is None and time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.05)
        client.close()

    def stop(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            kill(self.proc, sig)


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[AofRedis]:
    server = AofRedis(tmp_path / "redis")
    (tmp_path / "redis").mkdir()
    server.start()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "redis"])
def target(request, tmp_path: Path) -> str:
    """Where an app process keeps its rooms: the default SQLite file, or a Redis with its append-only file."""
    if request.param == "sqlite":
        return str(tmp_path / "rooms.sqlite3")
    return request.getfixturevalue("aof_redis").url


def open_target(target: str):
    if target.startswith("redis://"):
        from rooms.redis_store import RedisStore

        return RedisStore.from_url(target)
    return SqliteStore(target)


# ---- an app process killed mid-round --------------------------------------------------------------


def test_an_app_process_killed_mid_round_loses_nothing(target):
    """SIGKILL while the app is writing, then the same file (a restart) or the same Redis (another app
    process): every acknowledged join and answer is there and the round goes on."""
    extra = 200
    app = start_app(target, extra)
    try:
        room, students = acknowledged(app, first=12)
        kill(app)  # in the middle of its stream of joins and answers
        for line in app.stdout.read().splitlines():  # lines it printed before it died were acknowledged too
            if line.startswith("["):
                i, member = json.loads(line)
                students[member] = i
    finally:
        if app.poll() is None:
            kill(app)
    assert app.returncode == -signal.SIGKILL and 12 <= len(students) < extra
    store = open_target(target)
    check_the_room_carries_on(store, room, students, extra)
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
    extra = 60
    app = start_app(aof_redis.url, extra)
    try:
        room, students = acknowledged(app, first=10)
        aof_redis.stop(sig)  # mid-round, mid-stream
        time.sleep(0.5)  # down for a moment
        aof_redis.start()
        more = acknowledged_rest(app)
        students.update(more)
        assert app.poll() is None, app.stderr.read()  # the app never failed: the blip healed inside its calls
    finally:
        kill(app)
    assert len(students) == extra
    check_the_room_carries_on(open_target(aof_redis.url), room, students, extra)


def acknowledged_rest(app: subprocess.Popen) -> dict[str, int]:
    students = {}
    while (line := read_line(app)) != "done":
        i, member = json.loads(line)
        students[member] = i
    return students


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
