"""Attention Explorer: the router. Every page lives in ui/; what they share is in ui/shared/."""

import streamlit as st

from ui.shared.sidebar import sidebar
from ui.shared.state import flush_url, start_url

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")

PAGES = [
    st.Page("ui/start.py", title="Start here", url_path="start", icon=":material/home:", default=True),
    st.Page("ui/hand.py", title="Self-attention by hand", url_path="hand"),
    st.Page("ui/reshape.py", title="Multi-head reshape", url_path="reshape"),
    st.Page("ui/classifier.py", title="Sentiment classifier", url_path="classifier"),
    st.Page("ui/generator.py", title="Shakespeare generator", url_path="generator"),
    st.Page("ui/translator.py", title="Translator (de → en)", url_path="translator"),
    st.Page("ui/any_model.py", title="Any model (Hugging Face)", url_path="any_model"),
    st.Page("ui/ablation.py", title="Head ablation", url_path="ablation"),
    st.Page("ui/pairs.py", title="Minimal pairs", url_path="pairs"),
    st.Page("ui/profiles.py", title="Head profiles", url_path="profiles"),
    st.Page("ui/history.py", title="Training history", url_path="history"),
    st.Page("ui/workshop.py", title="Workshop: predict, then reveal", url_path="workshop"),
    st.Page("ui/classroom.py", title="Classroom", url_path="classroom"),
]

page = st.navigation(PAGES, expanded=True)  # every page listed: past 10 Streamlit would hide some behind "View more"
start_url()
sidebar()
try:
    page.run()
finally:  # also after st.stop(): a page that stops early still writes what it set
    flush_url(page.url_path)
