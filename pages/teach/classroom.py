"""Classroom: a live room. The teacher starts a room (code, link, QR code) and asks questions; every
student's device shows each one at once, students answer with a click (on a key in the attention
explorer when the answer is a key, else on a pill), the projector counts the answers live, and the
teacher's reveal reaches every device with the head's real weights. Rooms live in ``rooms``'s
store (in this process, or Redis with ``$ATTENTION_ROOMS_REDIS_URL``); a room page polls it in a
fragment, and nothing polls outside a room. What every device shows of a round is in
``pages/teach/room_parts.py``."""

from __future__ import annotations

import io

import pandas as pd
import segno
import streamlit as st

from model.core.checkpoint import Checkpoint
from model.lessons.questions import CREDIT, KINDS, build_question
from pages import heading
from pages.shared.guide import teachers_guide
from pages.shared.models import get_checkpoint
from pages.shared.text import markdown_escape
from pages.teach.join_link import JoinLink, join_link, lan_address, listen_address
from pages.teach.room_parts import (
    answer_box,
    flash,
    get_question,
    room_figure,
    rooms,
    show_flash,
    show_question,
    show_reveal,
    watch,
)
from rooms.question import Question
from rooms.rules import RoomError, RoomStatus, normalise_code
from rooms.store import RoomStore, open_store
from rooms.summary import Summary, answers_csv, participants_csv, questions_csv, summarise
from viz.classroom import answer_histogram

ROOM_URL, TEACHER_URL = "room", "teacher"
# A student's own token, so a reload (a phone switching tabs) resumes the same member instead of joining
# again; it is the member's id, never the teacher's secret. Its "room" prefix keeps it among the page's
# URL keys (declared beside its st.Page in app.py).
MEMBER_URL = "room_member"
PAGE_PATH = "classroom"


def page_url() -> str:
    """This page's address as the browser sees it (without the query)."""
    url = (st.context.url or f"http://localhost:8501/{PAGE_PATH}").rstrip("/")
    return url if url.endswith("/" + PAGE_PATH) else f"{url}/{PAGE_PATH}"


@st.cache_data(ttl=60, show_spinner=False)
def this_machine() -> str | None:
    """This machine's local-network address (looked up once a minute: a laptop may change networks)."""
    return lan_address()


def student_link(code: str) -> JoinLink:
    """The join link for room ``code`` as students' devices can open it (:mod:`pages.teach.join_link`)."""
    return join_link(f"{page_url()}?{ROOM_URL}={code}", listen_address(), this_machine())


@st.cache_data(max_entries=64, show_spinner=False)
def qr_png(url: str) -> bytes:
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="png", scale=8, border=2)
    return buf.getvalue()


def enter(code: str) -> None:
    st.query_params.clear()
    st.query_params[ROOM_URL] = code
    if code in rooms("member"):
        st.query_params[MEMBER_URL] = rooms("member")[code][0]


# ---- outside a room ------------------------------------------------------------------------------


def start_room(store: RoomStore) -> None:
    try:
        keys = store.create_room()
    except RoomError as e:
        return flash("error", str(e))
    rooms("teacher")[keys.code] = keys.secret
    enter(keys.code)


def join_room(store: RoomStore, code_key: str | None, name_key: str) -> None:
    try:
        code = normalise_code(st.session_state.get(code_key) if code_key else st.query_params.get(ROOM_URL))
        member, nickname = store.join(code, st.session_state.get(name_key, ""))
    except RoomError as e:
        return flash("error", str(e))
    rooms("member")[code] = (member, nickname)
    enter(code)


def lobby(store: RoomStore) -> None:
    left, right = st.columns(2)
    with left.container(border=True):
        st.subheader("Join a room")
        st.text_input("Room code", key="cr_code", max_chars=20, placeholder="e.g. K7PX2Q")
        st.text_input("Nickname (optional)", key="cr_name", placeholder="shown to the room")
        st.button("Join", key="cr_join", type="primary", on_click=join_room, args=(store, "cr_code", "cr_name"))
    with right.container(border=True):
        st.subheader("Teach")
        st.caption("Start a room, show its QR code on the projector, then ask questions. Rooms end after 3 hours idle.")
        st.button("Start a room", key="cr_start", on_click=start_room, args=(store,))


