"""Classroom load: one teacher and ``--students`` students play ``--rounds`` rounds in one room.

    python -m bench.classroom_load [--students 60] [--rounds 3] [--backend sqlite|redis|both] [--processes 1]

The clients are not browsers (60 Chromium contexts do not fit this 2-core machine) but
**websocket-level sessions** (``fixtures/st_client.py``): each speaks the Streamlit web frontend's
protocol to the app (``/_stcore/stream``, BackMsg/ForwardMsg protobufs) the way the frontend does:
it runs the page at its URL, sends its widget values, button clicks and component events, and keeps
the ``st.fragment(run_every=...)`` timers the server asks for (an auto-rerun of the fragment every
1.5 s). So the server does the same work as for browsers (every script run, fragment poll and store
call); only drawing is left out, and "visible" means "the message that draws it has arrived".

Per round the teacher asks a question (``Ask``; "which key wins", answered in the explorer), every
student waits for it, clicks an answer (a key of the explorer, the event its click sends, through
the answer's fragment; a pill for other kinds), the teacher waits until the live count says every
answer is in, then clicks ``Reveal``; each student times the reveal from the teacher's click to the
arrival of "The answer: ...". Counted: answers the room has (from the teacher's histogram, and
from the store itself) against answers sent; errors are exceptions, error or warning messages on
any page, timeouts and dropped connections. ``sqlite``: the default store, a SQLite file in a
throw-away folder, and ``--processes`` app processes on this machine sharing it (default 1);
``redis``: a throw-away ``redis-server`` and ``--processes`` app processes on it, the students split
between them. Prints one JSON object (progress on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import random
import re
import tempfile
import time
from contextlib import ExitStack

from bench._server import emit, log, summary
from fixtures.server import redis_server, streamlit_server
from fixtures.st_client import Client, answer

REDIS_ENV = "ATTENTION_ROOMS_REDIS_URL"
ROOMS_DIR_ENV = "ATTENTION_ROOMS_DIR"
LOOPBACK_NOTE = "Students cannot join yet."


async def student(
    c: Client, code: str, rounds: int, go: list[asyncio.Event], reveal_at: list[float], out: dict
) -> None:
    """Join, then per round: see the question, answer, and time the reveal."""
    await c.wait_widget("cr_join_here")
    await c.send(trigger="cr_join_here", cr_name=("string_value", c.name))
    await c.wait_text("Waiting for the teacher")
    out["joined"] += 1
    for r in range(1, rounds + 1):
        await go[r - 1].wait()
        await c.wait_text(rf"^Question {r}:")
        sent = await answer(c, f"cr-keys-{code}-{r}", f"cr_pick_{code}_{r}")
        await c.wait_text("Answer sent", since=sent)
        out["sent"][r - 1] += 1
        seen, _ = await c.wait_text(r"^The answer:", since=sent)
        out["reveal_s"].append(seen - reveal_at[r - 1])


def open_rooms(env: dict[str, str]):
    """The store the app processes share, opened as one more process would."""
    if env.get(REDIS_ENV):
        from rooms.redis_store import RedisStore

        return RedisStore.from_url(env[REDIS_ENV])
    from rooms.sqlite_store import SqliteStore

    return SqliteStore(os.path.join(env[ROOMS_DIR_ENV], "rooms.sqlite3"))


def cpu_s(pids: list[int]) -> float:
    """CPU seconds (user and system) the processes ``pids`` have used so far, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


