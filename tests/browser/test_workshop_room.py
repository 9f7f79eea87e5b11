"""The workshop, played in a real browser as a teacher runs it on a laptop (issue 52): a teacher and two
students on 390 px phones, each its own browser context, on an app server this test starts, kills and
starts again.

1. The app listens on 127.0.0.1 (``make run``): the lobby says before any room is made that phones cannot
   reach it and what to run; the room the teacher starts anyway shows no link and no QR code.
2. The teacher does as told: the app is killed (SIGKILL) and started on 0.0.0.0 on the same port with the
   same rooms file. The teacher's reload is back in control of the same room, now with its link and QR.
3. Two phones join by that link; the teacher asks which head is the previous-token head (four maps, each
   at least 150 px wide on a phone); one student answers.
4. The teacher goes to another page and back through the menu, and Back: the room, with its controls.
5. The app is killed (SIGKILL) mid-round and started again. The teacher's reload is in control; the
   phones carry on without joining again (the first answer kept), the second student answers, the
   projector screen (the code large, the join address, the QR, the question, the histogram in whole
   numbers, no control, no key) and the reveal count both answers.
6. With Redis (when ``redis-server`` is installed): the app on Redis with its append-only file, Redis
   killed mid-round and started again: the pages say so while it is down, and no answer is lost.

The teacher's key lives in a cookie of the teacher's browser only: never in an address, on a student's
page or on the projector screen."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixtures.server import free_port, restart, streamlit_server
from pages.teach.join_link import lan_address

from .conftest import ARTIFACTS, STARTUP_SECONDS
from .test_classroom import LIVE_MS, bar_counts, text, what_pages_show
from .test_pages import RUN_TIMEOUT_MS, wait_until_idle

PHONE = {"width": 390, "height": 800}
COOKIE = "attention_room_teacher_"
PILLS = '[data-testid="stButtonGroup"] button'
MAP_WIDTHS = """() => [...document.querySelectorAll('.js-plotly-plot')]
    .filter(p => p.data && p.data[0] && p.data[0].type === 'heatmap')
    .map(p => p._fullLayout.xaxis._length)"""
TICKS = """() => { const p = [...document.querySelectorAll('.js-plotly-plot')]
    .find(p => p.data && p.data[0] && p.data[0].type === 'bar');
    return p ? [...p.querySelectorAll('.xtick text')].map(t => t.textContent) : null; }"""
CODE_PX = """(code) => { const e = [...document.querySelectorAll('[data-testid="stMain"] div')]
    .find(d => d.children.length === 0 && d.textContent.trim() === code);
    return e ? parseFloat(getComputedStyle(e).fontSize) : null; }"""


class Redis:
    """``redis-server`` on a fixed loopback port with its append-only file in ``folder``, every write
    synced (``appendfsync always``), killed and started again by the test."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.cmd = [shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(folder)]
        self.cmd += ["--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no"]
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

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()


@pytest.fixture
def app(tmp_path: Path) -> Iterator[object]:
    """The app as ``make run`` serves it (127.0.0.1), its rooms in a file of its own."""
    ARTIFACTS.mkdir(exist_ok=True)
    env = {"ATTENTION_ROOMS_DIR": str(tmp_path / "rooms"), "ATTENTION_ROOMS_REDIS_URL": ""}
    with streamlit_server(env=env, log_path=ARTIFACTS / "workshop-app.log", startup_seconds=STARTUP_SECONDS) as s:
        yield s


def teacher_rooms(context) -> dict[str, str]:
    return {c["name"][len(COOKIE) :]: c["value"] for c in context.cookies() if c["name"].startswith(COOKIE)}


def kept_keys(context) -> dict[str, str]:
    """The teacher keys the browser holds, once the page has set them (its script runs after the run)."""
    deadline = time.monotonic() + LIVE_MS / 1000
    while not teacher_rooms(context):
        assert time.monotonic() < deadline, "the page never had the browser keep the teacher's key"
        time.sleep(0.1)
    return teacher_rooms(context)


