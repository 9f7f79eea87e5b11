"""URL and widget state: shared links reproduce a view; each widget is seeded from the URL once per session."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


def url_value(key: str, default: Any, cast: Callable[[str], Any] = str) -> Any:
    """The value of ``key`` in the URL, cast, or ``default`` when absent or malformed."""
    raw = st.query_params.get(key)
    if raw is None:
        return default
    try:
        return cast(raw)
    except (TypeError, ValueError):
        return default


def init_state(key: str, default: Any, cast: Callable[[str], Any] = str) -> None:
    """Seed a widget's session state from the URL once per session, so shared links reproduce a view."""
    if key not in st.session_state:
        st.session_state[key] = url_value(key, default, cast)


def url_widget(
    draw: Callable[..., Any],
    label: str,
    key: str,
    default: Any,
    cast: Callable[[str], Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Draw ``draw(label, key=key, **kwargs)`` (``st.toggle``, ``column.slider``, ...) bound to the URL and
    return its value: seeded from the URL once per session (``default`` when absent or malformed), written
    back after. ``cast`` reads the URL's text: :func:`flag` for a bool ``default``, else ``str`` unless
    given (a number needs :func:`bounded`, so a link cannot ask a widget for a value it refuses)."""
    init_state(key, default, cast or (flag if isinstance(default, bool) else str))
    draw(label, key=key, **kwargs)
    sync_url(key)
    return st.session_state[key]


def bounded(lo: float, hi: float, kind: type = int) -> Callable[[str], Any]:
    """A URL cast to ``kind`` that rejects values outside ``lo..hi`` (the widget would refuse them)."""

    def cast(raw: str) -> Any:
        value = kind(raw)
        if not lo <= value <= hi:
            raise ValueError(f"{value} is outside {lo}..{hi}")
        return value

    return cast


def one_of(options: Sequence[str]) -> Callable[[str], str]:
    """A URL cast that accepts only one of ``options`` (e.g. a radio's choices)."""

    def cast(raw: str) -> str:
        if raw not in options:
            raise ValueError(f"{raw!r} is not one of {list(options)}")
        return raw

    return cast


def flag(raw: str) -> bool:
    """A URL cast for a toggle or an expander: ``"True"`` is on, anything else off."""
    return raw == "True"


def on_request(label: str, key: str) -> Any:
    """A closed section whose contents a page builds only while ``.open`` (opening it reruns the page),
    its state kept in the URL under ``key``: charts every new input would redraw cost nothing until asked."""
    init_state(key, False, flag)
    section = st.expander(label, key=key, on_change="rerun")
    sync_url(key)
    return section


def index_list(count: int) -> Callable[[str], list[int]]:
    """A URL cast for a multiselect of indices: ``"0,2"`` -> ``[0, 2]``; an index outside ``0..count-1``
    makes the whole value invalid (the default is used)."""

    def cast(raw: str) -> list[int]:
        values = sorted({int(v) for v in raw.split(",") if v.strip()})
        if any(not 0 <= v < count for v in values):
            raise ValueError(f"indices must be 0..{count - 1}")
        return values

    return cast


def radio_choice(
    key: str, options: Sequence[Any], default: Any, *, label: str, format_func: Callable[[Any], str] = str
) -> Any:
    """One of ``options``, seeded from the URL and kept valid (``default`` otherwise), as a horizontal radio
    that is drawn only when there is a choice, kept in the URL; returns the chosen option."""
    init_state(key, default)
    keep_valid(key, options, default)
    if len(options) > 1:
        st.radio(label, options, key=key, format_func=format_func, horizontal=True)
    sync_url(key)
    return st.session_state[key]


def select_choice(
    key: str, options: Sequence[Any], default: Any, *, label: str, parent: Any = st, **kwargs: Any
) -> Any:
    """One of ``options`` in a select box under ``parent``, seeded from the URL and kept valid (``default``
    otherwise) and kept in the URL; ``kwargs`` go to ``selectbox``. Returns the chosen option."""
    init_state(key, default)
    keep_valid(key, options, default)
    parent.selectbox(label, options, key=key, **kwargs)
    sync_url(key)
    return st.session_state[key]


def keep_valid(key: str, options: Sequence[Any], default: Any) -> None:
    """Reset a widget's state to ``default`` when it is not among ``options`` (e.g. a URL asked for
    layer 5 of a model with 2 layers). Call before the widget is created."""
    if st.session_state.get(key, default) not in options:
        st.session_state[key] = default


def range_slider(key: str, lo: int, hi: int, default: int, *, label: str, parent: Any = st, **kwargs: Any) -> int:
    """A slider over ``lo..hi`` whose range follows the input (a step, a window): seeded from the URL, back to
    ``default`` when out of range, kept when the range changes (:func:`hold`) and drawn only when there is a
    choice; kept in the URL. ``kwargs`` go to ``st.slider``; returns the value."""
    init_state(key, default, bounded(lo, hi))
    keep_valid(key, range(lo, hi + 1), default)
    hold(key)
    if hi > lo:
        parent.slider(label, lo, hi, key=key, **kwargs)
    sync_url(key)
    return st.session_state[key]


def set_url(values: dict[str, str]) -> None:
    """Put ``values`` into the URL in one message to the browser, and none when the URL already
    holds them: every write makes the browser push a history entry and match the page routes again
    (about 3 ms each in Chromium's profile of an interaction, and pages sync several keys a run)."""
    pending = st.session_state.get(PENDING_URL)
    if pending is not None and not in_fragment():  # a whole run: one write at its end (flush_url)
        pending.update(values)
        return
    changed = {k: v for k, v in values.items() if st.query_params.get(k) != v}
    if changed:
        st.query_params.update(changed)


PENDING_URL = "_url_pending"  # the URL a whole run wants, written once by flush_url at the end of app.py


def in_fragment() -> bool:
    """Whether this is a fragment's own rerun (app.py does not run to its end then)."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.fragment_ids_this_run)


def start_url() -> None:
    """Collect this run's URL writes (app.py, before the page); :func:`flush_url` writes them at once, so
    a change makes one browser history entry and Back undoes one change."""
    if not in_fragment():
        st.session_state[PENDING_URL] = {}


def flush_url(prefixes: tuple[str, ...]) -> None:
    """Write the URL this run wants in one message: the page's keys (those starting with one of its
    ``prefixes``, declared beside its ``st.Page`` in app.py) and the global ones, nothing else."""
    pending = st.session_state.pop(PENDING_URL, None)
    if pending is None:
        return
    kept = lambda k: k in GLOBAL_URL_KEYS or (prefixes and k.startswith(prefixes))
    wanted = {k: st.query_params[k] for k in st.query_params if kept(k)}
    wanted.update(pending)
    if wanted != st.query_params.to_dict():
        st.query_params.from_dict(wanted)


def sync_url(*keys: str) -> None:
    """Write the current values of widget ``keys`` into the URL."""
    values = {}
    for key in keys:
        if key in st.session_state:
            value = st.session_state[key]
            values[key] = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    set_url(values)


def hold(key: str) -> None:
    """Keep a widget's value when its range changes with the input (a slider's maximum): Streamlit makes
    such a widget anew and would start it at its default; a value set in the session is kept instead."""
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]


def resend_on_change(marker: str, value: Any, keys: Sequence[str]) -> None:
    """When ``value`` differs from the last run's (stored under ``marker``), send widgets ``keys`` their values again.

    A keyed select box keeps its identity when its options change, and the browser keeps showing the
    text it last showed (e.g. the old model's option) unless the server sends a value; setting the
    state before the widgets are drawn sends it."""
    if st.session_state.get(marker) == value:
        return
    for key in keys:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    st.session_state[marker] = value


GLOBAL_URL_KEYS = ("projector", "device", "lesson")  # the sidebar's and a lesson link's: every page keeps them
