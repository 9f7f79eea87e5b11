"""Training history: scrub through the training snapshots and watch the probe inputs' attention take shape,
beside each role's best head, the loss on repeated text and the loss curves.

It opens on the moment worth seeing: the generator's induction head forming. That snapshot is found in the
scored snapshots (:meth:`ProbeHistory.moment`: the largest rise of the induction score from one snapshot to
the next), marked on the chart and the slider, and the page starts there, on that head, with the probe that
writes a phrase twice (the stripe is there at that snapshot and fades just before).

URL keys (each starts with ``hist_``, so a link opens an exact state; a bad value falls back to the default):

- ``hist_task``, also read as ``hist_model``: the model, ``classifier``, ``generator`` or ``translator``
  (default ``generator``).
- ``hist_epoch``, also read as ``hist_snapshot``: the snapshot shown, by its number (default: the snapshot
  where a head forms, else the last).
- ``hist_probe``: the probe input, ``p0``, ``p1``, ... (default: the one whose text repeats, else ``p0``).
- ``hist_kind``: the attention, ``encoder``, ``decoder`` or ``cross``.
- ``hist_view``: ``head`` (one head) or ``grid`` (every layer and head).
- ``hist_layer``, ``hist_head``: the head shown (default: the head that forms, else L0 H0).

For example ``history?hist_model=generator&hist_snapshot=12&hist_layer=3&hist_head=2`` opens the generator's
induction head one snapshot before it forms. The second name of a key is read only when the first is absent,
and leaves the URL once read (the page writes the first).
"""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from model.analysis.heads import PLAYS
from model.core.specs import MODELS, SPECS, ModelSpec
from model.training.history import HistoryError, MissingHistory, Moment, ProbeHistory, held_fixed, snapshot_steps
from pages import heading
from pages.explore.history_parts import REPEAT_ROLES, ROLE_NAMES, curves_section, roles_section
from pages.shared.display import show_figure
from pages.shared.models import get_history, require_checkpoint
from pages.shared.state import (
    bounded,
    init_state,
    keep_valid,
    one_of,
    radio_choice,
    resend_on_change,
    select_choice,
    sync_url,
    url_value,
    url_widget,
)
from pages.shared.text import markdown_escape, plural
from pages.shared.views import pick_head
from viz.attention import attention_heatmap, head_grid, weights_frame
from viz.common import head_name
from viz.history import probe_axes, probe_text

VIEWS = {"head": "one head", "grid": "every layer and head"}
DEFAULT_MODEL = "generator"  # the model whose history has the moment worth opening on
# the widgets whose options depend on the model
MODEL_WIDGETS = ("hist_probe", "hist_kind", "hist_epoch", "hist_layer", "hist_head")
ALIASES = {"hist_model": ("hist_task", one_of(MODELS)), "hist_snapshot": ("hist_epoch", int)}  # second names
MASKED = re.compile(r"\b(masked|blanked)\b", re.IGNORECASE)  # a card that says the model guessed hidden words


def read_aliases() -> None:
    """Seed a key from its second name in the URL (``hist_model``, ``hist_snapshot``) when the key itself is
    absent, once per session, and drop the second name from the URL (the page writes the first)."""
    for alias, (key, cast) in ALIASES.items():
        if alias not in st.query_params:
            continue
        value = url_value(alias, None, cast)
        if value is not None and key not in st.session_state and key not in st.query_params:
            st.session_state[key] = value
        del st.query_params[alias]


