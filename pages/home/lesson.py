"""The lesson: one way through the app, one step at a time (``?lesson_step=N``). Each step links the page it needs at
the exact state it needs (in the same tab), says what to notice there and asks one check, answered here and
graded where it can on what the learner's own input makes the model do. Back and Next always work: a check
never blocks the next step. The steps are :mod:`model.lessons.path`'s, the teacher's guide's too."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.specs import SPECS
from model.lessons.checks import (
    AblationOutcome,
    Graded,
    HeadRead,
    ablation_check,
    grade_choice,
    grade_key,
    grade_width,
    key_options,
    read_head,
)
from model.lessons.path import ABLATION, CHOICE, KEY, WIDTH, Check, Step
from pages import heading
from pages import page as page_entry
from pages.shared.guide import STEP_URL, step_link, steps
from pages.shared.models import get_checkpoint
from pages.shared.runs import CACHE
from pages.shared.state import bounded, set_url, url_value
from pages.shared.text import markdown_escape
from viz.attention import visible_chars

STEP_KEY = "path_step"  # the step shown, in the session (and in the URL as ?lesson_step=N)
INPUT_LABELS = {"hand": "Your sentence", "classifier": "Your sentence (English)", "generator": "Your phrase"}
INPUT_LABELS["translator"] = "Your German sentence"


def current(n: int) -> int:
    """The step shown: the URL's on a first visit, then the session's; kept in the URL."""
    if STEP_KEY not in st.session_state:
        st.session_state[STEP_KEY] = url_value(STEP_URL, 1, bounded(1, n))
    st.session_state[STEP_KEY] = min(max(int(st.session_state[STEP_KEY]), 1), n)
    set_url({STEP_URL: str(st.session_state[STEP_KEY])})
    return st.session_state[STEP_KEY]


def move(delta: int, n: int) -> None:
    st.session_state[STEP_KEY] = min(max(1, st.session_state[STEP_KEY] + delta), n)


def navigation(number: int, n: int, where: str) -> None:
    """Back and Next (Next is never held back by a check)."""
    back, middle, forward = st.columns([1, 3, 1], vertical_alignment="center")
    back.button("Back", key=f"path_back_{where}", on_click=move, args=(-1, n), disabled=number <= 1, width="stretch")
    middle.progress(number / n, text=f"Step {number} of {n}")
    forward.button(
        "Next",
        key=f"path_next_{where}",
        on_click=move,
        args=(1, n),
        disabled=number >= n,
        type="primary",
        width="stretch",
    )


@st.cache_data(max_entries=64, show_spinner=False, **CACHE)
def cached_read(check: Check, text: str, ck: Checkpoint | None) -> HeadRead:
    return read_head(check, text, ck)


@st.cache_data(max_entries=32, show_spinner="Running the sentence twice…", **CACHE)
def cached_ablation(check: Check, ck: Checkpoint, text: str) -> AblationOutcome:
    return ablation_check(check, ck, text)


def model_of(check: Check) -> Checkpoint | None:
    """The check's model, or None after a message (the hand-worked head needs none: None without one)."""
    if check.model in ("", "hand"):
        return None
    ck = get_checkpoint(check.model)
    if isinstance(ck, Checkpoint):
        return ck
    st.warning(f"This check needs the {SPECS[check.model].title}, which is not trained here.")
    return None


def show_graded(graded: Graded, why: str) -> None:
    """Right or not, what the model did, and why: the learner's tokens escaped."""
    said = markdown_escape(graded.said)
    if graded.right:
        st.success(f"Right. {said} {why}", icon=":material/check_circle:")
    else:
        st.info(f"Not this time. {said} {why}", icon=":material/lightbulb:")


def labels(tokens: Sequence[str], characters: bool) -> list[str]:
    """Tokens as options: numbered, so a repeated one stays itself; characters drawn visibly."""
    shown = visible_chars(tokens) if characters else list(tokens)
    return [f"{i}: {t}" for i, t in enumerate(shown)]


