"""The sidebar every page shares: device choice, projector mode, which models are loaded."""

from __future__ import annotations

import streamlit as st

from model.core.checkpoint import Checkpoint
from model.core.specs import SPECS
from pages.shared.models import available_devices, device, get_checkpoint
from pages.shared.projector import projector_toggle
from pages.shared.state import url_value

# Captions readable by everyone (WCAG 2.1 AA, 4.5:1; tests/browser/test_axe.py): Streamlit draws them at
# 60% opacity, which left grey text at 3.88:1 and a link in a caption at 2.96:1 on white; at 85% the
# text is 8:1 and a link 5:1, still lighter than the body text.
READABLE_CSS = '<style>[data-testid="stCaptionContainer"] { opacity: 0.85 !important; }</style>'


def sidebar() -> None:
    """Every element here is drawn on every page load, so it is kept to the few that do something: the
    device choice only where there is a choice, and one caption for what is loaded."""
    st.html(READABLE_CSS)  # a fixed stylesheet: no user text
    devices = available_devices()
    if len(devices) > 1:
        initial = url_value("device", "cpu", str)
        st.sidebar.selectbox(
            "Device",
            devices,
            index=devices.index(initial) if initial in devices else 0,
            key="device",
            help="Where the models run.",
        )
    else:
        st.session_state.pop("device", None)  # device() is then CPU
    projector_toggle()
    # in a learner's words: where the models run and which are ready (versions and threads are for the README)
    where = "this computer's processor" if device() == "cpu" else f"the graphics card ({device()})"
    lines = [f"The models run on {where}."]
    for task, spec in SPECS.items():
        ck = get_checkpoint(task, device())
        lines.append(f"{spec.title}: {'✅ ready' if isinstance(ck, Checkpoint) else '⚠️ not trained yet'}")
    st.sidebar.caption("  \n".join(lines))