async def play(bases: list[str], students: int, rounds: int, env: dict[str, str], pids: list[int]) -> dict:
    teacher = Client(bases[0], "teacher")
    await teacher.open()
    await teacher.wait_widget("cr_start")
    await teacher.send(trigger="cr_start")
    await teacher.wait_text(r"^Room code:")
    code = re.search(r"room=([A-Z0-9]{6})", teacher.query).group(1)
    log(f"room {code}; {students} students connecting")
    clients = [Client(bases[i % len(bases)], f"s{i}", f"room={code}") for i in range(students)]
    go, reveal_at = [asyncio.Event() for _ in range(rounds)], [0.0] * rounds
    out = {"joined": 0, "sent": [0] * rounds, "counted": [], "store_counted": [], "reveal_s": [], "question_s": []}
    out["reveal_cpu"] = []  # per round: the app processes' CPU seconds and the wall seconds, click to the last device
    for c in clients:
        await c.open()
    tasks = [asyncio.create_task(student(c, code, rounds, go, reveal_at, out)) for c in clients]
    # a student that failed stops the teacher (a student that finished its last round has not failed)
    teacher.abort = lambda: next(
        (repr(t.exception()) for t in tasks if t.done() and not t.cancelled() and t.exception()), None
    )
    await teacher.wait(lambda: True if out["joined"] == students else None, 300)
    await teacher.wait_widget("cr_show_hist")
    await teacher.send(cr_show_hist=("bool_value", True))  # the projector shows the live histogram
    for r in range(1, rounds + 1):
        asked = await teacher.send(trigger="cr_ask", cr_number=("double_value", float(r - 1)))
        go[r - 1].set()
        shown, _ = await teacher.wait_text(rf"^Question {r}:", since=asked)
        log(f"round {r}: asked")
        # the live count, from after the new question was drawn (a poll sent before the click may still
        # bring the last round's count)
        await teacher.wait_text(rf"^{students} / {students}$", since=shown, timeout=120)
        cpu_before = cpu_s(pids)
        reveal_at[r - 1] = await teacher.send(trigger="cr_reveal")
        counted = r"everyone's answers \S+ (\d+) answer"  # the reveal's histogram title (· may be \u00b7 in JSON)
        _, spec = await teacher.wait_text(counted, since=reveal_at[r - 1])
        out["counted"].append(int(re.search(counted, spec).group(1)))
        out["store_counted"].append(open_rooms(env).get(code).answered)
        await teacher.wait(lambda n=r * students: True if len(out["reveal_s"]) >= n else None)
        out["reveal_cpu"].append((cpu_s(pids) - cpu_before, max(out["reveal_s"][-students:])))
        log(f"round {r}: revealed; {out['counted'][-1]} answers counted")
    await teacher.send(trigger="cr_close")
    await teacher.wait_text("This room is closed")
    failures = [repr(t.exception()) for t in tasks if t.done() and t.exception()]
    for t in tasks:
        t.cancel()
    # the teacher's note that a loopback-only app cannot be joined from other devices (pages/teach/join_link.py)
    # is right here, where every client runs on this machine: not an error
    errors = [e for c in (teacher, *clients) for e in c.errors if LOOPBACK_NOTE not in e] + failures
    for c in (teacher, *clients):
        await c.close()
    sent = sum(out["sent"])
    return {
        "answers_sent": sent,
        "answers_counted": sum(out["counted"]),
        "answers_lost": sent - sum(out["counted"]),
        "answers_in_store": sum(out["store_counted"]),
        "reveal_latency_s": summary(out["reveal_s"], 3),
        # how busy the app processes were while the devices waited for the reveal: CPU seconds they used, and
        # that over the wall seconds (below 1 per process while devices still waited: the machine was busy elsewhere)
        "reveal_server_cpu_s": [round(c, 2) for c, _ in out["reveal_cpu"]],
        "reveal_server_cores": [round(c / w, 2) for c, w in out["reveal_cpu"]],
        "errors": len(errors),
        "error_samples": errors[:5],
    }


def memory_mb(pid: int) -> dict[str, float]:
    """Resident and peak resident memory of one process, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, kb = line.split()[:2]
                fields[{"VmRSS:": "rss_mb", "VmHWM:": "peak_rss_mb"}[name]] = round(int(kb) / 1024, 1)
    return fields


def run_async(coro):
    """``asyncio.run(coro)``, in a thread of its own when this thread already runs an event loop (in a
    test process where Playwright's sync API has started one)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_backend(backend: str, students: int, rounds: int, processes: int = 1) -> dict:
    with ExitStack() as stack:
        env = {REDIS_ENV: "", ROOMS_DIR_ENV: stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-rooms-"))}
        if backend == "redis":
            env[REDIS_ENV] = stack.enter_context(redis_server())
        n = processes
        servers = [
            stack.enter_context(streamlit_server(env=env, log_name=f"classroom-{backend}-{i}")) for i in range(n)
        ]
        log(f"{backend}: {n} app process(es) up")
        t0 = time.perf_counter()
        load_before = os.getloadavg()[0]
        result = run_async(play([s.url for s in servers], students, rounds, env, [s.pid for s in servers]))
        result.update(
            backend=backend,
            app_processes=n,
            wall_s=round(time.perf_counter() - t0, 1),
            load_average_1min=[
                round(load_before, 1),
                round(os.getloadavg()[0], 1),
            ],  # before and after: other work on the machine
            server_memory=[memory_mb(s.pid) for s in servers],
        )
        return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backend", choices=("sqlite", "redis", "both"), default="both")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--processes", type=int, default=1, help="app processes sharing the store")
    args = ap.parse_args()
    random.seed(args.seed)
    backends = ("sqlite", "redis") if args.backend == "both" else (args.backend,)
    emit(
        {
            "clients": "websocket-level sessions speaking the Streamlit frontend's protocol (not browsers), "
            "fragment auto-reruns honoured; 'visible' = the drawing message arrived",
            "students": args.students,
            "teacher": 1,
            "rounds": args.rounds,
            "cpu_cores": os.cpu_count(),
            "runs": [run_backend(b, args.students, args.rounds, max(1, args.processes)) for b in backends],
        }
    )


if __name__ == "__main__":
    main()
