"""The floor under the page-latency figures: Streamlit with one text box and one of our heatmaps (a
20 × 20 attention heatmap as the model pages draw it), no model, no sidebar, no other element.

    python -m bench.page_latency --pages floor

No page of the app can render or react faster than this on the same machine and browser; the
difference between a page's figures and this one's is what the page itself costs.
"""

import zlib

import numpy as np
import streamlit as st

from viz.attention import attention_heatmap

st.set_page_config(page_title="Latency floor", layout="wide")
text = st.text_input("Sentence", value="the cat sat on the mat", key="floor_text")
words = text.split()[:64] or ["(empty)"]
rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
weights = rng.random((len(words), len(words)))
weights /= weights.sum(axis=1, keepdims=True)
st.plotly_chart(attention_heatmap(weights, words, title="random attention weights"), key="floor-chart")
