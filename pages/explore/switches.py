"""Which heads are switched off (head ablation): one multiselect of heads per layer, and per kind where a
model has several, each kept in the URL."""

from __future__ import annotations

import streamlit as st

from model.analysis.ablation import Head
from model.core.specs import ModelSpec
from pages.shared.state import index_list, url_widget
from pages.shared.text import be

DEFAULT_OFF = {"encoder": {0: [0]}}  # one head off in the first layer, so the default view shows an effect
KIND_SHORT = {"encoder": "enc", "decoder": "dec", "cross": "cross"}
HEAD_CHOICE = dict(format_func=lambda h: f"head {h}", placeholder="all heads on")


def head_switches(spec: ModelSpec, layout: dict[str, tuple[int, int]]) -> list[Head]:
    """The heads switched off, as (kind, layer, head) (``layout``: each kind's (layers, heads),
    :func:`model.analysis.ablation.head_layout`), then a line that names them and a button that switches
    every head on again."""
    keys: list[str] = []  # one multiselect per kind and layer, e.g. "abl_tr_dec1"
    columns = st.columns(len(layout)) if len(layout) > 1 else [st]
    off: list[Head] = []
    for col, (kind, (layers, heads)) in zip(columns, layout.items()):
        if len(layout) > 1:
            col.markdown(f"**{spec.kind(kind).title}**")
        cells = col.columns(min(layers, 4)) if len(layout) == 1 else [col] * layers
        for l in range(layers):
            key = f"abl_{spec.short}_{KIND_SHORT[kind]}{l}"
            keys.append(key)
            if key in st.session_state:  # a value set in this session may name heads this model lacks
                st.session_state[key] = [h for h in st.session_state[key] if h in range(heads)]
            label = f"{kind} layer {l}" if len(layout) > 1 else f"layer {l}"
            default = DEFAULT_OFF.get(kind, {}).get(l, [])
            draw = cells[l % len(cells)].multiselect
            chosen = url_widget(draw, label, key, default, index_list(heads), options=range(heads), **HEAD_CHOICE)
            off.extend((kind, l, h) for h in chosen)
    total = sum(layers * heads for layers, heads in layout.values())
    left, right = st.columns([3, 1])
    if off:
        names = ", ".join(f"{k if len(layout) > 1 else ''} L{l}·H{h}".strip() for k, l, h in off)
        left.caption(f"{len(off)} of {total} heads {be(len(off))} off: {names}.")
    else:
        left.caption(f"All {total} heads are on, so before and after are the same. Switch some heads off above.")
    all_on = lambda: st.session_state.update({key: [] for key in keys})  # every multiselect back to empty
    right.button("Switch every head on", key="abl_reset", on_click=all_on, disabled=not off)
    return off
