"""Classroom: a live room. The teacher starts a room (code, link, QR code) and asks questions; every
student's device shows each one at once, students answer with a click (on a key in the attention
explorer when the answer is a key, else on a pill), the projector counts the answers live, and the
teacher's reveal reaches every device with the head's real weights. Rooms live in ``rooms``'s
store (a file on this machine by default, or Redis with ``$ATTENTION_ROOMS_REDIS_URL``); a room page
polls it in a fragment, and nothing polls outside a room. What every device shows of a round is in
``pages/teach/room_parts.py``.

The teacher never loses a room: the browser keeps the teacher's key in a cookie
(``pages/teach/teacher_keys.py``), so a reload, a restart of the app or a second tab of the same browser
takes control again, and coming back to this page (the menu, Back) opens the room still running. The
projector screen (``?room=CODE&room_view=projector``) shows the code, the join address, its QR code, the
question and the answers, with no control and no teacher key on it. A link or QR code is shown only for
an address other devices can open; the lobby says so before a room is made."""

from __future__ import annotations

import html
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
    POLL_S,
    answer_box,
    flash,
    get_question,
    room_figure,
    rooms,
    show_flash,
    show_question,
    show_reveal,
    this_fragment,
    watch,
)
from pages.teach.teacher_keys import browser_keys, keep_keys
from rooms.question import Question
from rooms.rules import RoomError, RoomStatus, StoreUnavailable, normalise_code
from rooms.store import RoomStore, open_store
from rooms.summary import Summary, answers_csv, participants_csv, questions_csv, room_summary, summarise
from viz.classroom import answer_histogram

ROOM_URL, TEACHER_URL = "room", "teacher"
# A student's own token, so a reload (a phone switching tabs) resumes the same member instead of joining
# again; it is the member's id, never the teacher's secret. Its "room" prefix keeps it among the page's
# URL keys (declared beside its st.Page in app.py).
MEMBER_URL = "room_member"
# The projector screen: ?room=CODE&room_view=projector. ?room_lobby=1 shows the lobby even while a room of
# this browser runs (the menu and Back open the running room instead).
VIEW_URL, PROJECTOR_VIEW, LOBBY_URL = "room_view", "projector", "room_lobby"
PAGE_PATH = "classroom"
CODE_PX = 96  # the room code on the projector screen, read from the back of a room


def page_url() -> str:
    """This page's address as the browser sees it (without the query)."""
    url = (st.context.url or f"http://localhost:8501/{PAGE_PATH}").rstrip("/")
    return url if url.endswith("/" + PAGE_PATH) else f"{url}/{PAGE_PATH}"


@st.cache_data(ttl=60, show_spinner=False)
def this_machine() -> str | None:
    """This machine's local-network address (looked up once a minute: a laptop may change networks)."""
    return lan_address()


def student_link(code: str | None = None) -> JoinLink:
    """The join link for room ``code`` as students' devices can open it (:mod:`pages.teach.join_link`);
    without a code, whether students can reach this page at all."""
    url = page_url() if code is None else f"{page_url()}?{ROOM_URL}={code}"
    return join_link(url, listen_address(), this_machine())


@st.cache_data(max_entries=64, show_spinner=False)
def qr_png(url: str) -> bytes:
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="png", scale=8, border=2)
    return buf.getvalue()


def enter(code: str) -> None:
    st.session_state.pop("cr_confirm", None)
    st.query_params.clear()
    st.query_params[ROOM_URL] = code
    if code in rooms("member"):
        st.query_params[MEMBER_URL] = rooms("member")[code][0]


def to_lobby() -> None:
    st.query_params.clear()
    st.query_params[LOBBY_URL] = "1"


