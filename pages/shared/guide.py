"""The lesson on a page: links that open a step's exact state in the same tab, and the teacher's guide (the
start page's and the Classroom's), both read from the one path of :mod:`model.lessons.path`.

A step's link is an ``st.page_link`` carrying the step's URL keys: Streamlit opens it in the same tab (no
new tab, unlike a Markdown link) and the page seeds its widgets from those keys. A page seeds a widget
from the URL only once per session, so before drawing a link this module forgets the session's values of
the keys the link sets: a page visited earlier in the session opens at the step's state, not at the
learner's last one.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from model.lessons.path import Step, lesson_path, total_minutes
from model.lessons.questions import QUESTIONS
from pages import page as page_entry

LESSON_PAGE = "lesson"
STEP_URL = "lesson_step"  # the lesson page's step: ?lesson_step=N (not the hand page's own ?step=N)


def steps() -> tuple[Step, ...]:
    """The lesson's steps (their heads read from the checkpoints' head scores)."""
    return lesson_path()


def forget(step: Step) -> None:
    """Drop this session's values of the keys ``step``'s link sets, so its page seeds them from the link."""
    for key in step.params:
        st.session_state.pop(key, None)


def page_link(address: str, label: str, params: dict[str, str]) -> None:
    """``st.page_link`` to the page at ``address`` with ``params``: Streamlit opens it in this tab. A page script
    run on its own (not through app.py's router, as its AppTest does) has no pages to link: the label alone."""
    entry = page_entry(address)
    try:
        st.page_link(entry.script, label=label, icon=entry.icon, query_params=params)
    except StreamlitPageNotFoundError:
        st.markdown(f"{label} ({entry.title})")


def step_link(step: Step, label: str | None = None) -> None:
    """A link that opens ``step``'s page at the step's exact state, in this tab."""
    forget(step)
    page_link(step.page, label or f"Open {page_entry(step.page).title}", dict(step.params))


def lesson_link(number: int, label: str) -> None:
    """A link to step ``number`` of the lesson page, in this tab."""
    page_link(LESSON_PAGE, label, {STEP_URL: str(number)})


def teachers_guide(path: Sequence[Step] | None = None, *, folded: bool = False) -> None:
    """The lesson as a class: each step's minutes, its link, what to notice, what the teacher does there and
    the Classroom question that goes with it. ``folded``: in a closed section (inside a live room, where the
    round comes first)."""
    path = tuple(path or steps())
    title = f"Teaching a room: the lesson as a {total_minutes(path)}-minute class"
    if folded:
        with st.expander(title, icon=":material/route:"):
            _guide(path)
        return
    st.subheader(title)
    _guide(path)


def _guide(path: tuple[Step, ...]) -> None:
    st.caption(
        "One way through, step by step: each link opens the page exactly as the step needs it. Students can "
        "follow the same steps alone on the lesson page; the Classroom's questions come in the same order."
    )
    with st.container(key="lesson-guide"):
        for step in path:
            with st.container(border=True):
                st.markdown(f"**{step.number}. {step.title}** · {step.minutes} min")  # our own words
                step_link(step)
                room = f" Room question: “{QUESTIONS[step.room][0]}”" if step.room in QUESTIONS else ""
                st.caption(f"Notice: {step.notice} Teacher: {step.teach}{room}")
    lesson_link(1, "Walk the lesson one step at a time")
    st.caption(
        "For the room, serve the app where phones can reach it (`make run HOST=0.0.0.0`); the Classroom page "
        "shows the address to share."
    )
