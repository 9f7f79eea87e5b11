"""Attention Explorer: the router. Every page lives in pages/; what they share is in pages/shared/."""

import streamlit as st

from pages.shared.sidebar import sidebar
from pages.shared.state import flush_url, start_url

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")

PAGES = [
    st.Page("pages/start.py", title="Start here", url_path="start", icon=":material/home:", default=True),
    st.Page("pages/hand.py", title="Self-attention by hand", url_path="hand"),
    st.Page("pages/reshape.py", title="Multi-head reshape", url_path="reshape"),
    st.Page("pages/classifier.py", title="Sentiment classifier", url_path="classifier"),
    st.Page("pages/generator.py", title="Shakespeare generator", url_path="generator"),
    st.Page("pages/translator.py", title="Translator (de → en)", url_path="translator"),
    # url_path = the file's name: with a pages/ folder, a fresh server's first session finds a page by its file
    st.Page("pages/any_model.py", title="Any model (Hugging Face)", url_path="any_model"),
    st.Page("pages/ablation.py", title="Head ablation", url_path="ablation"),
    st.Page("pages/pairs.py", title="Minimal pairs", url_path="pairs"),
    st.Page("pages/profiles.py", title="Head profiles", url_path="profiles"),
    st.Page("pages/history.py", title="Training history", url_path="history"),
    st.Page("pages/workshop.py", title="Workshop: predict, then reveal", url_path="workshop"),
    st.Page("pages/classroom.py", title="Classroom", url_path="classroom"),
]

page = st.navigation(PAGES, expanded=True)  # every page listed: past 10 Streamlit would hide some behind "View more"
start_url()
sidebar()
try:
    page.run()
finally:  # also after st.stop(): a page that stops early still writes what it set
    flush_url(page.url_path)