def test_the_workshop_survives_moving_around_restarts_and_redis(browser, app, tmp_path: Path) -> None:
    contexts, errors = [], []

    def new_page(context, url: str):
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url, wait_until="domcontentloaded")
        wait_until_idle(page)
        return page

    def browser_context(phone: bool):
        viewport = PHONE if phone else {"width": 1400, "height": 1000}
        context = browser.new_context(viewport=viewport, has_touch=phone, is_mobile=phone)
        contexts.append(context)
        return context

    def reload(page) -> None:
        page.reload(wait_until="domcontentloaded")
        wait_until_idle(page)

    def in_control(page, code: str) -> None:
        text(page, f"Room code: {code}", RUN_TIMEOUT_MS)
        page.get_by_role("button", name="Reveal").wait_for(timeout=LIVE_MS)
        assert page.get_by_role("button", name="Close the room").count() == 1

    def start_room(page) -> str:
        page.get_by_role("button", name="Start a room").click()
        text(page, "Room code:", RUN_TIMEOUT_MS)
        return re.search(r"room=([A-Z0-9]{6})", page.url).group(1)

    def join(context, url: str, name: str):
        page = new_page(context, url)
        page.get_by_label("Nickname (optional)").fill(name)
        page.get_by_label("Nickname (optional)").press("Enter")
        page.get_by_role("button", name=re.compile("^Join room")).click()
        text(page, f"You are {name}", RUN_TIMEOUT_MS)
        return page

    def ask(page, kind: str) -> None:
        """Pick the question whose name has ``kind`` in it (typed into the picker), then Ask."""
        picker = page.locator(".st-key-cr_kind")
        for _ in range(3):
            wait_until_idle(page)
            box = picker.locator("input")
            box.click()
            box.fill(kind)  # the typed text filters the questions
            page.get_by_role("option", name=re.compile(re.escape(kind))).first.click()
            wait_until_idle(page)
            if kind in picker.locator("input").input_value():
                break
        assert kind in picker.locator("input").input_value()
        page.get_by_role("button", name="Ask", exact=True).click()

    def answer(page, nth: int) -> str:
        pill = page.locator(PILLS).nth(nth)
        pill.wait_for(timeout=LIVE_MS)
        label = pill.inner_text().strip()
        pill.click()
        text(page, f"Answer sent: {label}")
        return label

    try:
        # 1. on 127.0.0.1: said before a room is made; the room shows no link and no QR code
        teacher_context = browser_context(phone=False)
        teacher = new_page(teacher_context, f"{app.url}/classroom")
        text(teacher, "Students cannot join yet", RUN_TIMEOUT_MS)
        teacher.locator('[data-testid="stAlert"]', has_text="make run HOST=0.0.0.0").first.wait_for(timeout=LIVE_MS)
        code = start_room(teacher)
        assert teacher.locator("main img").count() == 0 and f"/classroom?room={code}" not in teacher.inner_text("main")
        (secret,) = kept_keys(teacher_context).values()
        assert teacher_rooms(teacher_context) == {code: secret} and secret not in teacher.url

        # 2. restarted as told (SIGKILL, then 0.0.0.0, the same port and rooms file): the same room, in control
        restart(app, address="0.0.0.0")
        reload(teacher)
        in_control(teacher, code)
        lan = lan_address()
        join_url = f"{app.url}/classroom?room={code}"
        if lan:  # a network address: the link and its QR code are shown, and the phones open that link
            join_url = join_url.replace("127.0.0.1", lan)
            text(teacher, join_url)
            qr = teacher.get_by_role("img", name=re.compile(f"Join room {code}")).or_(teacher.locator("main img")).first
            qr.wait_for(timeout=LIVE_MS)

        # 3. two phones join; the question's four maps are each at least 150 px wide on a phone
        ann = join(browser_context(phone=True), join_url, "Ann")
        bob = join(browser_context(phone=True), join_url, "Bob")
        for page in (ann, bob):
            assert secret not in page.url and secret not in page.inner_text("main")
            assert not teacher_rooms(page.context)
        ask(teacher, "previous-token")
        text(teacher, "Question 1:", RUN_TIMEOUT_MS)
        text(ann, "Question 1:")
        ann.wait_for_function(f"({MAP_WIDTHS})().length === 4", timeout=LIVE_MS)
        widths = ann.evaluate(MAP_WIDTHS)
        assert min(widths) >= 150, f"maps {widths} px wide on a 390 px phone"
        assert ann.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        ann.screenshot(path=str(ARTIFACTS / "workshop-phone-maps.png"), full_page=True)
        ann_label = answer(ann, 0)
        text(teacher, "1 / 2")

        # 4. another page and back, through the menu and with Back: the running room, in control
        teacher.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Workshop").click()
        text(teacher, "predict, then reveal", RUN_TIMEOUT_MS)
        for _ in range(4):  # Back, past the other page's own address changes, to the classroom
            teacher.go_back(wait_until="domcontentloaded")
            wait_until_idle(teacher)
            if "/classroom" in teacher.url:
                break
        in_control(teacher, code)
        teacher.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Workshop").click()
        text(teacher, "predict, then reveal", RUN_TIMEOUT_MS)
        teacher.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Classroom").click()
        in_control(teacher, code)
        text(teacher, "1 / 2")

        # 5. killed mid-round and started again: the teacher's reload is in control, the phones carry on
        restart(app)
        reload(teacher)
        in_control(teacher, code)
        text(teacher, "1 / 2")
        for page in (ann, bob):  # no reload: each page reconnects by itself, as the same member
            wait_until_idle(page)
        text(ann, f"Answer sent: {ann_label}", RUN_TIMEOUT_MS)
        text(bob, "You are Bob", RUN_TIMEOUT_MS)
        assert bob.get_by_role("button", name=re.compile("^Join room")).count() == 0
        bob_label = answer(bob, 1)
        text(teacher, "2 / 2")
        with teacher_context.expect_page() as opened:
            teacher.get_by_role("link", name="Open the projector screen").click()
        screen = opened.value
        screen.on("pageerror", lambda exc: errors.append(str(exc)))
        wait_until_idle(screen)
        text(screen, "Question 1:", RUN_TIMEOUT_MS)
        text(screen, "2 / 2")
        assert screen.evaluate(CODE_PX, code) >= 64
        if lan:
            text(screen, join_url)
            assert screen.locator("main img").count() >= 1  # the QR code
        shown = screen.inner_text("main")
        assert secret not in shown and secret not in screen.url and "teacher=" not in shown
        for control in ("Ask", "Reveal", "Close the room"):
            assert screen.get_by_role("button", name=control, exact=True).count() == 0
        screen.wait_for_function(f"({TICKS})() !== null", timeout=LIVE_MS)
        ticks = screen.evaluate(TICKS)
        assert ticks and all(re.fullmatch(r"\d+", t) for t in ticks), ticks  # whole numbers of answers
        screen.screenshot(path=str(ARTIFACTS / "workshop-projector.png"), full_page=True)
        teacher.get_by_role("button", name="Reveal").click()
        for page in (teacher, ann, bob, screen):
            text(page, "The answer:")
        teacher.wait_for_function(f"({TICKS})() !== null", timeout=LIVE_MS)
        counts = bar_counts(teacher)
        assert sum(counts) == 2 and (ann_label == bob_label or sorted(counts)[-2:] == [1, 1]), counts
        text(ann, "of 1 right")

        # 6. Redis with its append-only file, killed mid-round and started again: no answer lost
        redis = Redis(tmp_path) if shutil.which("redis-server") else None
        if redis is not None:
            redis.start()
        try:
            if redis is None:
                return
            app.env["ATTENTION_ROOMS_REDIS_URL"] = redis.url
            restart(app)
            reload(teacher)
            text(teacher, "Start a room", RUN_TIMEOUT_MS)  # the file's room is not in Redis: the lobby
            code = start_room(teacher)
            ann, bob = (
                join(p.context, join_url.rsplit("=", 1)[0] + f"={code}", n) for p, n in ((ann, "Ann"), (bob, "Bob"))
            )
            ask(teacher, "shape")
            text(teacher, "Question 1:", RUN_TIMEOUT_MS)
            answer(ann, 0)
            text(teacher, "1 / 2")
            redis.kill()
            text(teacher, "not answering right now", RUN_TIMEOUT_MS)  # said while it is down
            redis.start()
            teacher.get_by_text("not answering right now").first.wait_for(state="hidden", timeout=RUN_TIMEOUT_MS)
            text(bob, "Question 1:", RUN_TIMEOUT_MS)
            answer(bob, 1)
            text(teacher, "2 / 2")
            teacher.get_by_role("button", name="Reveal").click()
            text(teacher, "The answer:", RUN_TIMEOUT_MS)
            teacher.wait_for_function(f"({TICKS})() !== null", timeout=LIVE_MS)
            assert sum(bar_counts(teacher)) == 2  # 0 answers lost
        finally:
            if redis is not None:
                redis.kill()
            assert not errors, f"JavaScript errors: {errors}"
    except Exception as e:  # a failure says what every page showed
        raise AssertionError(f"{e}\n{what_pages_show(contexts, errors)}") from e
    finally:
        for context in contexts:
            context.close()