def join_form(store: RoomStore, code: str) -> None:
    st.subheader(f"Room {code}")
    st.text_input("Nickname (optional)", key="cr_name", placeholder="shown to the room")
    st.button(
        f"Join room {code}", key="cr_join_here", type="primary", on_click=join_room, args=(store, None, "cr_name")
    )


def adopt_teacher_link(store: RoomStore, code: str) -> None:
    """``?teacher=SECRET`` makes this session the room's teacher; the secret leaves the URL at once."""
    secret = st.query_params.get(TEACHER_URL)
    if secret is None:
        return
    st.query_params.pop(TEACHER_URL)
    if store.is_teacher(code, secret):
        rooms("teacher")[code] = secret
    else:
        st.warning("That teacher link is not valid for this room; you can join it as a student.")


def adopt_member_link(store: RoomStore, code: str) -> None:
    """``?room_member=ID`` (written when this student joined) makes this session that member again: a
    reload keeps one person one member, with their answers. A session already in the room keeps its own."""
    member = st.query_params.get(MEMBER_URL)
    if member is None:
        return
    if code in rooms("member"):
        if member != rooms("member")[code][0]:
            st.query_params[MEMBER_URL] = rooms("member")[code][0]
        return
    try:
        rooms("member")[code] = (member, store.nickname(code, member))
    except RoomError:
        st.query_params.pop(MEMBER_URL)
        st.warning("That student link is not valid for this room; you can join it below.")


# ---- the teacher's and the students' views ------------------------------------------------------


def ask(store: RoomStore, code: str) -> None:
    kind, number = st.session_state["cr_kind"], int(st.session_state["cr_number"])

    def checkpoint(task: str) -> Checkpoint | None:
        ck = get_checkpoint(task)
        return ck if isinstance(ck, Checkpoint) else None

    try:
        store.set_question(code, rooms("teacher")[code], build_question(kind, number, checkpoint))
    except (RoomError, ValueError) as e:
        flash("error", f"That question could not be asked: {e}")


def teacher_action(store: RoomStore, code: str, action: str) -> None:
    try:
        getattr(store, action)(code, rooms("teacher")[code])
    except RoomError as e:
        flash("error", str(e))


def projector(status: RoomStatus, q: Question | None) -> None:
    st.metric("Answered", f"{status.answered} / {status.participants}")
    if q is not None and st.session_state.get("cr_show_hist") and not status.revealed:
        room_figure(answer_histogram(q.options, status.counts, title="answers so far"), "cr-live-hist")


def teacher_view(store: RoomStore, code: str, status: RoomStatus) -> None:
    link = student_link(code)
    join_url = link.url
    if not link.reachable:
        st.warning(link.problem)
    info, qr = st.columns([3, 2])
    info.subheader(f"Room code: {code}")
    info.markdown(
        "Join at this address or scan the code:" if link.reachable else "Once restarted, students join at this address:"
    )
    info.code(join_url, language=None, wrap_lines=True)  # as typed: Markdown would show its escapes
    with info.expander("Teacher link (keep it private: it controls the room)"):
        st.text(f"{join_url}&{TEACHER_URL}={rooms('teacher')[code]}")
    qr.image(qr_png(join_url), caption=f"Join room {code}", width=260)
    if status.closed:
        st.info("This room is closed. The summary stays here until the room expires.")
    else:
        with st.container(border=True):
            left, mid, right = st.columns([3, 1, 1], vertical_alignment="bottom")
            left.selectbox("Question", list(KINDS), key="cr_kind", format_func=lambda k: KINDS[k][0])
            mid.number_input("Number", 0, 9999, value=status.round, key="cr_number")
            right.button("Ask", key="cr_ask", type="primary", on_click=ask, args=(store, code), width="stretch")
    q = get_question(store, code, status.round) if status.round else None
    if q is not None:
        show_question(q, status.round)
    if not status.closed:
        st.toggle("Show the answers' histogram", key="cr_show_hist", disabled=q is None or status.revealed)
        watch(store, code, status.version, lambda s: projector(s, q))
        a, b = st.columns(2)
        a.button(
            "Reveal",
            key="cr_reveal",
            type="primary",
            disabled=q is None or status.revealed,
            on_click=teacher_action,
            args=(store, code, "reveal"),
            width="stretch",
        )
        b.button(
            "Close the room", key="cr_close", on_click=teacher_action, args=(store, code, "close"), width="stretch"
        )
    if q is not None and (status.revealed or status.closed):
        show_reveal(q, status, status.round)
    with st.expander("Summary", expanded=status.closed):
        teacher_summary(store, code)


