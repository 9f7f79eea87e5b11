"""Training history: scrub through the epochs and watch the probe sentences' attention take shape,
beside the loss and validation curves."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from model.analysis.heads import PLAYS
from model.core.specs import SPECS, ModelSpec
from model.training.history import HistoryError, MissingHistory, ProbeHistory
from pages import heading
from pages.explore.history_parts import REPEAT_ROLES, ROLE_NAMES, curves_section, roles_section
from pages.shared.display import show_figure
from pages.shared.models import get_history, require_checkpoint
from pages.shared.runs import pick_model
from pages.shared.state import init_state, keep_valid, radio_choice, resend_on_change, select_choice, sync_url
from pages.shared.text import markdown_escape, plural
from pages.shared.views import pick_head
from viz.attention import attention_heatmap, head_grid, weights_frame
from viz.history import probe_axes, probe_text

VIEWS = {"head": "one head", "grid": "every layer and head"}
# the widgets whose options depend on the model
MODEL_WIDGETS = ("hist_probe", "hist_kind", "hist_epoch", "hist_layer", "hist_head")


def attention_section(history: ProbeHistory, spec: ModelSpec) -> tuple[int, go.Figure | None]:
    """Probe, kind, epoch and head controls and the attention figure; returns the epoch shown and,
    in the grid view, the grid, which the caller draws at the page's full width."""
    probes, chars = list(history.probes), spec.characters
    hint = "Fixed inputs whose attention training saved after every epoch."
    shown = lambda p: probe_text(history.probes[p], characters=chars)  # its text, not its id ("p0")
    probe = select_choice("hist_probe", probes, probes[0], label="Probe input", help=hint, format_func=shown)
    kinds = history.kinds(probe)
    titled = lambda k: spec.kind(k).title
    kind = radio_choice("hist_kind", kinds, kinds[0], label="Attention", format_func=titled)
    epochs = history.epochs
    init_state("hist_epoch", epochs[-1], int)
    keep_valid("hist_epoch", epochs, epochs[-1])
    if len(epochs) > 1:
        st.select_slider("Epoch", epochs, key="hist_epoch", help="Drag to scrub through training.")
    else:
        st.caption(f"Only epoch {epochs[0]} has been saved so far.")
    sync_url("hist_epoch")
    epoch = st.session_state["hist_epoch"]
    att = history.attention(probe, kind, epoch)
    L, H, Tq, _ = att.shape
    queries, keys = probe_axes(history.probes[probe], kind, Tq, characters=chars)
    k = spec.kind(kind)  # the encoder's axes read plain "query" and "key"; the decoder's kinds name their sides
    axes = dict(query_name=k.query_axis, key_name=k.key_axis) if kind != "encoder" else {}
    grid = None
    if radio_choice("hist_view", list(VIEWS), "head", label="Show", format_func=VIEWS.get) == "grid":
        title = f"epoch {epoch}: {plural(L, 'layer')} × {plural(H, 'head')}"
        grid = head_grid(att, queries, keys, title=title, **axes)
    else:
        follow_buttons(history, kind, L, H)
        layer, head = pick_head(L, H, "hist")
        title = f"epoch {epoch} · layer {layer} · head {head}"
        show_figure(
            attention_heatmap(att[layer, head], queries, keys, title=title, **axes),
            "hist-head",
            csv=weights_frame(att[layer, head], queries, keys),
            csv_name=f"{spec.name}-{probe}-{kind}-epoch{epoch}-layer{layer}-head{head}.csv",
        )
    if kind != "encoder":
        st.caption(
            "The probe's English output is not saved (it changes as training goes), so its positions read `out`."
        )
    return epoch, grid


def follow(layer: int, head: int, probe: str | None) -> None:
    st.session_state["hist_layer"], st.session_state["hist_head"] = layer, head
    st.session_state["hist_lh"] = (layer, head)
    if probe:
        st.session_state["hist_probe"] = probe


def follow_buttons(history: ProbeHistory, kind: str, layers: int, heads: int) -> None:
    """One button per role the last scored snapshot names for ``kind`` (a head scoring at least ``PLAYS``):
    it shows that head (and, for induction, the probe whose text repeats) at whatever snapshot the slider is
    on."""
    repeat = next((p for p, toks in history.probes.items() if probe_repeats(toks)), None)
    found = []
    for role, name in ROLE_NAMES.items():
        best = history.best_head(role)
        if best and best["kind"] == kind and best["layer"] < layers and best["head"] < heads and best["score"] >= PLAYS:
            found.append((role, name, best))
    if not found:
        return
    st.caption("Follow the head that ends up playing a role:")
    columns = st.columns(min(2, len(found)))  # two a row: four labels in one row of this column were cut
    for i, (role, name, best) in enumerate(found):
        column = columns[i % len(columns)]
        probe = repeat if role in REPEAT_ROLES else None
        column.button(
            f"{name}: layer {best['layer']} · head {best['head']}",
            key=f"hist_follow_{role}",
            on_click=follow,
            args=(best["layer"], best["head"], probe),
            help=f"scored {best['score']:.2f} at the last snapshot",
        )


def probe_repeats(tokens: list[str], n: int = 8) -> bool:
    """Whether some run of ``n`` tokens occurs twice in ``tokens`` (a phrase written twice)."""
    seen = set()
    for i in range(len(tokens) - n + 1):
        gram = tuple(tokens[i : i + n])
        if gram in seen:
            return True
        seen.add(gram)
    return False


def options() -> ModelSpec:
    """The model whose training history is shown: its description is the page's whole choice."""
    return SPECS[pick_model("hist_task", select=True)]


def body(spec: ModelSpec) -> None:
    """The probes' attention at the chosen epoch beside the training curves."""
    # a keyed select box keeps showing the old model's option unless its value is sent again
    resend_on_change("_hist_shown_task", spec.name, MODEL_WIDGETS)
    ck = require_checkpoint(spec.name)
    history = get_history(spec.name)
    left, right = st.columns([3, 2])
    epoch, epochs, grid = None, None, None
    with left:
        if isinstance(history, MissingHistory):
            st.info(
                f"This {spec.name} checkpoint has no saved attention history yet (history.safetensors and "
                f"history.json beside it). Training with `python -m model train {spec.name}` saves it after every "
                "epoch."
            )
        elif isinstance(history, HistoryError):
            st.error(f"The training history could not be read: {markdown_escape(str(history))}")
        else:
            epochs = history.epochs
            every = ck.training.get("eval_every")
            if every:  # the generator's epochs, and a short fine-tune's, are not passes over the data
                st.caption(f"Here an epoch is the {int(every):,} training steps between two snapshots.")
            epoch, grid = attention_section(history, spec)
    with right:
        metrics = None if isinstance(history, HistoryError) else history.metrics
        curves_section(ck.training, epochs, epoch, spec.name, metrics)
        if not isinstance(history, HistoryError):
            roles_section(history.role_curves(), epoch, epochs or [])
    if grid is not None:  # every layer and head needs the page's whole width
        show_figure(grid, "hist-grid")


def main() -> None:
    st.title(heading("history"))
    st.caption(
        "During training the model was run on a few fixed probe inputs after every epoch and their attention "
        "was saved, and every head was scored for the roles the Head finder names. Scrub through the epochs to "
        "see heads go from blurry to sharp while the loss falls, and the moment a head learns its role."
    )
    body(options())


main()
