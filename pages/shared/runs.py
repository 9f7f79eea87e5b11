"""Cached model runs for the pages, and what every page says about an input the model could not read.

Each runner takes the checkpoint itself (hashed by its task, folder and device) and returns the typed
:class:`~model.core.results.RunResult` (or an :class:`~model.analysis.ablation.Ablation` of two);
a ``ValueError`` (empty input) is not cached and becomes a message through :func:`attempt`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import streamlit as st

from model.analysis.ablation import Ablation, Head, ablate
from model.analysis.runs import causal_step_maps, generation_run, last_query_weights, run, translation_run
from model.core.checkpoint import Checkpoint
from model.core.results import RunResult
from model.core.specs import SPECS, ModelSpec
from pages.shared.state import one_of, url_widget
from pages.shared.text import MAX_INPUT_CHARS, be, clean_text, listing, plural

T = TypeVar("T")


def pick_model(key: str, *, parent: Any = st, select: bool = False, on_change: Callable[[], None] | None = None) -> str:
    """The model a page runs, kept in the URL under ``key``: a horizontal radio, or with ``select`` a select
    box (under ``parent``, e.g. a column), each model shown by its title. Returns its name (a key of SPECS)."""
    models = tuple(SPECS)  # read now: the registry (model.zoo) may have gained a model since this module loaded
    shown = dict(options=models, format_func=lambda name: SPECS[name].title, on_change=on_change)
    if select:
        return url_widget(parent.selectbox, "Model", key, models[0], one_of(models), **shown)
    return url_widget(parent.radio, "Model", key, models[0], one_of(models), horizontal=True, **shown)


def checkpoint_key(ck: Checkpoint) -> tuple[str, str, str]:
    """What tells two loaded checkpoints apart: the task, its folder and the device it lives on."""
    return ck.task, str(ck.directory), str(next(ck.model.parameters()).device)


CACHE = dict(hash_funcs={Checkpoint: checkpoint_key})
# Streamlit's spinner shows only after 0.5 s, yet on every cache miss it starts a timer thread and sends
# one more message (3-6 ms of a new sentence here). A forward pass or a greedy translation (~0.1 s) runs
# without it; generation, beam search and ablation's two passes keep theirs.


@st.cache_data(max_entries=64, show_spinner=False, **CACHE)
def run_model(ck: Checkpoint, text: str) -> RunResult:
    """``text`` through ``ck``: the classifier's label, the generator's next character, a greedy translation."""
    return run(ck, text)


@st.cache_data(max_entries=64, show_spinner="Generating…", **CACHE)
def run_generation(ck: Checkpoint, prompt: str, length: int, temperature: float, top_k: int, seed: int) -> RunResult:
    return generation_run(ck, prompt, length=length, temperature=temperature, top_k=top_k or None, seed=seed)


def run_translation(ck: Checkpoint, text: str, beam_size: int, reference: str | None) -> RunResult:
    if beam_size == 1:
        return _translation(ck, text, beam_size, reference)
    with st.spinner("Translating…"):
        return _translation(ck, text, beam_size, reference)


@st.cache_data(max_entries=64, show_spinner=False, **CACHE)
def _translation(ck: Checkpoint, text: str, beam_size: int, reference: str | None) -> RunResult:
    return translation_run(ck, text, beam_size=beam_size, reference=reference)


@st.cache_data(max_entries=64, show_spinner="Switching heads off…", **CACHE)
def run_ablation(ck: Checkpoint, text: str, off: tuple[Head, ...]) -> Ablation:
    return ablate(ck, text, off)


@st.cache_data(max_entries=128, show_spinner=False, **CACHE)
def run_causal_steps(ck: Checkpoint, text: str, layer: int, head: int) -> dict[str, np.ndarray]:
    return causal_step_maps(ck, text, layer, head)


@st.cache_data(max_entries=256, show_spinner=False, **CACHE)
def run_last_query(ck: Checkpoint, context: str) -> np.ndarray:
    return last_query_weights(ck, context)


def attempt(runner: Callable[..., T], *args: Any, what: str = "Nothing to show") -> T | None:
    """``runner(*args)``, or None after a warning that says why (an input with no words)."""
    try:
        return runner(*args)
    except ValueError as e:
        st.warning(f"{what}: {e}.")
        return None


def read_input(spec: ModelSpec, text: str | None, what: str) -> str | None:
    """The text to run, or None after a message. A model that reads characters keeps the spaces (they are
    part of its input) and reads the end of a long text; the others read clean, stripped text."""
    if not spec.characters:
        return clean_text(text, what=what)
    text = text or ""
    if not text.strip():
        st.warning(f"The {what} is empty. Type a few characters, e.g. ROMEO:")
        return None
    return text[-MAX_INPUT_CHARS:]


def input_notes(result: RunResult, what: str = "the input", *, hint: str = "Try one of the examples.") -> bool:
    """Say what the model could not read; False when it saw nothing but unknown tokens (then ``hint`` says
    what to try: a page without examples gives its own)."""
    unit, n = result.unit, result.limit
    if result.truncated:
        part = "last" if unit == "characters" else "first"
        st.info(f"The model reads at most {n} {unit}; only the {part} {n} of {what} are used.")
    unknown = sorted(set(result.unknown))
    if result.all_unknown:
        st.warning(
            f"None of the {unit} of {what} are in the model's vocabulary ({listing(unknown)}), so it would only "
            f"see `<unk>`. {hint}"
        )
        return False
    if unknown:
        counted = plural(len(unknown), unit.removesuffix("s"), unit)
        st.warning(
            f"{counted} of {what} {be(len(unknown))} not in the vocabulary and {be(len(unknown), past=True)} "
            f"read as `<unk>`: {listing(unknown)}"
        )
    return True


def teacher_forced(ck: Checkpoint, text: str, reference: str) -> RunResult | None:
    """``text`` translated with ``reference`` fed to the decoder (the teacher-forced view), or None after a
    message; says which words of the reference the English vocabulary lacks."""
    reference = clean_text(reference, what="reference translation")
    forced = reference and attempt(run_translation, ck, text, 1, reference, what="No reference to read")
    if forced is None:
        return None
    unknown = [w for w in forced.notes.get("reference_unknown", "").split("\n") if w]
    if unknown:
        st.warning(
            f"{plural(len(unknown), 'word')} of the reference {be(len(unknown))} not in the English vocabulary "
            f"and {be(len(unknown), past=True)} read as `<unk>`: {listing(unknown)}"
        )
    st.info(
        "Teacher-forced view: the attention below is for the reference translation fed to the decoder, "
        "not for the model's own output."
    )
    return forced