def adopt_browser_keys(store: RoomStore) -> None:
    """Once a session: take control of the rooms whose teacher key this browser holds (a reload, a new
    tab, the app restarted), each checked against the store."""
    if st.session_state.get("cr_keys_read"):
        return
    stale = []
    for code, secret in browser_keys().items():
        if code in rooms("teacher"):
            continue
        try:
            if store.is_teacher(code, secret):
                rooms("teacher")[code] = secret
            else:
                stale.append(code)
        except StoreUnavailable:
            return  # try again on the next run
        except RoomError:  # the room has ended
            stale.append(code)
    st.session_state["cr_keys_read"] = True
    st.session_state["cr_forget"] = tuple(stale)


def room_status(store: RoomStore, code: str) -> RoomStatus | None:
    try:
        return store.get(code)
    except RoomError:
        return None


def my_rooms(store: RoomStore) -> list[tuple[str, RoomStatus]]:
    """The rooms this browser runs, still in the store: running ones first, the newest first."""
    found = []
    for code in reversed(list(rooms("teacher"))):
        status = room_status(store, code)
        if status is not None:
            found.append((code, status))
    return sorted(found, key=lambda item: item[1].closed)


def running_room(store: RoomStore) -> str | None:
    """The room to come back to: the one this session was last in, else one this browser runs, if still
    open."""
    last = st.session_state.get("cr_last")
    if last and (last in rooms("teacher") or last in rooms("member")):
        status = room_status(store, last)
        if status is not None and not status.closed:
            return last
    return next((code for code, status in my_rooms(store) if not status.closed), None)


# ---- outside a room ------------------------------------------------------------------------------


def start_room(store: RoomStore) -> None:
    try:
        keys = store.create_room()
    except RoomError as e:
        return flash("error", str(e))
    rooms("teacher")[keys.code] = keys.secret
    enter(keys.code)


def ask_to_start(store: RoomStore, running: bool) -> None:
    """ "Start a room": at once, or, while a room of this browser runs, after a question."""
    if running:
        st.session_state["cr_confirm"] = True
    else:
        start_room(store)


def join_room(store: RoomStore, code_key: str | None, name_key: str) -> None:
    try:
        code = normalise_code(st.session_state.get(code_key) if code_key else st.query_params.get(ROOM_URL))
        member, nickname = store.join(code, st.session_state.get(name_key, ""))
    except RoomError as e:
        return flash("error", str(e))
    rooms("member")[code] = (member, nickname)
    enter(code)


def your_rooms(mine: list[tuple[str, RoomStatus]]) -> None:
    """The rooms this browser runs, each a button that opens it."""
    with st.container(border=True):
        st.subheader("Your rooms")
        for code, status in mine:
            left, right = st.columns([3, 1], vertical_alignment="center")
            people = f"{status.participants} student{'s' if status.participants != 1 else ''}"
            state = "closed" if status.closed else "running"
            questions = f"{status.round} question{'s' if status.round != 1 else ''}"
            left.markdown(f"**Room {code}**: {state}, {people}, {questions} asked")
            right.button(f"Open room {code}", key=f"cr_open_{code}", on_click=enter, args=(code,), width="stretch")


def lobby(store: RoomStore) -> None:
    mine = my_rooms(store)
    running = [(code, status) for code, status in mine if not status.closed]
    if mine:
        your_rooms(mine)
    left, right = st.columns(2)
    with left.container(border=True):
        st.subheader("Join a room")
        st.text_input("Room code", key="cr_code", max_chars=20, placeholder="e.g. K7PX2Q")
        st.text_input("Nickname (optional)", key="cr_name", placeholder="shown to the room")
        st.button("Join", key="cr_join", type="primary", on_click=join_room, args=(store, "cr_code", "cr_name"))
    with right.container(border=True):
        st.subheader("Teach")
        st.caption("Start a room, show its QR code on the projector, then ask questions. Rooms end after 3 hours idle.")
        reach = student_link()
        if not reach.reachable:  # said before a room is made: the restart it asks for comes first
            st.warning(reach.problem)
        if running and st.session_state.get("cr_confirm"):
            code, status = running[0]
            people = f"{status.participants} student{'s' if status.participants != 1 else ''}"
            st.warning(
                f"Room {code} is still running, with {people}. A new room gets a new code: students in room "
                f"{code} stay there until you close it. Start a new room anyway?"
            )
            a, b = st.columns(2)
            a.button("Start a new room", key="cr_start_anyway", type="primary", on_click=start_room, args=(store,))
            b.button(f"Back to room {code}", key="cr_back", on_click=enter, args=(code,))
        else:
            st.button("Start a room", key="cr_start", on_click=ask_to_start, args=(store, bool(running)))


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


