"""The Classroom's join link reaches the students: never a loopback address on a phone, and when the app
listens on loopback only, the teacher is told on screen what to run and which address to share (issue 43,
item 1); the page opens with a line saying what a room is."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from pages.teach import join_link as jl
from rooms.store import reset_stores
from tests.apptest import page, run, url

PAGE = page("classroom")


@pytest.mark.parametrize(
    ("url", "listen", "lan", "want", "reachable"),
    [
        # make run HOST=0.0.0.0, the teacher on the laptop itself: the laptop's network address
        (
            "http://127.0.0.1:8501/classroom?room=K7PX2Q",
            "0.0.0.0",
            "192.168.1.20",
            "http://192.168.1.20:8501/classroom?room=K7PX2Q",
            True,
        ),
        (
            "http://localhost:8501/classroom?room=K7PX2Q",
            "",
            "10.0.0.5",
            "http://10.0.0.5:8501/classroom?room=K7PX2Q",
            True,
        ),
        # make run (loopback only): the address to share once restarted, and not reachable now
        (
            "http://127.0.0.1:8501/classroom?room=K7PX2Q",
            "127.0.0.1",
            "192.168.1.20",
            "http://192.168.1.20:8501/classroom?room=K7PX2Q",
            False,
        ),
        # opened by a name others can use (a server, Streamlit Cloud): as it is
        (
            "https://attention.example.org/classroom?room=K7PX2Q",
            "0.0.0.0",
            "10.0.0.5",
            "https://attention.example.org/classroom?room=K7PX2Q",
            True,
        ),
        (
            "http://192.168.1.20:8501/classroom?room=K7PX2Q",
            "0.0.0.0",
            "10.0.0.5",
            "http://192.168.1.20:8501/classroom?room=K7PX2Q",
            True,
        ),
        # listening on one network address: that one
        (
            "http://localhost:8501/classroom?room=K7PX2Q",
            "192.168.1.7",
            None,
            "http://192.168.1.7:8501/classroom?room=K7PX2Q",
            True,
        ),
        # the browser pointed at the unspecified address: it opens this machine, a phone's own elsewhere
        (
            "http://0.0.0.0:8501/classroom?room=K7PX2Q",
            "0.0.0.0",
            "192.168.1.20",
            "http://192.168.1.20:8501/classroom?room=K7PX2Q",
            True,
        ),
        # IPv6 loopback and a v6 LAN address
        (
            "http://[::1]:8501/classroom?room=K7PX2Q",
            "::",
            "fd00::7",
            "http://[fd00::7]:8501/classroom?room=K7PX2Q",
            True,
        ),
    ],
)
def test_the_link_names_an_address_students_can_reach(url, listen, lan, want, reachable):
    link = jl.join_link(url, listen, lan)
    assert (link.url, link.reachable) == (want, reachable)
    assert bool(link.problem) == (not reachable)


def test_loopback_only_says_what_to_run_and_what_to_share():
    link = jl.join_link("http://127.0.0.1:8501/classroom?room=K7PX2Q", "127.0.0.1", "192.168.1.20")
    assert jl.RESTART in link.problem and "192.168.1.20" not in link.problem  # no address before it can be opened
    no_lan = jl.join_link("http://localhost:8501/classroom?room=K7PX2Q", "", None)
    assert not no_lan.reachable and "network" in no_lan.problem


def test_loopback_names():
    assert all(map(jl.is_loopback, ["127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]", "app.localhost", "0.0.0.0"]))
    assert not any(map(jl.is_loopback, ["192.168.1.2", "example.org", "", None]))
    address = jl.lan_address()  # this machine's, whatever it is: never one that names the device itself
    assert address is None or not jl.is_loopback(address)


@pytest.fixture
def teacher_page(app_env, monkeypatch):
    monkeypatch.delenv("ATTENTION_ROOMS_REDIS_URL", raising=False)
    monkeypatch.setattr(jl, "lan_address", lambda: "192.168.1.20")
    reset_stores()
    before = st.get_option("server.address")
    yield
    st.config.set_option("server.address", before)
    reset_stores()


def start(listen: str | None) -> tuple[AppTest, str]:
    st.config.set_option("server.address", listen)
    teacher = run(PAGE)
    teacher.button(key="cr_start").click().run()
    assert not teacher.exception
    return teacher, url(teacher, "room")


def shown_link(at: AppTest) -> str:
    return at.get("code")[0].value


@pytest.mark.usefixtures("teacher_page")
def test_the_page_opens_with_a_line_on_what_a_room_is():
    at = run(PAGE)
    assert "every student answers on their own phone" in at.caption[0].value


@pytest.mark.usefixtures("teacher_page")
def test_served_on_every_interface_the_link_and_qr_carry_the_network_address():
    teacher, code = start("0.0.0.0")
    assert shown_link(teacher) == f"http://192.168.1.20:8501/classroom?room={code}"
    assert not teacher.warning
    assert "127.0.0.1" not in shown_link(teacher) and "localhost" not in shown_link(teacher)


@pytest.mark.usefixtures("teacher_page")
def test_served_on_loopback_the_teacher_is_told_what_to_run():
    teacher, code = start("127.0.0.1")
    (warning,) = [w.value for w in teacher.warning]
    assert "make run HOST=0.0.0.0" in warning and "192.168.1.20" not in warning
    assert not teacher.get("code") and not teacher.get("image")  # no link or QR code that no phone can open
