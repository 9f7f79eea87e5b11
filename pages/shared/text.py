"""User text: cleaning input, and showing user words in messages without markup."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from pages.shared.state import init_state, sync_url
from viz.common import printable

MAX_INPUT_CHARS = 2000  # longer text is cut before tokenising, with a note


def clean_text(text: str | None, *, what: str = "input") -> str | None:
    """Stripped text cut to ``MAX_INPUT_CHARS``; shows a message and returns None when empty."""
    text = (text or "").strip()
    if not text:
        st.warning(f"The {what} is empty. Type some text to see its attention.")
        return None
    if len(text) > MAX_INPUT_CHARS:
        st.info(f"The {what} has {len(text):,} characters; only the first {MAX_INPUT_CHARS:,} are used.")
        text = text[:MAX_INPUT_CHARS]
    return text


def example_picker(
    prefix: str, examples: Sequence[str], *, parent: Any = st, on_pick: Callable[[str], None] | None = None
) -> None:
    """An "Examples" select (``<prefix>_example``) that copies the one picked into the text box
    ``<prefix>_text`` and then reads "Pick an example…" again: it mirrors nothing, so it can live outside
    the fragment that reruns on a new text and is not sent again with each one. ``on_pick`` is called with
    the example (e.g. to fill a second box)."""
    text_key, example_key = f"{prefix}_text", f"{prefix}_example"

    def picked() -> None:
        choice = st.session_state[example_key]
        if choice is not None:
            st.session_state[text_key] = choice
            if on_pick is not None:
                on_pick(choice)
        st.session_state[example_key] = None

    parent.selectbox(
        "Examples", examples, index=None, key=example_key, on_change=picked, placeholder="Pick an example…"
    )


def text_box(prefix: str, default: str, *, label: str, help: str) -> str:
    """The page's text input ``<prefix>_text``, kept in the URL (``default`` when the URL has none)."""
    key = f"{prefix}_text"
    init_state(key, default)
    st.text_input(label, key=key, help=help)
    sync_url(key)
    return st.session_state[key]


MARKDOWN_SPECIALS = "\\`*_{}[]()#+-.!|<>~$&"


def markdown_escape(text: str) -> str:
    """Text that Markdown (st.markdown, st.warning, ...) shows literally: user words in messages."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIALS else ch for ch in " ".join(text.split()))


def listing(items: Sequence[str], *, limit: int = 20, width: int = 30) -> str:
    """User tokens as a Markdown-safe, comma-separated list; long items and long lists are shortened,
    and control or invisible characters show as their code point (``⟨U+202E⟩``), as on the axes."""
    visible = [printable(t) for t in items[:limit]]
    shown = [markdown_escape(t if len(t) <= width else t[: width - 1] + "…") for t in visible]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(shown) + more


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 word"``, ``"2 words"`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def be(n: int, *, past: bool = False) -> str:
    """The verb that agrees with a count: ``f"{n} of them {be(n)} off"`` reads "1 of them is off"
    (with ``past``, "was"/"were")."""
    if past:
        return "was" if n == 1 else "were"
    return "is" if n == 1 else "are"


def sentence_end(text: str) -> str:
    """The full stop a sentence about ``text`` still needs: none when it already ends with one."""
    return "" if text.rstrip().endswith((".", "!", "?", "…")) else "."


def points(delta: float, *, unit: str = "percentage points") -> str:
    """A change of probability as a learner reads it, in words and without a sign: ``"16.1 percentage
    points lower"`` (0.60 became 0.439), ``"1.5 percentage points higher"``, ``"unchanged"`` (under 0.05
    points; never "-0.0"). ``unit`` shortens it where room is short (``"points"``)."""
    if abs(delta) < 0.0005:
        return "unchanged"
    return f"{100 * abs(delta):.1f} {unit} {'higher' if delta > 0 else 'lower'}"
