"""The training history beside the probes' attention: the loss and validation curves per epoch, with the
epoch being viewed marked."""

from __future__ import annotations

import streamlit as st

from model.training.history import training_curves
from pages.shared.projector import PROJECTOR_URL
from viz.common import FONT_SIZE
from viz.history import curves_svg, history_curves

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
    svg = history_curves(curves, current_epoch=epoch, saved_epochs=epochs or (), font_size=size)
    # Not Plotly: a second Plotly chart was the page's largest cost after the heatmap. Inline rather than
    # st.image, so that its points' tooltips work (measured about as cheap). The metric names come from
    # the checkpoint's config.json, and curves_svg escapes every text.
    st.markdown(svg, unsafe_allow_html=True)
    last = int(curves["epoch"][-1])
    if epochs and max(epochs) > last:
        st.caption(
            f"Metrics were recorded up to epoch {last}, the model that was kept; attention was saved for every epoch."
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


def roles_section(curves: dict[str, list[float]], epoch: int | None, saved: list[int]) -> None:
    """Each role's best head score per scored snapshot, the repeat loss on the right axis (the moment an
    induction head forms: Olsson et al. 2022's phase change)."""
    if not curves:
        st.caption(
            "No snapshot of this training was scored for head roles (`python -m model snapshots` adds them "
            "when training kept its snapshots)."
        )
        return
    series = {ROLE_NAMES.get(k, k): v for k, v in curves.items() if k != "epoch"}
    size = FONT_SIZE * (PROJECTOR_SCALE if st.session_state.get(PROJECTOR_URL) else 1)
    seen = [*curves["epoch"], *saved]
    svg = curves_svg(
        curves["epoch"],
        series,
        right=[ROLE_NAMES["repeat_loss"]] if "repeat_loss" in curves else [],
        current_epoch=epoch,
        epoch_range=(min(seen), max(seen)),
        title="each role's best head per snapshot",
        font_size=size,
    )
    st.markdown(svg, unsafe_allow_html=True)  # curves_svg escapes every text; the names are ours
    score = "the best head's score for each role, by the Head finder's own definitions."
    if "repeat_loss" not in curves:  # one axis: a note on a right axis would name a curve that is not there
        st.caption(score[0].upper() + score[1:])
        return
    st.caption(
        f"Left axis: {score} Right axis: the loss on the second copy of 25 random characters written twice; it "
        "falls when an induction head can copy what came after the same character last time."
    )
