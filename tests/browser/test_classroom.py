"""A whole classroom round in a real browser: one teacher and three students (one on a 360 px wide
phone), each its own browser context. Nobody reloads: the question, the live count and the reveal
reach every page through the room's polling fragment. Ends with the summary and its CSV."""

from __future__ import annotations

import csv
import io
import re

from .conftest import ARTIFACTS
from .test_pages import RUN_TIMEOUT_MS, wait_until_idle

LIVE_MS = 30_000  # a change must show up by polling alone (every 1.5 s; generous for a busy machine)
STUDENTS = (("Ann", 1400), ("Bob", 1400), ("Zoë_360", 360))


def text(page, value: str, timeout: int = LIVE_MS):
    locator = page.get_by_text(value).first
    locator.wait_for(timeout=timeout)
    return locator


def bar_counts(page) -> list[int]:
    """The x values (answer counts) of the page's first bar chart, read from plotly's own data."""
    return page.evaluate(
        """() => { const p = [...document.querySelectorAll('.js-plotly-plot')]
                    .find(p => p.data && p.data[0] && p.data[0].type === 'bar');
                   return p ? p.data[0].x : null; }"""
    )


def test_a_round_with_a_teacher_and_three_students(browser, app_url: str) -> None:
    contexts, errors = [], []

    def open_page(width: int, url: str):
        context = browser.new_context(viewport={"width": width, "height": 1000 if width > 400 else 740})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url, wait_until="domcontentloaded")
        wait_until_idle(page)
        return page

    try:
        teacher = open_page(1400, f"{app_url}/classroom")
        teacher.get_by_role("button", name="Start a room").click()
        text(teacher, "Room code:", RUN_TIMEOUT_MS)
        code = re.search(r"room=([A-Z0-9]{6})", teacher.url).group(1)
        qr = teacher.get_by_role("img", name=re.compile(f"Join room {code}")).or_(teacher.locator("main img")).first
        qr.wait_for(timeout=LIVE_MS)  # the QR code
        assert qr.evaluate("img => img.naturalWidth") > 100

        students = []
        for name, width in STUDENTS:
            page = open_page(width, f"{app_url}/classroom?room={code}")
            box = page.get_by_label("Nickname (optional)")
            if name == "Ann":  # markup is refused with a message, never drawn
                box.fill("<b>Ann</b>")
                box.press("Enter")
                page.get_by_role("button", name=f"Join room {code}").click()
                text(page, "A nickname may use letters", RUN_TIMEOUT_MS)
                assert page.locator("main b").count() == 0
            box.fill(name)
            box.press("Enter")
            page.get_by_role("button", name=f"Join room {code}").click()
            text(page, "Waiting for the teacher's first question", RUN_TIMEOUT_MS)
            text(page, f"You are {name}")
            students.append(page)

        teacher.get_by_role("button", name="Ask", exact=True).click()
        text(teacher, "Question 1:", RUN_TIMEOUT_MS)
        for page, choice in zip(students, ("4:dessert", "0:Life", "4:dessert")):
            text(page, "Question 1: Which key does 1:is attend to most?")  # arrived without a reload
            page.get_by_role("radio", name=choice, exact=True).click()  # st.pills: one radio per option
            text(page, "Answer sent")
        phone = students[2]
        assert phone.evaluate("() => document.documentElement.scrollWidth") <= 360  # nothing wider than the phone

        text(teacher, "3 / 3")  # the live count
        teacher.get_by_text("Show the answers' histogram").click()
        teacher.wait_for_function(
            """() => [...document.querySelectorAll('.js-plotly-plot')].some(p => p.data && p.data[0].type === 'bar')""",
            timeout=LIVE_MS,
        )
        assert bar_counts(teacher) == [1, 0, 0, 0, 2, 0]

        teacher.get_by_role("button", name="Reveal").click()
        for page, verdict in zip(students, ("You got it.", "You chose 0:Life", "You got it.")):
            text(page, "The answer: 4:dessert")
            text(page, verdict)
            page.wait_for_selector('.js-plotly-plot .heatmaplayer', state="attached", timeout=LIVE_MS)
        ARTIFACTS.mkdir(exist_ok=True)
        phone.screenshot(path=str(ARTIFACTS / "classroom-phone.png"), full_page=True)

        teacher.get_by_role("button", name="Close the room").click()
        text(teacher, "This room is closed", RUN_TIMEOUT_MS)
        text(students[0], "closed this room")
        text(students[0], "1 of 1 right")
        with teacher.expect_download(timeout=RUN_TIMEOUT_MS) as info:
            teacher.get_by_role("button", name="Download participants (CSV)").click()
        rows = list(csv.reader(io.StringIO(info.value.path().read_text(encoding="utf-8"))))
        assert rows[0] == ["nickname", "answered", "correct", "points", "round 1"]
        assert [r[:3] for r in rows[1:]] == [["Ann", "1", "1"], ["Bob", "1", "0"], ["Zoë_360", "1", "1"]]
        teacher.screenshot(path=str(ARTIFACTS / "classroom-teacher.png"), full_page=True)
        for page in (teacher, *students):
            assert page.locator('[data-testid="stException"]').count() == 0
        assert not errors, f"JavaScript errors: {errors}"
    finally:
        for context in contexts:
            context.close()