def digest(text: str) -> str:
    """A short name of the text, in the keys of the pickers whose options it decides."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def key_check(number: int, check: Check) -> None:
    """Which key the head reads most from a query, on the learner's own text: graded on the model's run."""
    text = st.text_input(INPUT_LABELS.get(check.model, "Your text"), value=check.text, key=f"path_text_{number}")
    ck = model_of(check)
    if ck is None and check.model != "hand":
        return
    try:
        read = cached_read(check, text, ck)
    except ValueError as err:
        st.warning(markdown_escape(str(err)))
        return
    characters = check.model in SPECS and SPECS[check.model].characters
    if check.twice:
        st.caption("The model reads: " + markdown_escape(" ⏎ ".join(read.text.split("\n"))))
    if read.said and len(read.queries) != len(read.keys):  # a translation: its words are the queries
        st.caption("The model's translation: " + markdown_escape(read.said))
    rows, cols = labels(read.queries, characters), labels(read.keys, characters)
    name = digest(read.text)
    left, right = st.columns(2)
    query = left.selectbox(
        "From this query",
        range(len(rows)),
        index=read.query,
        format_func=rows.__getitem__,
        key=f"path_query_{number}_{name}",
    )
    guess = right.selectbox(
        "Your guess: the key it reads most",
        key_options(read, query),
        index=None,
        format_func=cols.__getitem__,
        key=f"path_guess_{number}_{name}_{query}",
        placeholder="Pick a key…",
    )
    if guess is not None:
        show_graded(grade_key(read, query, guess, cols, rows), check.why)


def ablation_step(number: int, check: Check) -> None:
    """What switching the head off does to the learner's sentence: graded on the two runs."""
    text = st.text_input(INPUT_LABELS["classifier"], value=check.text, key=f"path_text_{number}")
    ck = model_of(check)
    if ck is None:
        return
    try:
        outcome = cached_ablation(check, ck, text)
    except ValueError as err:
        st.warning(markdown_escape(str(err)))
        return
    guess = st.radio(
        "With the head off, the prediction…",
        range(3),
        index=None,
        format_func=outcome.options.__getitem__,
        key=f"path_choice_{number}_{digest(text)}",
        horizontal=True,
    )
    if guess is not None:
        graded = Graded(guess == outcome.answer, outcome.answer, outcome.said)
        show_graded(graded, check.why)


def width_check(number: int, check: Check) -> None:
    """Each head's width for the learner's own k and h: graded on the batched reshape."""
    a, b, c = st.columns(3)
    k = a.number_input("Width k", 1, 64, value=8, key=f"path_k_{number}")
    h = b.number_input("Heads h", 1, 8, value=2, key=f"path_h_{number}")
    guess = c.number_input("Each head's width", 1, 64, value=None, key=f"path_width_{number}", placeholder="?")
    if guess is None:
        return
    try:
        show_graded(grade_width(int(k), int(h), int(guess)), check.why)
    except ValueError as err:
        st.warning(markdown_escape(str(err)))


def choice_check(number: int, check: Check) -> None:
    guess = st.radio(
        "Your answer",
        range(len(check.options)),
        index=None,
        format_func=check.options.__getitem__,
        key=f"path_choice_{number}",
    )
    if guess is not None:
        graded = grade_choice(check, guess)
        show_graded(Graded(graded.right, graded.answer, f"The answer: {check.options[graded.answer]}."), check.why)


CHECKS: dict[str, Callable[[int, Check], None]] = {
    KEY: key_check,
    ABLATION: ablation_step,
    WIDTH: width_check,
    CHOICE: choice_check,
}


def hints(number: int, check: Check) -> None:
    """The check's hints, one more per click: a nudge first, nearly the answer last."""
    key = f"path_hints_{number}"
    shown = int(st.session_state.get(key, 0))
    for i, hint in enumerate(check.hints[:shown], 1):
        st.markdown(f"**Hint {i}:** {hint}")
    more = lambda: st.session_state.update({key: shown + 1})  # noqa: E731
    label = "A hint" if shown == 0 else "Another hint" if shown < len(check.hints) else "No more hints"
    st.button(label, key=f"path_hint_{number}", on_click=more, disabled=shown >= len(check.hints))


def show_step(step: Step) -> None:
    st.subheader(f"{step.number}. {step.title}")
    with st.container(border=True):
        step_link(step, f"Open step {step.number} here: {page_entry(step.page).title}")
        st.markdown(f"**Notice:** {step.notice}")  # our own words
    with st.container(border=True, key=f"path-check-{step.number}"):
        st.markdown(f"**Check:** {step.check.question}")
        CHECKS[step.check.kind](step.number, step.check)
        hints(step.number, step.check)


def main() -> None:
    st.title(heading("lesson"))
    st.caption(
        "One way through: from one attention head worked by hand to a translator lining up two languages. "
        "Each step opens a page exactly as it needs to be: follow the link, notice one thing, come back here "
        "and answer the check, which runs the model on your own input. Next always works."
    )
    path = steps()
    n = len(path)
    number = current(n)
    navigation(number, n, "top")
    show_step(path[number - 1])
    navigation(number, n, "bottom")


main()
