"""The reveal reruns only a student's round, not the page (issue 52, the lecture): at a lecture's reveal
every device reruns at once in one app process, so a student's reveal draws the answer, everyone's
answers and the head's weights, and not the router, the sidebar and the page above the round again.
A new question and the room's end still redraw the whole page.

A real app server and websocket-level sessions that speak the browser's protocol (``fixtures/st_client.py``,
as ``bench/classroom_load.py``): what a run draws arrives as messages, in order, so "the page was not
rerun" is "nothing arrived between the teacher's click and the answer" (a full run draws the page's
title, its sidebar and the question first)."""

from __future__ import annotations

import asyncio
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor

from fixtures.server import streamlit_server
from fixtures.st_client import Client, answer
from pages import heading

ROOMS_DIR_ENV = "ATTENTION_ROOMS_DIR"


async def play(base: str) -> dict:
    teacher = Client(base, "teacher")
    await teacher.open()
    await teacher.wait_widget("cr_start")
    await teacher.send(trigger="cr_start")
    await teacher.wait_text(r"^Room code:")
    code = re.search(r"room=([A-Z0-9]{6})", teacher.query).group(1)
    students = [Client(base, f"s{i}", f"room={code}") for i in range(2)]
    for c in students:
        await c.open()
        await c.wait_widget("cr_join_here")
        await c.send(trigger="cr_join_here", cr_name=("string_value", c.name))
        await c.wait_text("Waiting for the teacher")
    out: dict = {}
    for r in (1, 2):
        asked = await teacher.send(trigger="cr_ask", cr_number=("double_value", float(r - 1)))
        for c in students:
            await c.wait_text(rf"^Question {r}:", since=asked)
            # a new question comes with the whole page: its title is drawn again in that run
            out.setdefault("page_redrawn_for_question", []).append(
                any(t >= asked and s == heading("classroom") for t, s in c.texts)
            )
            sent = await answer(c, f"cr-keys-{code}-{r}", f"cr_pick_{code}_{r}")  # a key or a pill
            await c.wait_text("Answer sent", since=sent)
        await teacher.wait_text(r"^2 / 2$", since=asked)
        revealed = await teacher.send(trigger="cr_reveal")
        for c in students:
            seen, _ = await c.wait_text(r"^The answer:", since=revealed)
            # what arrived after the click and before the answer: a full page run would have drawn the title,
            # the sidebar's texts and the question before the answer
            out.setdefault("drawn_before_the_answer", []).append([s for t, s in c.texts if revealed <= t < seen])
            await c.wait_text(r"everyone's answers", since=revealed)
            await c.wait_text(r"Your results:", since=revealed)
    closed = await teacher.send(trigger="cr_close")
    for c in students:
        await c.wait_text("The teacher has closed this room", since=closed)
    out["errors"] = [e for c in (teacher, *students) for e in c.errors if "Students cannot join yet" not in e]
    for c in (teacher, *students):
        await c.close()
    return out


def test_a_reveal_reruns_the_students_round_only():
    with tempfile.TemporaryDirectory(prefix="rooms-") as folder:
        with streamlit_server(
            # no periodic whole-page redraw (a heal) that could land between the click and the answer
            env={ROOMS_DIR_ENV: folder, "ATTENTION_ROOM_HEAL_POLLS": "1000000"},
            log_name="classroom-reveal",
        ) as server:
            # a thread of its own: a browser test run earlier in this process may hold a running event loop
            with ThreadPoolExecutor(1) as pool:
                out = pool.submit(asyncio.run, play(server.url)).result()
    assert out["errors"] == []
    assert out["page_redrawn_for_question"] == [True] * 4
    # every student's reveal (2 students, 2 rounds): the answer was the first thing drawn after the click
    assert out["drawn_before_the_answer"] == [[]] * 4


def test_the_reveals_histogram_is_copied_once_for_every_device():
    """st.plotly_chart copies a figure whole (``to_dict``) each time it draws it; at a reveal every device
    draws the same histogram, so its copy is made once and is the figure's own."""
    from pages.teach.room_parts import revealed_histogram
    from viz.classroom import answer_histogram

    shown = revealed_histogram(("a", "b", "c"), (3, 4, 0), 1)
    fresh = answer_histogram(("a", "b", "c"), (3, 4, 0), answer=1, title="everyone's answers")
    assert shown.to_dict() is shown.to_dict()
    assert shown.to_dict() == fresh.to_dict()
    assert revealed_histogram(("a", "b", "c"), (3, 4, 0), 1) is shown
