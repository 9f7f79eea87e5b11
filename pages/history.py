"""Training history: scrub through the epochs and watch the probe sentences' attention take shape,
beside the loss and validation curves."""

from __future__ import annotations

import os

import plotly.graph_objects as go
import streamlit as st

from model.training.checkpoint import default_dir
from model.training.history import HistoryError, MissingHistory, ProbeHistory, load_history, training_curves
from pages.shared.display import show_figure
from pages.shared.models import require_checkpoint
from pages.shared.state import bounded, init_state, keep_valid, sync_url
from pages.shared.text import markdown_escape, plural
from viz.attention import attention_heatmap, head_grid, visible_chars, weights_frame
from viz.history import metric_name
from viz.history import training_curves as curves_figure

TASKS = {
    "classifier": "Sentiment classifier",
    "generator": "Shakespeare generator",
    "translator": "Translator (de → en)",
}
KIND_NAMES = {
    "encoder": "encoder self-attention",
    "decoder": "decoder self-attention (causal)",
    "cross": "cross-attention (query = English, key = German)",
}
VIEWS = {"head": "one head", "grid": "every layer and head"}
RIGHT_AXIS = ("accuracy", "bleu")  # validation scores (higher is better) share the right axis
URL_KEYS = ("hist_task", "hist_probe", "hist_kind", "hist_epoch", "hist_view", "hist_layer", "hist_head")
TASK_WIDGETS = ("hist_probe", "hist_kind", "hist_epoch", "hist_layer", "hist_head")  # their options depend on the model


def stamp(directory: str) -> tuple[float, ...]:
    """Modification times of the history files: a new epoch written by training reloads them."""
    names = ("history.safetensors", "history.json", "config.json")
    return tuple(os.path.getmtime(p) if os.path.exists(p) else 0.0 for p in (os.path.join(directory, n) for n in names))


@st.cache_resource(max_entries=6, show_spinner="Reading the training history…")
def read_history(directory: str, _stamp: tuple[float, ...]) -> ProbeHistory | HistoryError:
    """The checked history, or the error that says what is missing or wrong (shared read-only)."""
    try:
        return load_history(directory)
    except HistoryError as e:
        return e


def probe_text(tokens: list[str], task: str) -> str:
    if task == "generator":
        return "".join(tokens).replace("\n", " ⏎ ")
    return " ".join(t for t in tokens if t not in ("<sos>", "<eos>"))


def axis_tokens(history: ProbeHistory, probe: str, kind: str, n_queries: int, task: str) -> tuple[list[str], list[str]]:
    """Query and key labels. The probe's own tokens are saved; the translator's output words are
    not (they change every epoch), so decoder positions are labelled ``out``."""
    tokens = history.probes[probe]
    tokens = visible_chars(tokens) if task == "generator" else tokens
    outputs = ["<sos>", *["out"] * (n_queries - 1)]
    if kind == "encoder":
        return tokens, tokens
    return (outputs, outputs) if kind == "decoder" else (outputs, tokens)


def curves_section(training: dict, epochs: list[int] | None, epoch: int | None, task: str) -> None:
    curves = training_curves(training)
    if not curves:
        st.info(
            f"This checkpoint's config.json records no per-epoch metrics. Training with "
            f"`python -m model train {task}` writes them."
        )
        return
    series = {metric_name(k): v for k, v in curves.items() if k != "epoch"}
    right = [metric_name(k) for k in curves if any(word in k for word in RIGHT_AXIS)]
    seen = [*curves["epoch"], *(epochs or [])]
    fig = curves_figure(
        curves["epoch"], series, right=right, current_epoch=epoch, epoch_range=(min(seen), max(seen)),
        title="loss and validation per epoch",
    )  # fmt: skip
    show_figure(fig, "hist-curves")
    last = int(curves["epoch"][-1])
    if epochs and max(epochs) > last:
        st.caption(
            f"The metrics stop at epoch {last}: config.json is rewritten only when a better model is saved, "
            "while the attention is saved after every epoch."
        )


def follow_task(task: str) -> None:
    """After a change of model, send every model-dependent widget its value again.

    A keyed selectbox keeps its identity when its options change, and the browser keeps showing the
    text it last showed (the old model's probe) unless the server sends a value; setting the state
    before the widgets are drawn sends it."""
    if st.session_state.get("_hist_shown_task") == task:
        return
    for key in TASK_WIDGETS:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]
    st.session_state["_hist_shown_task"] = task


