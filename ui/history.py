"""Training history: scrub through the epochs and watch the probe sentences' attention take shape,
beside the loss and validation curves."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from model.training.history import HistoryError, MissingHistory, ProbeHistory, training_curves
from ui.shared.display import show_figure
from ui.shared.models import get_history, require_checkpoint
from ui.shared.runs import pick_task
from ui.shared.state import init_state, keep_valid, radio_choice, resend_on_change, select_choice, sync_url
from ui.shared.text import markdown_escape, plural
from ui.shared.views import pick_head
from viz.attention import attention_heatmap, head_grid, weights_frame
from viz.history import history_curves, probe_axes, probe_text

KIND_NAMES = {
    "encoder": "encoder self-attention",
    "decoder": "decoder self-attention (causal)",
    "cross": "cross-attention (query = English, key = German)",
}
VIEWS = {"head": "one head", "grid": "every layer and head"}
URL_KEYS = ("hist_probe", "hist_kind", "hist_epoch", "hist_view", "hist_layer", "hist_head")
TASK_WIDGETS = ("hist_probe", "hist_kind", "hist_epoch", "hist_layer", "hist_head")  # their options depend on the model


def curves_section(training: dict, epochs: list[int] | None, epoch: int | None, task: str) -> None:
    curves = training_curves(training)
    if not curves:
        st.info(
            f"This checkpoint's config.json records no per-epoch metrics. Training with "
            f"`python -m model train {task}` writes them."
        )
        return
    show_figure(history_curves(curves, current_epoch=epoch, saved_epochs=epochs or ()), "hist-curves")
    last = int(curves["epoch"][-1])
    if epochs and max(epochs) > last:
        st.caption(
            f"The metrics stop at epoch {last}: config.json is rewritten only when a better model is saved, "
            "while the attention is saved after every epoch."
        )


def attention_section(history: ProbeHistory, task: str) -> tuple[int, go.Figure | None]:
    """Probe, kind, epoch and head controls and the attention figure; returns the epoch shown and,
    in the grid view, the grid, which the caller draws at the page's full width."""
    probes, chars = list(history.probes), task == "generator"
    hint = "Fixed inputs whose attention training saved after every epoch."
    shown = lambda p: f"{p}: {probe_text(history.probes[p], characters=chars)}"
    probe = select_choice("hist_probe", probes, probes[0], label="Probe input", help=hint, format_func=shown)
    kinds = history.kinds(probe)
    kind = radio_choice("hist_kind", kinds, kinds[0], label="Attention", format_func=KIND_NAMES.get)
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
    queries, keys = probe_axes(history.probes[probe], kind, Tq, characters=chars)
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
        layer, head = pick_head(L, H, "hist")
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
    task = pick_task("hist_task", select=True)
    # a keyed select box keeps showing the old model's option unless its value is sent again
    resend_on_change("_hist_shown_task", task, TASK_WIDGETS)
    ck = require_checkpoint(task)
    history = get_history(task)
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
