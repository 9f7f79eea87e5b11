"""A classroom round as every device shows it (the Classroom page's teacher and student views both
use it): the question, the answer (a click on a key in the attention explorer, or a pill), the
reveal with the head's real weights in the explorer, and the polling fragment that brings the
teacher's changes to every device."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import NoReturn

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from model.core.results import AttentionKind
from model.lessons.classroom_kinds import answers_by_key, choice_from_cell, choice_kinds, reveal_kinds
from pages.shared.display import CHART_CONFIG, chart
from pages.shared.explorer import attention_explorer
from pages.shared.state import in_fragment
from pages.shared.text import markdown_escape
from rooms.question import Question
from rooms.rules import RoomError, RoomStatus
from rooms.store import RoomStore
from viz.classroom import answer_histogram, candidate_head, candidate_heads

POLL_S = 1.5  # how often a room page asks the store for news
# Every HEAL_POLLS-th poll (12 s) redraws the whole page even when nothing changed. Under load, a
# fragment run that meets another run (this poll, a student's answer, a teacher's button) can leave
# the page without elements that run drew: seen in the browser test on a busy machine (a student's
# "Answer sent" caption, the teacher's "Close the room" button gone while the store held the
# answer). A full redraw puts every element back; it costs one page run per device every 12 s.
# $ATTENTION_ROOM_HEAL_POLLS sets another period (a test that must tell a reveal's rerun from a heal's).
HEAL_POLLS = int(os.environ.get("ATTENTION_ROOM_HEAL_POLLS", "8"))
# At a lecture's size the heal is a load of its own: 250 devices would redraw 21 times a second, in step
# (they joined together), on the server that must also redraw all 250 at the reveal. So a room heals at
# most HEAL_RUNS_S redraws a second (a room of 250: each device about once a minute), each device from
# its own random place in the cycle.
HEAL_RUNS_S = 4.0
CHOICE_URL, REVEAL_URL = "crk", "crr"  # the explorers' URL prefixes: the reveal does not open in the choice's view
# A room's charts have no toolbar: on a phone a tap shows it over the chart's title, and a question
# needs none of its tools (the Summary's CSV files are the teacher's record).
ROOM_CHART = {**CHART_CONFIG, "displayModeBar": False}


def room_figure(fig: go.Figure, key: str) -> None:
    """A chart of a room (a question's heads, the answers' histogram), without Plotly's toolbar; larger
    type in projector mode and hover labels that a tap takes away, as every chart
    (``pages.shared.display.chart``)."""
    chart(fig, key, config=ROOM_CHART)


def rooms(kind: str) -> dict:
    """This session's rooms: ``"teacher"`` code -> secret, ``"member"`` code -> (id, nickname)."""
    return st.session_state.setdefault(f"cr_{kind}", {})


def flash(kind: str, text: str) -> None:
    """A message for the next run (callbacks cannot draw)."""
    st.session_state["cr_flash"] = (kind, text)


def show_flash() -> None:
    kind, text = st.session_state.pop("cr_flash", (None, None))
    if kind:
        getattr(st, kind)(text)


def get_question(store: RoomStore, code: str, round: int) -> Question:
    cache = st.session_state.setdefault("cr_questions", {})
    if (code, round) not in cache:
        cache[(code, round)] = store.question(code, round)
    return cache[(code, round)]


def show_question(q: Question, round: int, *, grid: bool = False) -> None:
    """The question; its candidate maps one chart each, in two columns that a phone stacks (each map then
    as wide as the phone), or with ``grid`` (the projector) all in one chart."""
    st.subheader(f"Question {round}: {q.title}")
    st.markdown(markdown_escape(q.prompt))
    if not q.figure:
        return
    if grid:
        return room_figure(candidate_heads(q.figure), f"cr-figure-{round}")
    n = len(q.figure["names"])
    per_row = 2 if n % 2 == 0 else n
    for start in range(0, n, per_row):
        for i, column in zip(range(start, start + per_row), st.columns(per_row)):
            with column:
                room_figure(candidate_head(q.figure, i), f"cr-figure-{round}-{i}")


