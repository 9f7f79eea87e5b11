"""The training history beside the probes' attention: the loss and validation curves per epoch, with the
epoch being viewed marked."""

from __future__ import annotations

import streamlit as st

from model.training.history import training_curves
from pages.shared.projector import PROJECTOR_URL
from viz.common import FONT_SIZE
from viz.history import history_curves

PROJECTOR_SCALE = 1.4  # the curves' text in projector mode, as viz.common.for_projector grows a chart's


def curves_section(training: dict, epochs: list[int] | None, epoch: int | None, model: str) -> None:
    """The curves of ``training`` (a checkpoint's recorded metrics) over the epochs, ``epochs`` being those
    with saved attention and ``epoch`` the one shown; a note when the checkpoint records none."""
    curves = training_curves(training)
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
            f"The metrics stop at epoch {last}: config.json is rewritten only when a better model is saved, "
            "while the attention is saved after every epoch."
        )
