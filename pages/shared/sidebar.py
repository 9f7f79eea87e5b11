"""The sidebar every page shares: device choice, projector mode, which models are loaded."""

from __future__ import annotations

import streamlit as st
import torch

from model.training.checkpoint import Checkpoint
from pages.shared.models import TRAIN_COMMANDS, available_devices, device, get_checkpoint
from pages.shared.projector import projector_toggle
from pages.shared.state import url_value
from pages.shared.text import plural


def sidebar() -> None:
    devices = available_devices()
    initial = url_value("device", "cpu", str)
    st.sidebar.selectbox(
        "Device",
        devices,
        index=devices.index(initial) if initial in devices else 0,
        key="device",
        help="Where the models run. GPU appears when this machine has one.",
    )
    projector_toggle()
    st.sidebar.caption(f"torch {torch.__version__} · {plural(torch.get_num_threads(), 'CPU thread')}")
    for task in TRAIN_COMMANDS:
        ck = get_checkpoint(task, device())
        st.sidebar.caption(f"{task}: {'✅ trained model loaded' if isinstance(ck, Checkpoint) else '⚠️ no model'}")
