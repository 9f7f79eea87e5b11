"""Lesson links on a page: "Pin as lesson link" in the sidebar, and ``?lesson=TOKEN`` opening a page pinned.

A teacher sets a page up (a model, an input, an explorer view), opens "Pin as lesson link" in the
sidebar, picks an expiry and presses the button. The page's state is its URL: every page keeps its
widgets under its own URL prefixes (app.py's ``URL_KEYS``, :mod:`pages.shared.state`), and the explorer
writes its view (kind, layer, head, view) into the address bar with ``history.replaceState``, which
the server never sees on a rerun. So the button is a tiny components v2 element that sends the
address bar itself (``location.href``); the server keeps the page's own keys from it, signs them
with the expiry (:mod:`rooms.lesson`) and shows the link to copy.

A student who opens the link gets, before the page runs (app.py): the signature and expiry checked;
the pinned keys written into the URL and taken out of the session (so each widget seeds from them,
as a shared link does, and the explorer starts at the pinned view); the sidebar navigation hidden
(``st.navigation(position="hidden")``); the page's inputs hidden — every input widget whose key starts
with one of the page's URL prefixes, which is how the pages name the widgets that change their state
(STYLE 14: every widget has an explicit key), hidden by a fixed stylesheet on Streamlit's ``st-key-*``
classes, so no page needs to know about lessons (the workshop's answer widgets stay: answering changes
nothing pinned); and a small "Lesson link (expires …)" note. The
explorer's own tabs stay: within the pinned input a student may still look at another head. An
expired, changed or unreadable link says so and the page opens as usual. ``lesson`` stays in the URL
(a global key, :data:`pages.shared.state.GLOBAL_URL_KEYS`), so a reload reopens the lesson.

The secret: ``lesson_secret`` in Streamlit's secrets, else the ``ATTENTION_LESSON_SECRET`` environment
variable (several app processes must share one), else a random secret made when the process starts;
then links last only as long as the process, and the pin control says so.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urlsplit
from zoneinfo import ZoneInfo

import streamlit as st

from rooms.lesson import Lesson, LessonError, sign, verify

LESSON_URL = "lesson"  # ?lesson=TOKEN
SECRET_NAME = "lesson_secret"  # in .streamlit/secrets.toml
SECRET_ENV = "ATTENTION_LESSON_SECRET"
EXPIRIES = {"in 1 hour": 3600, "in 1 day": 86400, "in 1 week": 7 * 86400, "never": None}
APPLIED = "_lesson_applied"  # the token whose state this session has taken
LINKS = "_lesson_links"  # page -> the last link pinned there
_PROCESS_SECRET = secrets.token_bytes(32)  # the fallback: one per process, gone when it restarts

# the widgets a lesson hides: Streamlit's input elements (their data-testid), never the explorer, a
# matrix view, a chart or a download button
INPUTS = (
    "stTextInput",
    "stTextArea",
    "stNumberInput",
    "stSelectbox",
    "stMultiSelect",
    "stSlider",
    "stRadio",
    "stCheckbox",
    "stButton",
    "stButtonGroup",
    "stSegmentedControl",
    "stFileUploader",
)
# inputs a lesson keeps although their keys carry the page's prefix: a student's answer in the workshop
# (its guess, its shape, Reveal, the score's reset) changes nothing pinned; its "Next question" does
ANSWERS = ("ws_guess_", "ws_shape_", "ws_reveal", "ws_reset")
PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

PIN_JS = """
export default function ({ parentElement, data, setTriggerValue }) {
  let button = parentElement.querySelector("button");
  if (!button) {
    button = document.createElement("button");
    button.type = "button";
    button.className = "lesson-pin";
    parentElement.append(button);
  }
  button.textContent = String(data && data.label || "Pin as lesson link");
  // the address bar as the reader sees it: the page's widgets and the explorer's view
  button.onclick = () => setTriggerValue("pin", { href: window.location.href });
}
"""
PIN_CSS = """
.lesson-pin {
  font: inherit; color: var(--st-text-color, #31333f); background: var(--st-background-color, #fff);
  border: 1px solid var(--st-border-color, rgba(49, 51, 63, 0.2)); border-radius: 0.5rem;
  padding: 0.25rem 0.75rem; cursor: pointer; width: 100%;
}
.lesson-pin:hover, .lesson-pin:focus-visible { border-color: var(--st-primary-color, #ff4b4b); }
"""
_pin = st.components.v2.component("lesson_pin", js=PIN_JS, css=PIN_CSS)


def lesson_secret() -> tuple[bytes, bool]:
    """The signing secret and whether it outlives this process (set in secrets or the environment)."""
    value = os.environ.get(SECRET_ENV, "")
    try:
        if st.secrets.load_if_toml_exists():
            value = str(st.secrets.get(SECRET_NAME, "") or value)
    except Exception:  # an unreadable secrets file: the environment or the process's own secret
        pass
    return (value.encode("utf-8"), True) if value else (_PROCESS_SECRET, False)


def open_lesson() -> Lesson | None:
    """The lesson the URL's ``lesson`` token pins, checked; None without one. A token that does not open
    (expired, changed, unreadable) shows why and leaves the URL, and the page opens as usual. Call
    before ``st.navigation``, which hides its menu in a lesson."""
    token = st.query_params.get(LESSON_URL)
    if not token:
        return None
    try:
        return verify(token, lesson_secret()[0])
    except LessonError as err:
        message = str(err)
        if err.expired_at is not None:
            message = f"This lesson link expired on {when(err.expired_at)}."
        st.warning(f"{message} The page opens as usual; ask for a new link to see the lesson.", icon="⏰")
        del st.query_params[LESSON_URL]
        st.session_state.pop(APPLIED, None)
        return None


def enter_lesson(lesson: Lesson | None, page: st.Page, pages: Mapping[str, st.Page], prefixes: Sequence[str]) -> bool:
    """Open ``lesson`` on ``page`` (after ``st.navigation``, before the page runs): on another page, go to
    the lesson's; once per session, take its state; every run, hide the page's inputs and say it is a
    lesson. Returns whether a lesson is open."""
    if lesson is None:
        return False
    token = st.query_params[LESSON_URL]
    if lesson.page != page.url_path:
        if lesson.page not in pages:
            st.warning("This lesson link names a page this app does not have; the page opens as usual.")
            del st.query_params[LESSON_URL]
            return False
        st.switch_page(pages[lesson.page], query_params={LESSON_URL: token})
    if st.session_state.get(APPLIED) != token:
        for key in lesson.params:  # each widget seeds from the pinned URL, as on a fresh link
            st.session_state.pop(key, None)
        kept = {k: st.query_params[k] for k in ("projector", "device") if k in st.query_params}
        st.query_params.from_dict({**kept, **lesson.params, LESSON_URL: token})
        st.session_state[APPLIED] = token
    css = hide_inputs_css(prefixes)
    if css:
        st.markdown(css, unsafe_allow_html=True)  # built from app.py's prefixes (checked): no user text
    until = "no expiry" if lesson.expires is None else f"expires {when(lesson.expires)}"
    st.caption(f"📌 Lesson link ({until}): this page as your teacher pinned it.")
    return True


def hide_inputs_css(prefixes: Sequence[str]) -> str:
    """A stylesheet that hides every input widget whose key starts with one of ``prefixes`` (a page's
    URL prefixes, letters, digits and _ only), by Streamlit's ``st-key-<key>`` class, except a student's
    answers (:data:`ANSWERS`)."""
    kept = ", ".join(f'[class*="st-key-{a}"]' for a in ANSWERS)
    rules = [
        f'.stElementContainer[class*="st-key-{p}"]:not({kept}):has([data-testid="{t}"])'
        for p in prefixes
        if PREFIX.fullmatch(p)
        for t in INPUTS
    ]
    return "<style>\n" + ",\n".join(rules) + " { display: none !important; }\n</style>" if rules else ""


def when(ts: int) -> str:
    """A Unix time as the reader's local time (their browser's time zone, else UTC)."""
    try:
        zone = ZoneInfo(st.context.timezone or "UTC")
    except Exception:  # an unknown zone name
        zone = UTC
    return datetime.fromtimestamp(ts, zone).strftime("%Y-%m-%d %H:%M %Z")


def pin_control(page: st.Page, prefixes: Sequence[str]) -> None:
    """The sidebar's "Pin as lesson link": an expiry, the button, and the link it made on this page, drawn
    only while the section is open. Nothing on a page without state of its own (no URL prefixes)."""
    if not prefixes:
        return
    section = st.sidebar.expander(
        "Pin as lesson link", icon=":material/push_pin:", key="_lesson_open", on_change="rerun"
    )
    if not section.open:  # built only when opened: every page load draws the sidebar
        return
    with section:
        st.caption(
            "A link to this page as it is now (model, input, view) for students: it opens here without the "
            "menu and without the controls that would change the input."
        )
        expiry = st.selectbox("Expires", list(EXPIRIES), key="_lesson_expiry")
        pinned = _pin(key="lesson-pin", data={"label": "Pin as lesson link"}, on_pin_change=_ignore).get("pin")
        links = st.session_state.setdefault(LINKS, {})
        if isinstance(pinned, Mapping):
            try:
                links[page.url_path] = lesson_link(
                    str(pinned.get("href", "")), page.url_path, prefixes, EXPIRIES[expiry]
                )
            except ValueError as err:
                st.warning(str(err))
        link = links.get(page.url_path)
        if link:
            st.code(link, language=None, wrap_lines=True)  # as typed, with a copy button
            if not lesson_secret()[1]:
                st.caption(
                    f"Links last as long as this app process: set `{SECRET_ENV}` (or `{SECRET_NAME}` in "
                    "Streamlit's secrets) to keep them across restarts."
                )


def _ignore() -> None:
    """The pin is read from the return value; the callback only makes Streamlit report it."""


def lesson_link(href: str, page: str, prefixes: Sequence[str], lifetime: int | None, now: float | None = None) -> str:
    """The lesson link for the address ``href`` (the browser's, on ``page``): its keys under ``prefixes``
    signed with an expiry ``lifetime`` seconds from ``now`` (None: never). Raises ValueError for an
    address that is not this page's, or a state too long for a link."""
    url = urlsplit(href)
    if url.scheme not in ("http", "https") or url.path.rstrip("/").rsplit("/", 1)[-1] != page:
        raise ValueError("The address to pin is not this page's: reload the page and pin again.")
    params = {k: v for k, v in parse_qsl(url.query, keep_blank_values=True) if k.startswith(tuple(prefixes))}
    expires = None if lifetime is None else int((time.time() if now is None else now) + lifetime)
    token = sign(Lesson(page=page, params=params, expires=expires), lesson_secret()[0])
    return f"{url.scheme}://{url.netloc}{url.path}?{urlencode({LESSON_URL: token})}"