class SharedFigure(go.Figure):
    """A figure that many devices draw unchanged (the reveal's histogram): ``st.plotly_chart`` copies a
    figure whole (its ``to_dict``) every time it draws one, and at a lecture's reveal that copy was the
    largest part of a student's rerun; this one is copied once and the copy reused. Never change it."""

    def to_dict(self) -> dict:
        if getattr(self, "_shared_dict", None) is None:
            self._shared_dict = super().to_dict()
        return self._shared_dict


@lru_cache(maxsize=32)
def revealed_histogram(options: tuple[str, ...], counts: tuple[int, ...], answer: int) -> go.Figure:
    """Everyone's answers once revealed: the same figure on every device, so built once per round and
    count, not once per device (a room of 250 redraws it 250 times at the reveal; st.plotly_chart only
    reads it)."""
    return SharedFigure(answer_histogram(options, counts, answer=answer, title="everyone's answers"))


def show_reveal(q: Question, status: RoomStatus, round: int, mine: int | None = None) -> None:
    """The answer, everyone's answers, and the head's real weights in the explorer."""
    verdict = ""
    if mine is not None:
        verdict = " You got it." if mine == q.answer else f" You chose {markdown_escape(q.options[mine])}."
    (st.success if mine == q.answer else st.info)(f"The answer: **{markdown_escape(q.options[q.answer])}**.{verdict}")
    st.markdown(markdown_escape(q.explanation))
    room_figure(revealed_histogram(q.options, status.counts, q.answer), f"cr-hist-{round}")
    kinds = reveal_kinds(q)
    if kinds:
        # compact: the map and its tabs (the row, the whole map), not the explorer's tools
        attention_explorer(
            kinds, key=f"cr-reveal-{status.code}-{round}", url_prefix=REVEAL_URL, title=q.title, compact=True
        )


# ---- answering -----------------------------------------------------------------------------------


def answer_widget(options: tuple[str, ...], *, key: str, disabled: bool, on_change: Callable, args: tuple) -> None:
    """One pill per option, for answers that are not a key (shapes, heads, outcomes); pill labels read
    Markdown, so each is escaped."""
    st.pills(
        "Your answer",
        range(len(options)),
        format_func=lambda i: markdown_escape(options[i]),
        key=key,
        disabled=disabled,
        on_change=on_change,
        args=args,
        width="stretch",
    )


def send_answer(store: RoomStore, code: str, member: str, round: int, key: str) -> None:
    """Send the choice in ``st.session_state[key]``; ``{key}_sent`` remembers the last one the store took."""
    choice = st.session_state.get(key)
    if choice is None:  # a second click on the chosen pill: the answer stays
        st.session_state[key] = st.session_state.get(f"{key}_sent")
        return
    try:
        store.answer(code, member, round, choice)
        st.session_state[f"{key}_sent"] = choice
    except RoomError as e:
        flash("warning", str(e))


def without_weights(kinds: Sequence[AttentionKind]) -> list[AttentionKind]:
    """``kinds`` with every weight NaN: what the browser gets of a question before its reveal. The choice
    row's ``1/T`` is no weight of the model, but the explorer printed it as one ("selected: is → dessert:
    0.1667", and "0 → 0.1667" under the map). Sent as NaN, no weight reaches the page: the explorer draws
    such a kind's cells alike and writes no number (``viz/explorer/js/data.js``, ``weightless``)."""
    return [replace(k, weights=np.full(k.weights.shape, np.nan, dtype=np.float32)) for k in kinds]


