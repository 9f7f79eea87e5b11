"""Lesson links in a real browser (issue 36, item 10): a teacher sets the classifier page up (a sentence,
an explorer view), pins it from the sidebar, and a student who opens the link sees that sentence in
that view, with the menu and the page's inputs hidden and a note; an expired link says so and the page
opens as usual."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import parse_qs, quote, urlparse

import pytest
from playwright.sync_api import expect

from fixtures.server import streamlit_server
from model.core.checkpoint import WEIGHTS, default_dir
from pages.router.lesson import SECRET_ENV
from rooms.lesson import Lesson, sign

from .conftest import ARTIFACTS, STARTUP_SECONDS
from .test_explorer import ROOT, TIMEOUT_S, until
from .test_pages import wait_until_idle

SECRET = "the browser tests' lesson secret"
TEXT = "i loved every minute of it"
NAV = '[data-testid="stSidebarNav"]'
TEXT_INPUT = '.st-key-cls_text [data-testid="stTextInput"]'


@pytest.fixture(scope="module")
def lesson_url() -> Iterator[str]:
    """The app (serve.py) with a lesson secret of its own, so the test can make an expired link."""
    if not (default_dir("classifier") / WEIGHTS).is_file():
        pytest.skip("no classifier checkpoint: the page shows only the could-not-be-loaded message")
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(
        env={SECRET_ENV: SECRET}, log_path=ARTIFACTS / "lesson-app.log", startup_seconds=STARTUP_SECONDS
    ) as server:
        yield server.url


@pytest.fixture
def context(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context
    finally:
        context.close()


def open_explorer(page, url: str) -> object:
    page.goto(url, wait_until="domcontentloaded")
    page.locator(ROOT).wait_for(timeout=TIMEOUT_S * 1000)
    return page.locator(ROOT)


def test_a_pinned_link_shows_the_students_the_pinned_view(context, lesson_url: str) -> None:
    teacher = context.new_page()
    root = open_explorer(teacher, f"{lesson_url}/classifier?cls_text={quote(TEXT)}")
    root.get_by_role("button", name="lines", exact=True).click()
    root.focus()
    teacher.keyboard.press("PageDown")  # layer 1
    teacher.keyboard.press("]")  # head 1
    until(teacher, lambda s: (s["view"], s["layer"], s["head"]) == ("lines", 1, 1))
    deadline = time.monotonic() + TIMEOUT_S  # the explorer writes its view into the address bar
    while parse_qs(urlparse(teacher.url).query).get("cls_view") != ["lines"]:
        assert time.monotonic() < deadline, teacher.url
        teacher.wait_for_timeout(50)
    expect(teacher.locator(NAV)).to_be_visible()
    teacher.locator('[data-testid="stSidebar"]').get_by_text("Pin as lesson link").first.click()
    # the toggle reruns the page, which draws the pin button before the rest: a click during that run could
    # land on a button the run then replaces (seen once in a fresh-clone run of the whole suite)
    wait_until_idle(teacher)
    teacher.locator(".lesson-pin").click()
    code = teacher.locator('[data-testid="stSidebar"] [data-testid="stCode"]')
    code.wait_for(timeout=TIMEOUT_S * 1000)
    link = code.inner_text().strip()
    assert link.startswith(f"{lesson_url}/classifier?lesson=v1."), link
    teacher.screenshot(path=str(ARTIFACTS / "lesson-teacher.png"), full_page=True)

    student = context.browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    try:
        root = open_explorer(student, link)
        s = until(student, lambda s: s["view"] == "lines")
        assert (s["kind"], s["layer"], s["head"]) == ("encoder", 1, 1)  # the pinned view...
        expect(root.locator(".ae-strip .ae-tok[data-i]").first).to_have_text("i")  # ...of the pinned sentence
        assert student.locator(TEXT_INPUT).locator("input").input_value() == TEXT
        expect(student.get_by_text("Lesson link (expires")).to_be_visible()
        expect(student.locator(TEXT_INPUT)).to_be_hidden()  # the controls that would leave it
        expect(student.locator('.st-key-cls_example [data-testid="stSelectbox"]')).to_be_hidden()
        expect(student.locator(NAV)).to_have_count(0)  # no menu to another page
        expect(student.locator('[data-testid="stSidebar"]').get_by_text("Pin as lesson link")).to_have_count(0)
        assert parse_qs(urlparse(student.url).query)["lesson"] == [link.split("lesson=")[1]]
        student.screenshot(path=str(ARTIFACTS / "lesson-student.png"), full_page=True)
        student.reload(wait_until="domcontentloaded")  # a reload keeps the lesson
        student.locator(ROOT).wait_for(timeout=TIMEOUT_S * 1000)
        assert until(student, lambda s: s["view"] == "lines")["head"] == 1
        expect(student.locator(TEXT_INPUT)).to_be_hidden()
    finally:
        student.context.close()


def test_an_expired_link_says_so_and_opens_the_page(context, lesson_url: str) -> None:
    params = {"cls_text": TEXT, "cls_view": "grid"}
    token = sign(Lesson("classifier", params, expires=int(time.time()) - 3600), SECRET.encode())
    page = context.new_page()
    open_explorer(page, f"{lesson_url}/classifier?lesson={token}")
    expect(page.get_by_text("This lesson link expired on")).to_be_visible()
    expect(page.locator(TEXT_INPUT)).to_be_visible()  # the page as usual: its inputs and its menu
    expect(page.locator(NAV)).to_be_visible()
    assert page.locator(TEXT_INPUT).locator("input").input_value() != TEXT
    assert until(page, lambda s: s is not None)["view"] == "heatmap"
    page.wait_for_timeout(300)
    assert "lesson" not in parse_qs(urlparse(page.url).query)


def test_a_workshop_lesson_keeps_the_answer_and_hides_the_way_out(context, lesson_url: str) -> None:
    token = sign(Lesson("workshop", {"q": "1"}), SECRET.encode())
    page = context.new_page()
    page.goto(f"{lesson_url}/workshop?lesson={token}", wait_until="domcontentloaded")
    expect(page.get_by_text("Lesson link (no expiry)")).to_be_visible(timeout=TIMEOUT_S * 1000)
    answer = page.locator(".st-key-ws_guess_1, .st-key-ws_shape_1")
    expect(answer).to_be_visible()  # a student still answers...
    expect(page.locator(".st-key-ws_reveal")).to_be_visible()
    expect(page.locator(".st-key-ws_q")).to_be_hidden()  # ...but cannot move to another question
    expect(page.locator(".st-key-ws_next")).to_be_hidden()
    assert page.locator(".st-key-ws_q input").input_value() == "1"