def live_count(status: RoomStatus, q: Question | None, *, histogram: bool) -> None:
    st.metric("Answered", f"{status.answered} / {status.participants}")
    if q is not None and histogram and not status.revealed:
        room_figure(answer_histogram(q.options, status.counts, title="answers so far"), "cr-live-hist")


def projector_url(code: str) -> str:
    """The projector screen of room ``code``, in projector mode (larger text). It carries no key: the
    browser that opens it holds the teacher's key (``pages/teach/teacher_keys.py``)."""
    return f"{page_url()}?{ROOM_URL}={code}&{VIEW_URL}={PROJECTOR_VIEW}&projector=1"


def teacher_view(store: RoomStore, code: str, status: RoomStatus) -> None:
    link = student_link(code)
    join_url = link.url
    if not link.reachable:  # no link and no QR code: they would point where no device can go
        st.warning(link.problem)
    info, qr = st.columns([3, 2])
    info.subheader(f"Room code: {code}")
    if link.reachable:
        info.markdown("Join at this address or scan the code:")
        info.code(join_url, language=None, wrap_lines=True)  # as typed: Markdown would show its escapes
        qr.image(qr_png(join_url), caption=f"Join room {code}", width=260)
    info.link_button("Open the projector screen", projector_url(code), icon=":material/present_to_all:")
    info.caption(
        "Show the projector screen to the room (it opens in a new tab): the code, the join link, the question "
        "and the answers, without your controls. Keep this screen, with its controls, to yourself."
    )
    with info.expander("Teacher link, to control this room from another device (keep it private)"):
        st.text(f"{join_url}&{TEACHER_URL}={rooms('teacher')[code]}")
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
        watch(store, code, status.version, lambda s: live_count(s, q, histogram=st.session_state.get("cr_show_hist")))
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
    st.button("All your rooms", key="cr_to_lobby", on_click=to_lobby, icon=":material/arrow_back:")


def big_code(code: str, join_url: str | None) -> None:
    """The room code in type read from the back of a room, and the join address under it. The code passed
    normalise_code (letters and digits of the code alphabet) and the address is this server's; both are
    escaped anyway."""
    address = (
        f'<div style="font-size:2rem;font-family:monospace;overflow-wrap:anywhere">{html.escape(join_url)}</div>'
        if join_url
        else ""
    )
    st.markdown(
        f'<div data-testid="cr-room-code" style="font-size:{CODE_PX}px;font-weight:700;letter-spacing:0.08em;'
        f'line-height:1.1">{html.escape(code)}</div>{address}',
        unsafe_allow_html=True,
    )


def projector_view(store: RoomStore, code: str, status: RoomStatus) -> None:
    """What the room reads on the projector: the code, the join address and its QR code, the question and
    the answers as they come in; after the reveal, the answer. No control and no teacher key."""
    link = student_link(code)
    info, qr = st.columns([3, 2], vertical_alignment="center")
    with info:
        st.markdown("Join room")
        big_code(code, link.url if link.reachable else None)
        if not link.reachable:
            st.warning(link.problem)
    if link.reachable:
        qr.image(qr_png(link.url), caption=f"Join room {code}", width=320)
    if status.closed:
        st.info("This room is closed. Thank you!")
        return
    q = get_question(store, code, status.round) if status.round else None
    if q is None:
        st.info("Join now: the first question comes soon.")
    else:
        show_question(q, status.round, grid=True)
    watch(store, code, status.version, lambda s: live_count(s, q, histogram=True))
    if q is not None and status.revealed:
        show_reveal(q, status, status.round)


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
        watch(store, code, status.version)
    else:
        show_question(get_question(store, code, status.round), status.round)
        return student_round(store, code, status)
    own_summary(room_summary(store, code), nickname)  # one summary per state of the room, shared by its pages