def attention_section(
    history: ProbeHistory,
    spec: ModelSpec,
    moment: Moment | None,
    focus: dict | None,
    steps: dict[int, int],
    every: int | None,
) -> tuple[int, go.Figure | None]:
    """Probe, kind, snapshot and head controls and the attention figure; returns the snapshot shown and,
    in the grid view, the grid, which the caller draws at the page's full width. The head shown first is
    ``focus`` (``{"kind", "layer", "head"}``: the one the page's note is about)."""
    probes, chars = list(history.probes), spec.characters
    hint = "Fixed inputs whose attention training saved at every snapshot."
    shown = lambda p: probe_text(history.probes[p], characters=chars)  # its text, not its id ("p0")
    repeat = next((p for p, toks in history.probes.items() if probe_repeats(toks)), probes[0])
    probe = select_choice("hist_probe", probes, repeat, label="Probe input", help=hint, format_func=shown)
    kinds = history.kinds(probe)
    titled = lambda k: spec.kind(k).title
    kind = radio_choice("hist_kind", kinds, kinds[0], label="Attention", format_func=titled)
    epochs = history.epochs
    start = moment.epoch if moment and moment.epoch in epochs else epochs[-1]
    init_state("hist_epoch", start, int)
    keep_valid("hist_epoch", epochs, start)
    if len(epochs) > 1:
        forms = f"{ROLE_NAMES.get(moment.role, moment.role)} head forms" if moment else ""
        st.select_slider(
            "Snapshot",
            epochs,
            key="hist_epoch",
            format_func=lambda e: f"{e} · {forms}" if moment and e == moment.epoch else str(e),
            help="Drag to scrub through training, one snapshot at a time.",
        )
    else:
        st.caption(f"Only snapshot {epochs[0]} has been saved so far.")
    sync_url("hist_epoch")
    epoch = st.session_state["hist_epoch"]
    st.caption(snapshot_words(epoch, steps, every))
    att = history.attention(probe, kind, epoch)
    L, H, Tq, _ = att.shape
    queries, keys = probe_axes(history.probes[probe], kind, Tq, characters=chars)
    k = spec.kind(kind)  # the encoder's axes read plain "query" and "key"; the decoder's kinds name their sides
    axes = dict(query_name=k.query_axis, key_name=k.key_axis) if kind != "encoder" else {}
    grid = None
    if radio_choice("hist_view", list(VIEWS), "head", label="Show", format_func=VIEWS.get) == "grid":
        title = f"snapshot {epoch}: {plural(L, 'layer')} × {plural(H, 'head')}"
        grid = head_grid(att, queries, keys, title=title, **axes)
    else:
        follow_buttons(history, kind, L, H)
        if focus and focus["kind"] == kind and focus["layer"] < L and focus["head"] < H:  # the note's head first
            init_state("hist_layer", int(focus["layer"]), bounded(0, L - 1))
            init_state("hist_head", int(focus["head"]), bounded(0, H - 1))
        layer, head = pick_head(L, H, "hist")
        title = f"snapshot {epoch} · {head_name(layer, head)}"
        show_figure(
            attention_heatmap(att[layer, head], queries, keys, title=title, **axes),
            "hist-head",
            csv=weights_frame(att[layer, head], queries, keys),
            csv_name=f"{spec.name}-{probe}-{kind}-snapshot{epoch}-layer{layer}-head{head}.csv",
        )
    if kind != "encoder":
        st.caption(
            "The probe's English output is not saved (it changes as training goes), so its positions read `out`."
        )
    return epoch, grid


def snapshot_words(epoch: int, steps: dict[int, int], every: int | None) -> str:
    """What snapshot ``epoch`` is, in training steps, and how often snapshots were taken."""
    when = (
        f"every {every:,} training steps" if every else "after each pass over the training data"
    )  # a training step: one small batch read and the weights nudged once
    at = f"Snapshot {epoch} is the model after {plural(steps[epoch], 'training step')}" if epoch in steps else ""
    sentence = f"{at}; a snapshot was taken {when}." if at else f"A snapshot was taken {when}."
    return sentence + " A training step is one small batch of examples read and the weights nudged once."


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
            f"{name}: {head_name(best['layer'], best['head'])}",
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


def moment_note(moment: Moment, steps: dict[int, int]) -> str:
    """The head forming, in numbers the snapshots recorded."""
    name = ROLE_NAMES.get(moment.role, moment.role)
    article = "an" if name[0] in "aeiou" else "a"
    span = (
        f" (training steps {steps[moment.before_epoch]:,} to {steps[moment.epoch]:,})"
        if moment.before_epoch in steps and moment.epoch in steps
        else ""
    )
    text = (
        f"**Watch a head learn its job.** Between snapshot {moment.before_epoch} and snapshot {moment.epoch}"
        f"{span}, {head_name(moment.layer, moment.head)} (layer {moment.layer}, head {moment.head}) became {article} "
        f"{name} head: its {name} score jumped "
        f"from {moment.before:.2f} to {moment.after:.2f}"
    )
    if moment.loss_before is not None and moment.loss_after is not None:
        text += (
            f", and the loss on repeated text fell from {moment.loss_before:.2f} to {moment.loss_after:.2f} nats "
            "(the model can now copy what it has read before)"
        )
    text += (
        f". The page opens at snapshot {moment.epoch} on that head, with a probe that writes a phrase twice: in the "
        "second copy each character looks at the one that followed it in the first copy, a stripe beside the "
        f"diagonal. Move back to snapshot {moment.before_epoch} to see it fade."
    )
    return text


