"""The training history beside the probes' attention: the loss and validation curves per snapshot, and each
role's best head above the loss on repeated text, with the snapshot being viewed and the one where a head forms
marked."""

from __future__ import annotations

import math

import streamlit as st

from model.analysis.heads import PLAYS
from model.training.history import Moment, training_curves
from pages.shared.projector import PROJECTOR_URL
from viz.common import FONT_SIZE
from viz.history import history_curves, panels_svg

PROJECTOR_SCALE = 1.4  # the curves' text in projector mode, as viz.common.for_projector grows a chart's


def curves_section(
    training: dict, epochs: list[int] | None, epoch: int | None, model: str, metrics: list[dict] | None = None
) -> None:
    """The curves of ``metrics`` (history.json's record of every evaluation) or else of ``training`` (a
    checkpoint's recorded metrics) over the epochs, ``epochs`` being those with saved attention and ``epoch``
    the one shown; a note when the checkpoint records none."""
    curves = training_curves(training, metrics)
    if not curves:
        st.info(
            f"This checkpoint's config.json records no per-epoch metrics. Training with "
            f"`python -m model train {model}` writes them."
        )
        return
    size = FONT_SIZE * (PROJECTOR_SCALE if st.session_state.get(PROJECTOR_URL) else 1)
    title, unit = "loss and validation per snapshot", "snapshot"
    svg = history_curves(curves, current_epoch=epoch, saved_epochs=epochs or (), title=title, font_size=size, unit=unit)
    # Not Plotly: a second Plotly chart was the page's largest cost after the heatmap. Inline rather than
    # st.image, so that its points' tooltips work (measured about as cheap). The metric names come from
    # the checkpoint's config.json, and curves_svg escapes every text.
    st.markdown(svg, unsafe_allow_html=True)
    last = int(curves["epoch"][-1])
    if epochs and max(epochs) > last:
        st.caption(
            f"Scores were recorded up to snapshot {last}, the model that was kept; attention was saved at every snapshot."
        )


# the head finder's roles (model.analysis.snapshots.ROLES) and the repeat loss, named for people
ROLE_NAMES = {
    "previous": "previous-token",
    "first": "first-token (sink)",
    "induction": "induction",
    "duplicate": "duplicate-token",
    "repeat_loss": "loss on a repeated sequence (nats)",
}
REPEAT_ROLES = ("induction", "duplicate")  # roles best seen on a probe whose text repeats
SCORES_PANEL = "Best head's score for each role (0 to 1)"
LOSS_PANEL = "Loss on repeated text (nats)"


def roles_section(
    curves: dict[str, list[float]], epoch: int | None, saved: list[int], moment: Moment | None = None
) -> None:
    """Each role's best head score per scored snapshot above the repeat loss, two panels on one snapshot
    axis, with the snapshot where ``moment``'s head forms marked (Olsson et al. 2022's phase change). Roles
    whose best head never reaches ``PLAYS`` are left out of the chart and named under it."""
    if not curves:
        st.caption("No snapshot of this training was scored for head roles.")
        return
    roles = [k for k in curves if k not in ("epoch", "repeat_loss")]
    played = [r for r in roles if max((v for v in curves[r] if math.isfinite(v)), default=0.0) >= PLAYS]
    scores = {ROLE_NAMES.get(r, r): curves[r] for r in played or roles}
    panels = [(SCORES_PANEL, scores)]
    if "repeat_loss" in curves:
        panels.append((LOSS_PANEL, {ROLE_NAMES["repeat_loss"]: curves["repeat_loss"]}))
    size = FONT_SIZE * (PROJECTOR_SCALE if st.session_state.get(PROJECTOR_URL) else 1)
    seen = [*curves["epoch"], *saved]
    svg = panels_svg(
        curves["epoch"],
        panels,
        current=epoch,
        moment=moment.epoch if moment else None,
        moment_label=f"{ROLE_NAMES.get(moment.role, moment.role)} head forms" if moment else "",
        snapshot_range=(min(seen), max(seen)),
        title="each role's best head per snapshot",
        font_size=size,
    )
    st.markdown(svg, unsafe_allow_html=True)  # panels_svg escapes every text; the names are ours
    note = (
        "Top: for each role, the score of the head that plays it best, by the Head finder's own definitions "
        "(1: all of the head's attention goes where the role says)."
    )
    if "repeat_loss" in curves:
        note += (
            " Bottom: how wrong the model's guesses are on the second copy of random characters written twice; "
            "it falls when an induction head can copy what came after the same character last time."
        )
    left_out = [ROLE_NAMES.get(r, r) for r in roles if r not in played] if played else []
    if left_out:
        note += f" Not drawn: {', '.join(left_out)}, whose best head never scored {PLAYS:g} or more."
    st.caption(note)