def teacher_summary(store: RoomStore, code: str) -> None:
    s = summarise(store.data(code))
    if not s.finished:
        st.caption("The summary fills in as questions are revealed.")
        return
    people = pd.DataFrame(
        [dict(nickname=p.nickname, answered=p.answered, correct=p.correct, points=p.points) for p in s.participants]
    )
    st.dataframe(people, hide_index=True, key="cr_people")
    st.dataframe(
        pd.DataFrame(
            [
                dict(round=q.round, question=q.title, answer=q.answer, answered=q.answered, correct=q.correct)
                for q in s.questions
            ]
        ),
        hide_index=True,
        key="cr_rounds",
    )
    for what, make in (("participants", participants_csv), ("answers", answers_csv), ("questions", questions_csv)):
        st.download_button(
            f"Download {what} (CSV)",
            # bytes, not a callable: the same summary gives the same file (and address) on every rerun, so
            # a rerun while the browser fetches it cannot withdraw it ("Download canceled")
            data=make(s).encode("utf-8"),
            file_name=f"room-{code}-{what}.csv",
            mime="text/csv",
            key=f"cr_csv_{what}",
            on_click="ignore",
        )


def own_summary(s: Summary, nickname: str) -> None:
    me = s.of(nickname)
    if me is None or not s.finished:
        return
    st.markdown(f"**Your results:** {me.correct} of {s.finished} right, {me.points:.2f} points.")
    if me.points != me.correct:  # a wrong answer earned part of a point: say how
        st.caption(CREDIT)
    # a Markdown table, not a data grid: at the reveal every device draws it at once, and a grid's
    # Arrow conversion was a third of a student's page run; markdown_escape escapes "|" too. Four short
    # columns, no question's title: with it the table was 422 px wide on a 390-px phone, cut at the right
    cell = lambda text: markdown_escape(str(text))  # noqa: E731
    lines = ["| round | yours | answer | points |", "| --: | --- | --- | --: |"]
    lines += [
        f"| {q.round} | {cell(c or '—')} | {cell(q.answer)} | {'—' if p is None else f'{p:.2f}'} |"
        for q, c, p in zip(s.questions, me.choices, me.scores)
    ]
    st.markdown("\n".join(lines))


def student_view(store: RoomStore, code: str, status: RoomStatus) -> None:
    member, nickname = rooms("member")[code]
    st.subheader(f"Room {code}")
    st.caption(f"You are {markdown_escape(nickname)}.")
    if status.closed:
        st.info("The teacher has closed this room. Thank you!")
    elif not status.round:
        st.info("You are in. Waiting for the teacher's first question…")
    else:
        q = get_question(store, code, status.round)
        show_question(q, status.round)
        mine = store.get(code, member).mine
        if status.revealed:
            show_reveal(q, status, status.round, mine)
        else:
            answer_box(store, code, member, q, status.round, mine)
    if not status.closed:
        watch(store, code, status.version)
    own_summary(summarise(store.data(code)), nickname)


INTRO = (
    "A live quiz about real attention heads: the teacher starts a room and asks, every student answers on their "
    "own phone or laptop, and the reveal shows everyone the head's real weights."
)


def main() -> None:
    st.title(heading("classroom"))
    st.caption(INTRO)
    teachers_guide(folded=ROOM_URL in st.query_params)  # the lesson as a class: its steps, the questions' order
    store = open_store()
    raw = st.query_params.get(ROOM_URL)
    show_flash()
    if raw is None:
        return lobby(store)
    try:
        code = normalise_code(raw)
        status = store.get(code)
    except RoomError as e:
        st.error(str(e))
        return lobby(store)
    adopt_teacher_link(store, code)
    adopt_member_link(store, code)
    others = sorted((set(rooms("teacher")) | set(rooms("member"))) - {code})
    if others:
        st.caption("This tab also has room " + ", ".join(others) + "; each room keeps its own answers.")
    if code in rooms("teacher"):
        teacher_view(store, code, status)
    elif code in rooms("member"):
        student_view(store, code, status)
    else:
        join_form(store, code)


main()