@st.fragment
def student_round(store: RoomStore, code: str, status: RoomStatus) -> None:
    """A student's answer, the reveal and their results: the part of the page a round changes. The teacher's
    reveal reruns only this fragment (``watch``'s ``part``); a new question or the room's end, the page."""
    member, nickname = rooms("member")[code]
    shown = status.round
    try:
        status = store.get(code, member)  # the room as it is now, with this student's answer
    except RoomError as e:
        st.error(str(e))
        return
    if status.closed or status.round != shown:  # the page above this part changed too
        st.rerun(scope="app")
    q = get_question(store, code, shown)
    if status.revealed:
        show_reveal(q, status, shown, status.mine)
    else:
        answer_box(store, code, member, q, shown, status.mine)
    watch(store, code, status.version, part=(this_fragment(), shown))
    own_summary(room_summary(store, code), nickname)  # one summary per state of the room, shared by its pages


INTRO = (
    "A live quiz about real attention heads: the teacher starts a room and asks, every student answers on their "
    "own phone or laptop, and the reveal shows everyone the head's real weights."
)


@st.fragment(run_every=POLL_S)
def wait_for_store(store: RoomStore, code: str) -> None:
    """While the store does not answer (Redis restarting), try again every poll; redraw once it does."""
    try:
        store.get(code)
    except StoreUnavailable:
        return
    except RoomError:
        pass
    st.rerun(scope="app")


def room_page(store: RoomStore, raw: str) -> None:
    try:
        code = normalise_code(raw)
        status = store.get(code)
    except StoreUnavailable as e:
        st.warning(str(e))
        return wait_for_store(store, normalise_code(raw))
    except RoomError as e:
        st.error(str(e))
        return lobby(store)
    adopt_teacher_link(store, code)
    adopt_member_link(store, code)
    if code in rooms("teacher") or code in rooms("member"):
        st.session_state["cr_last"] = code
    if code in rooms("teacher") and st.query_params.get(VIEW_URL) == PROJECTOR_VIEW:
        return projector_view(store, code, status)
    others = sorted((set(rooms("teacher")) | set(rooms("member"))) - {code})
    if others:
        st.caption("This tab also has room " + ", ".join(others) + "; each room keeps its own answers.")
    if code in rooms("teacher"):
        teacher_view(store, code, status)
    elif code in rooms("member"):
        student_view(store, code, status)
    else:
        join_form(store, code)


def main() -> None:
    st.title(heading("classroom"))
    projecting = st.query_params.get(VIEW_URL) == PROJECTOR_VIEW  # the projector screen shows the room only
    if not projecting:
        st.caption(INTRO)
    store = open_store()
    adopt_browser_keys(store)
    if (ROOM_URL not in st.query_params or rooms("teacher")) and not projecting:
        # the lesson as a class (its steps, the questions' order), for the teacher only: drawn on a student's
        # page it was half of each page run, and at a lecture's reveal 250 pages run at once
        teachers_guide(folded=True)  # open on the start page; here the room (or joining one) comes first
    raw = st.query_params.get(ROOM_URL)
    show_flash()
    if raw is None and not st.query_params.get(LOBBY_URL):
        raw = running_room(store)  # back from another page, or Back: the room still running
        if raw is not None:
            enter(raw)
    if raw is None:
        lobby(store)
    else:
        room_page(store, raw)
    # the browser keeps the teacher's keys (a reload or a restart takes the rooms back), and forgets those gone
    keep_keys(rooms("teacher"), forget=st.session_state.pop("cr_forget", ()))


main()