def attention_section(history: ProbeHistory, task: str) -> tuple[int, go.Figure | None]:
    """Probe, kind, epoch and head controls and the attention figure; returns the epoch shown and,
    in the grid view, the grid, which the caller draws at the page's full width."""
    probes = list(history.probes)
    init_state("hist_probe", probes[0])
    keep_valid("hist_probe", probes, probes[0])
    st.selectbox(
        "Probe input", probes, key="hist_probe", format_func=lambda p: f"{p}: {probe_text(history.probes[p], task)}",
        help="Fixed inputs whose attention training saved after every epoch.",
    )  # fmt: skip
    probe = st.session_state["hist_probe"]
    kinds = history.kinds(probe)
    init_state("hist_kind", kinds[0])
    keep_valid("hist_kind", kinds, kinds[0])
    if len(kinds) > 1:
        st.radio("Attention", kinds, format_func=KIND_NAMES.get, key="hist_kind", horizontal=True)
    kind = st.session_state["hist_kind"]
    epochs = history.epochs
    init_state("hist_epoch", epochs[-1], int)
    keep_valid("hist_epoch", epochs, epochs[-1])
    if len(epochs) > 1:
        st.select_slider("Epoch", epochs, key="hist_epoch", help="Drag to scrub through training.")
    else:
        st.caption(f"Only epoch {epochs[0]} has been saved so far.")
    epoch = st.session_state["hist_epoch"]
    att = history.attention(probe, kind, epoch)
    L, H, Tq, _ = att.shape
    queries, keys = axis_tokens(history, probe, kind, Tq, task)
    axes = dict(
        query_name="query = English output" if kind != "encoder" and task == "translator" else "query",
        key_name={"cross": "key = German", "decoder": "key = English so far"}.get(kind, "key"),
    )
    init_state("hist_view", "head", lambda raw: raw if raw in VIEWS else "head")
    st.radio("Show", list(VIEWS), format_func=VIEWS.get, key="hist_view", horizontal=True)
    grid = None
    if st.session_state["hist_view"] == "grid":
        title = f"epoch {epoch}: {plural(L, 'layer')} × {plural(H, 'head')}"
        grid = head_grid(att, queries, keys, title=title, **axes)
    else:
        init_state("hist_layer", 0, bounded(0, L - 1))
        init_state("hist_head", 0, bounded(0, H - 1))
        keep_valid("hist_layer", range(L), 0)
        keep_valid("hist_head", range(H), 0)
        left, right = st.columns(2)
        left.selectbox("Layer", range(L), key="hist_layer", format_func=lambda l: f"layer {l}")
        right.selectbox("Head", range(H), key="hist_head", format_func=lambda h: f"head {h}")
        layer, head = st.session_state["hist_layer"], st.session_state["hist_head"]
        show_figure(
            attention_heatmap(att[layer, head], queries, keys, title=f"epoch {epoch} · layer {layer} · head {head}", **axes),
            "hist-head",
            csv=weights_frame(att[layer, head], queries, keys),
            csv_name=f"{task}-{probe}-{kind}-epoch{epoch}-layer{layer}-head{head}.csv",
        )  # fmt: skip
    if kind != "encoder":
        st.caption(
            "The probe's English output is not saved (it changes as training goes), so its positions read `out`."
        )
    return epoch, grid


def main() -> None:
    st.title("Training history")
    st.caption(
        "During training the model was run on a few fixed probe inputs after every epoch and their attention "
        "was saved. Scrub through the epochs to see heads go from blurry to sharp while the loss falls."
    )
    init_state("hist_task", "classifier", lambda raw: raw if raw in TASKS else "classifier")
    st.selectbox("Model", list(TASKS), format_func=TASKS.get, key="hist_task")
    task = st.session_state["hist_task"]
    follow_task(task)
    ck = require_checkpoint(task)
    directory = str(default_dir(task))
    history = read_history(directory, stamp(directory))
    left, right = st.columns([3, 2])
    epoch, epochs, grid = None, None, None
    with left:
        if isinstance(history, MissingHistory):
            st.info(
                f"This {task} checkpoint has no saved attention history yet (history.safetensors and history.json "
                f"beside it). Training with `python -m model train {task}` saves it after every epoch."
            )
        elif isinstance(history, HistoryError):
            st.error(f"The training history could not be read: {markdown_escape(str(history))}")
        else:
            epochs = history.epochs
            epoch, grid = attention_section(history, task)
    with right:
        curves_section(ck.training, epochs, epoch, task)
    if grid is not None:  # every layer and head needs the page's whole width
        show_figure(grid, "hist-grid")
    sync_url(*URL_KEYS)


main()
