"""AppTest of lesson links through the router (app.py) on tiny checkpoints: a pinned link opens its page
with the pinned input and explorer view, the menu hidden, the page's inputs hidden by the lesson's
stylesheet and a note; a link to one page opened on another goes to its page; an expired or changed
link says so and the page opens as usual, with its menu and the pin control."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from pages.router.lesson import SECRET_ENV, hide_inputs_css
from rooms.lesson import Lesson, sign
from tests import apptest
from tests.apptest import explorer, url

APP = str(apptest.ROOT / "app.py")
SECRET = "the tests' lesson secret"
TEXT = "a moving <b>film</b> & not bad"
PINNED = {"cls_text": TEXT, "cls_kind": "encoder", "cls_layer": "1", "cls_head": "1", "cls_view": "lines"}
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(autouse=True)
def secret(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, SECRET)


def token(expires: float | None = None, page: str = "classifier", params: dict = PINNED) -> str:
    return sign(Lesson(page=page, params=params, expires=None if expires is None else int(expires)), SECRET.encode())


def messages(at: AppTest) -> str:
    return " ".join(m.value for kind in ("warning", "info", "caption") for m in getattr(at, kind))


def test_a_pinned_link_opens_the_page_as_pinned():
    lesson = token(time.time() + 3600)
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lesson"] = lesson
    at.switch_page("pages/models/classifier.py").run()
    assert not at.exception
    assert at.text_input(key="cls_text").value == TEXT  # the pinned input...
    state = explorer(at)["state"]
    assert (state["kind"], state["layer"], state["head"], state["view"]) == ("encoder", 1, 1, "lines")  # ...and view
    assert url(at, "lesson") == lesson and url(at, "cls_text") == TEXT
    assert "Lesson link (expires" in messages(at)
    assert [m.value for m in at.markdown if m.value == hide_inputs_css(("cls_",))]  # the page's inputs hidden
    assert not [e for e in at.sidebar.get("expander") if e.label == "Pin as lesson link"]


def test_a_link_opened_on_another_page_goes_to_its_page():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lesson"] = token(None)
    at.run()  # the start page
    assert not at.exception
    assert at.text_input(key="cls_text").value == TEXT and "Lesson link (no expiry)" in messages(at)


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda: token(time.time() - 3600), "This lesson link expired on"),
        (lambda: token(None)[:-3] + "abc", "not valid"),
        (lambda: sign(Lesson("classifier", PINNED), b"another server's secret"), "not valid"),
        (lambda: "not-a-token", "not a lesson link"),
    ],
)
def test_an_expired_or_changed_link_says_so_and_the_page_opens_as_usual(make, said):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["lesson"] = make()
    at.switch_page("pages/models/classifier.py").run()
    assert not at.exception
    assert any(said in w.value and "opens as usual" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.text_input(key="cls_text").value != TEXT  # the page's own default
    assert url(at, "lesson") is None
    assert not [m for m in at.markdown if "st-key-" in m.value]
    assert [e for e in at.sidebar.get("expander") if e.label == "Pin as lesson link"]