def key_choice(store: RoomStore, code: str, member: str, q: Question, round: int, key: str) -> None:
    """The explorer with the query's row, every key alike and no weight shown; a click (or Enter) on a key
    answers."""
    st.caption("Click or tap the key you think wins (keyboard: focus the explorer, arrow keys, then Enter).")
    cell = attention_explorer(
        without_weights(choice_kinds(q)),
        key=f"cr-keys-{code}-{round}",
        url_prefix=CHOICE_URL,
        title=q.title,
        compact=True,
    )
    choice = choice_from_cell(q, cell)
    if choice is not None:
        st.session_state[key] = choice
        send_answer(store, code, member, round, key)


@st.fragment
def answer_box(store: RoomStore, code: str, member: str, q: Question, round: int, mine: int | None) -> None:
    """Where a student answers; a click reruns only this fragment."""
    key = f"cr_pick_{code}_{round}"
    if key not in st.session_state:
        st.session_state[key] = st.session_state[f"{key}_sent"] = mine
    if answers_by_key(q):
        key_choice(store, code, member, q, round, key)
    else:
        answer_widget(q.options, key=key, disabled=False, on_change=send_answer, args=(store, code, member, round, key))
    sent = st.session_state.get(f"{key}_sent")
    if "cr_flash" in st.session_state:  # a refused answer, when only this fragment reruns
        show_flash()
    elif sent is not None:
        st.caption(f"Answer sent: {markdown_escape(q.options[sent])}. You can change it until the teacher reveals.")


def heal_every(participants: int) -> int:
    """Polls between two healing redraws of one device, in a room of ``participants``."""
    return max(HEAL_POLLS, math.ceil(participants / (POLL_S * HEAL_RUNS_S)))


def this_fragment() -> str | None:
    """The id of the fragment now running (None outside a fragment), for :func:`watch`'s ``part``."""
    return ThreadState.get().fragment_id


def rerun_fragment(fragment_id: str) -> NoReturn | None:
    """Rerun the fragment ``fragment_id`` alone, from another fragment's run: what ``st.rerun(scope="fragment")``
    does for the fragment that calls it, and a widget callback's ``st.rerun(key)`` for a named one. The
    router, the sidebar and the page above that fragment are not run again."""
    ctx = get_script_run_ctx()
    if ctx is None or ctx.script_requests is None:
        return None
    ctx.script_requests.request_rerun(
        RerunData(
            query_string=ctx.query_string,
            page_script_hash=ctx.page_script_hash,
            fragment_id_queue=[fragment_id],
            is_fragment_scoped_rerun=True,
            cached_message_hashes=ctx.cached_message_hashes,
            context_info=ctx.context_info,
        )
    )
    st.empty()  # a yield point: the script runner stops this run here and starts the fragment's
    return None


@st.fragment(run_every=POLL_S)
def watch(
    store: RoomStore,
    code: str,
    seen: int,
    live: Callable[[RoomStatus], None] | None = None,
    part: tuple[str, int] | None = None,
) -> None:
    """Every ``POLL_S`` seconds: redraw the whole page when the teacher changed the room (and every
    :func:`heal_every`-th time), else only ``live`` (the projector's counts). ``part``: (the id of the
    fragment that draws a student's round, that round): a change within the round (the reveal) reruns only
    that fragment, not the page. At a lecture's reveal 250 devices rerun at once, in one process."""
    try:
        status = store.get(code)
    except RoomError as e:
        st.error(str(e))
        return
    polls = st.session_state["cr_polls"] = st.session_state.get("cr_polls", random.randrange(1 << 16)) + 1
    if status.version != seen:
        if part is not None and in_fragment() and status.round == part[1] and not status.closed:
            return rerun_fragment(part[0])
        st.rerun(scope="app")
    # heal only from the fragment's own reruns: the page was just drawn whole when it runs inside a full run
    # (a rerun then would also drop what that run showed once, such as a refused action's message)
    if in_fragment() and polls % heal_every(status.participants) == 0:
        st.rerun(scope="app")
    if live:
        live(status)
