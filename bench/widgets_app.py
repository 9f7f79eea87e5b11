"""The floor app (``bench/floor_app.py``: one text box, one 20 × 20 heatmap) plus ``BENCH_WIDGET_COUNT``
widgets of the kind ``BENCH_WIDGET_KIND`` above the heatmap, for ``bench/widgets.py``. The ``chart`` kinds
are 6 × 6 attention heatmaps with the pages' toolbar configuration, and without the toolbar, the
colour bar or the numbers in the cells. Not a page of the app."""

import os
import zlib

import numpy as np
import streamlit as st

from pages.shared.display import CHART_CONFIG
from viz.attention import attention_heatmap

LAYERS = [f"layer {i}" for i in range(4)]
SMALL = np.full((6, 6), 1 / 6)


def chart(i: int, config: dict, **trace) -> None:
    """A 6 × 6 attention heatmap, drawn as the app's pages draw theirs."""
    fig = attention_heatmap(SMALL, list("abcdef"), title=f"chart {i}")
    fig.update_traces(**trace)
    st.plotly_chart(fig, key=f"c{i}", config=config)


KINDS = {  # one widget of each kind, as the pages use them; ``i`` makes labels and keys unique
    "none": lambda i: None,
    "caption": lambda i: st.caption(f"caption {i}: a line of explanation under a chart"),
    "markdown": lambda i: st.markdown(f"paragraph {i} with **some** words"),
    "text": lambda i: st.text(f"plain text {i}"),
    "button": lambda i: st.button(f"button {i}", key=f"b{i}"),
    "columns": lambda i: st.columns(2)[0].text(f"column {i}"),
    "progress": lambda i: st.progress(0.5, text=f"positive: {i}%"),
    "metric": lambda i: st.metric("Prediction", "positive", f"{i}% confident", delta_color="off"),
    "toggle": lambda i: st.toggle(f"toggle {i}", key=f"t{i}"),
    "selectbox": lambda i: st.selectbox(f"select {i}", LAYERS, key=f"s{i}"),
    "radio": lambda i: st.radio(f"radio {i}", LAYERS, key=f"r{i}", horizontal=True),
    "segmented_control": lambda i: st.segmented_control(f"segments {i}", LAYERS, key=f"g{i}", default=LAYERS[0]),
    "select_slider": lambda i: st.select_slider(f"slider {i}", LAYERS, key=f"l{i}"),
    "chart": lambda i: chart(i, CHART_CONFIG),
    "chart_without_toolbar": lambda i: chart(i, CHART_CONFIG | {"displayModeBar": False}),
    "chart_without_colorbar": lambda i: chart(i, CHART_CONFIG, showscale=False),
    "chart_without_cell_text": lambda i: chart(i, CHART_CONFIG, text=None, texttemplate=None),
}

st.set_page_config(page_title="Widget cost", layout="wide")
kind, count = os.environ.get("BENCH_WIDGET_KIND", "none"), int(os.environ.get("BENCH_WIDGET_COUNT", "0"))
text = st.text_input("Sentence", value="the cat sat on the mat", key="floor_text")
for i in range(count):
    KINDS[kind](i)
words = text.split()[:64] or ["(empty)"]
rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
weights = rng.random((len(words), len(words)))
weights /= weights.sum(axis=1, keepdims=True)
st.plotly_chart(attention_heatmap(weights, words, title="random attention weights"), key="floor-chart")
