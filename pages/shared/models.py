"""Models for the pages: one cached, read-only checkpoint per task and device, shared by every session.

Pages never mutate a model (head ablation goes through ``head_mask`` arguments)."""

from __future__ import annotations

import os
from dataclasses import asdict
from urllib.parse import urlencode

import streamlit as st
import torch

from model.core.checkpoint import Checkpoint, CheckpointError, default_dir, load_checkpoint
from model.training.card import model_card as card_of
from model.training.history import HistoryError, ProbeHistory, history_stamp, load_history
from pages import page as page_entry
from pages.shared.glossary import ROLE_WORDS, glossary
from pages.shared.text import markdown_escape

# One torch thread per script run unless a deployment says otherwise: bench/threads.py measured 1 thread
# as fast as 2 or faster for one user (docs/RESULTS.md), and with many sessions at once a second thread
# per run only oversubscribes the cores.
_threads = os.environ.get("ATTENTION_TORCH_THREADS", "1")


torch.set_num_threads(int(_threads) if _threads.isdigit() and int(_threads) > 0 else 1)


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices


def device() -> str:
    """The device chosen in the sidebar (CPU until the user picks another)."""
    return st.session_state.get("device", "cpu")


@st.cache_resource(show_spinner="Loading model…", max_entries=8)
def _load(task: str, directory: str, dev: str) -> Checkpoint | str:
    try:
        return load_checkpoint(directory, task=task, device=dev)
    except CheckpointError as e:
        return str(e)


def get_checkpoint(task: str, dev: str | None = None) -> Checkpoint | str:
    """The shipped checkpoint for ``task`` on ``dev``, or an error message saying what is wrong."""
    return _load(task, str(default_dir(task)), dev or device())


def require_checkpoint(task: str) -> Checkpoint:
    """The checkpoint, or stop the page with a clear message and the command that trains it."""
    ck = get_checkpoint(task)
    if isinstance(ck, Checkpoint):
        return ck
    st.error(f"The {task} model could not be loaded: {ck}")
    st.info(f"Train it with `python -m model train {task}` (see the README). The other pages still work.")
    st.stop()


def model_card(ck: Checkpoint) -> None:
    """The model card, closed, for under the explorer: what the model learned from, how big it is, how
    well it does (its own recorded results), what it is good and bad at, in words a student reads
    (:func:`model.training.card.model_card`), and a link to the page that shows it learning (a page of the
    app, not a file of the repository a learner cannot open); no card where the checkpoint has none. Then a
    closed glossary of the head names, roles and measures the page names."""
    card = card_of(ck.training, ck.results, asdict(ck.model.config), sum(p.numel() for p in ck.model.parameters()))
    if card.sections:
        history = page_entry("history")
        link = f"[{history.title}]({history.address}?{urlencode({'hist_task': ck.task})})"
        with st.expander("About this model: how it was trained", icon=":material/info:"):
            for heading, text in card.sections:
                st.markdown(f"**{heading}.** {markdown_escape(text)}")
            st.caption(f"Watch it learn on the {link} page.")
    # the words the page's roles line and its "Did attention matter?" panel use
    glossary(ROLE_WORDS, key=f"{ck.task}-roles-glossary", title="head names, roles and measures")


@st.cache_resource(max_entries=6, show_spinner="Reading the training history…")
def _read_history(directory: str, _stamp: tuple[float, ...]) -> ProbeHistory | HistoryError:
    try:
        return load_history(directory)
    except HistoryError as e:
        return e


def get_history(task: str) -> ProbeHistory | HistoryError:
    """The checked training history saved beside ``task``'s checkpoint (shared read-only, read again when
    training writes a new epoch), or the error that says what is missing or wrong."""
    directory = str(default_dir(task))
    return _read_history(directory, history_stamp(directory))