def formed_earlier(history: ProbeHistory, training: dict) -> tuple[str, dict] | None:
    """A role whose best head plays it from the first snapshot on, in a block this training kept as it was
    (started from an earlier training, held fixed): the role and that head, or None."""
    if not history.snapshots:
        return None
    first = min(history.snapshots)
    for role in ROLE_NAMES:
        best = history.best_head(role, first)
        if best and best["score"] >= PLAYS and held_fixed(training, int(best["layer"])):
            return role, best
    return None


def formed_earlier_note(history: ProbeHistory, training: dict, role: str, best: dict) -> str:
    """Where the ``role`` head ``best`` (:func:`formed_earlier`) formed, in words and the snapshots' scores."""
    name, first = ROLE_NAMES.get(role, role), min(history.snapshots)
    last = history.best_head(role) or best
    earlier = (
        "while the model first learned to guess words blanked out of sentences (its masked-word pretraining)"
        if MASKED.search(str(training.get("card") or ""))
        else "in the training this model started from"
    )
    return (
        f"**Where its {name} head formed.** {head_name(best['layer'], best['head'])} (layer {best['layer']}, "
        f"head {best['head']}) already scores "
        f"{best['score']:.2f} at snapshot {first}, the first one here, and {last['score']:.2f} at the last. "
        f"It formed before these snapshots, {earlier}. In the training shown here that layer was kept as it "
        f"was, so its line stays flat."
    )


def options() -> ModelSpec:
    """The model whose training history is shown: its description is the page's whole choice."""
    read_aliases()
    shown = dict(options=MODELS, format_func=lambda name: SPECS[name].title)
    return SPECS[url_widget(st.selectbox, "Model", "hist_task", DEFAULT_MODEL, one_of(MODELS), **shown)]


def body(spec: ModelSpec) -> None:
    """The probes' attention at the chosen snapshot beside the role scores and the training curves."""
    # a keyed select box keeps showing the old model's option unless its value is sent again
    resend_on_change("_hist_shown_task", spec.name, MODEL_WIDGETS)
    ck = require_checkpoint(spec.name)
    history = get_history(spec.name)
    epoch, epochs, grid, moment, focus = None, None, None, None, None
    if not isinstance(history, HistoryError):
        moment = history.moment("induction")
        steps = snapshot_steps(history.metrics, ck.training)
        earlier = None if moment else formed_earlier(history, ck.training)
        if moment:
            focus = dict(kind=moment.kind, layer=moment.layer, head=moment.head)
            st.markdown(moment_note(moment, steps))
        elif earlier:
            focus = earlier[1]
            st.markdown(formed_earlier_note(history, ck.training, *earlier))
    left, right = st.columns([3, 2])
    with left:
        if isinstance(history, MissingHistory):
            st.info(
                f"This {spec.name} checkpoint has no saved attention history yet (history.safetensors and "
                f"history.json beside it). Training with `python -m model train {spec.name}` saves it at every "
                "snapshot."
            )
        elif isinstance(history, HistoryError):
            st.error(f"The training history could not be read: {markdown_escape(str(history))}")
        else:
            epochs = history.epochs
            every = ck.training.get("eval_every")
            epoch, grid = attention_section(history, spec, moment, focus, steps, int(every) if every else None)
    with right:
        if not isinstance(history, HistoryError):
            roles_section(history.role_curves(), epoch, epochs or [], moment)
        metrics = None if isinstance(history, HistoryError) else history.metrics
        curves_section(ck.training, epochs, epoch, spec.name, metrics)
    if grid is not None:  # every layer and head needs the page's whole width
        show_figure(grid, "hist-grid")


def main() -> None:
    st.title(heading("history"))
    st.caption(
        "Now and then during training, the model was paused for a snapshot: it read a few fixed probe inputs, "
        "their attention was saved, and every head was scored for the roles the Head finder names. Scrub "
        "through the snapshots to see heads go from blurry to sharp while the loss falls, and the moment a "
        "head learns its job."
    )
    body(options())


main()
