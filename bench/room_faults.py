"""Rooms under real faults: what a kill loses and how long the app waits.

    python -m bench.room_faults [--extra 300] [--down 0.5]

Three measurements, each with a miniature app process (``fixtures/room_processes.py``: a room with two
students and a revealed round, then ``--extra`` students join and answer one after the other, each
change acknowledged on its stdout):

- ``app_sigkill``, per store (the default SQLite file, Redis with its append-only file): the app is
  killed with SIGKILL mid-stream; a new process opens the same file or Redis. Counted: changes
  acknowledged before the kill, found after, lost; the seconds the new process took to open the store
  and read the room.
- ``redis_restart``, per signal (SIGKILL, SIGTERM): Redis is stopped mid-stream, down ``--down``
  seconds, and started again on its folder; the app goes on. Counted: acknowledged answers, found,
  lost; the app's slowest join-and-answer (the wait the client's retries absorbed); whether the app
  failed.
- ``redis_outage``: Redis stays down; the seconds until a call raises StoreUnavailable (the client's
  retry budget), and until the first call succeeds once Redis is started again.

Prints one JSON object (progress on stderr).
"""

from __future__ import annotations

import argparse
import signal
import tempfile
import time
from pathlib import Path

from bench._server import emit, log, summary
from fixtures.room_processes import AofRedis, RoomApp, open_target
from rooms.rules import StoreUnavailable


def found(target: str, app: RoomApp) -> dict:
    """What another process finds of the app's acknowledged students and answers."""
    t0 = time.perf_counter()
    store = open_target(target)
    data = store.data(app.room["code"])
    open_s = time.perf_counter() - t0
    kept = sum(
        1 for m, i in app.students.items() if data.nicknames.get(m) == f"s{i}" and data.answers[1].get(m) == i % 4
    )
    status = store.get(app.room["code"])
    return {
        "acknowledged": len(app.students),
        "found": kept,
        "lost": len(app.students) - kept,
        "round_and_reveal_kept": (status.round, status.revealed) == (2, False) and data.answers[0] != {},
        "teacher_still_in_control": store.is_teacher(app.room["code"], app.room["secret"]),
        "reopen_and_read_s": round(open_s, 3),
    }


def app_sigkill(target: str, extra: int) -> dict:
    app = RoomApp(target, extra)
    app.read(extra // 3)
    app.kill(signal.SIGKILL)
    return found(target, app)


def redis_restart(folder: Path, sig: int, extra: int, down_s: float) -> dict:
    redis = AofRedis(folder)
    redis.start()
    app = RoomApp(redis.url, extra)
    try:
        app.read(extra // 3)
        redis.stop(sig)
        time.sleep(down_s)
        restart_s = redis.start()
        app.read()
        failed = not app.alive()
        return {
            **found(redis.url, app),
            "redis_down_s": round(down_s + restart_s, 3),
            "app_failed": failed,
            "app_call_s": summary(app.call_s, 3),
        }
    finally:
        app.kill()
        redis.stop()


def redis_outage(folder: Path) -> dict:
    redis = AofRedis(folder)
    redis.start()
    try:
        store = open_target(redis.url)
        code = store.create_room().code
        redis.stop(signal.SIGKILL)
        t0 = time.perf_counter()
        try:
            store.get(code)
            raised = None
        except StoreUnavailable as e:
            raised = str(e)
        unavailable_s = time.perf_counter() - t0
        redis.start()
        t0 = time.perf_counter()
        store.get(code)
        return {
            "raised": raised,
            "seconds_until_unavailable": round(unavailable_s, 2),
            "first_call_after_restart_s": round(time.perf_counter() - t0, 3),
        }
    finally:
        redis.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extra", type=int, default=240, help="students joining and answering after the first two")
    ap.add_argument("--down", type=float, default=0.5, help="seconds Redis stays down in redis_restart")
    args = ap.parse_args()
    extra = min(args.extra, 248)  # a room takes 250 people
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as tmp:
        tmp = Path(tmp)
        log("app killed: SQLite")
        sqlite = app_sigkill(str(tmp / "rooms.sqlite3"), extra)
        log("app killed: Redis")
        redis = AofRedis(tmp / "redis-a")
        redis.start()
        try:
            on_redis = app_sigkill(redis.url, extra)
        finally:
            redis.stop()
        restarts = {}
        for sig in (signal.SIGKILL, signal.SIGTERM):
            log(f"Redis restarted with {sig.name}")
            restarts[sig.name] = redis_restart(tmp / f"redis-{sig.name}", sig, extra, args.down)
        log("Redis down")
        outage = redis_outage(tmp / "redis-out")
    emit(
        {
            "extra_students": extra,
            "app_sigkill": {"sqlite": sqlite, "redis_appendonly": on_redis},
            "redis_restart": {"down_s": args.down, **restarts},
            "redis_outage": outage,
        }
    )


if __name__ == "__main__":
    main()
