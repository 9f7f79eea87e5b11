"""Attention Explorer: the router. Every page lives in ui/; what they share is in ui/shared/."""

import streamlit as st

from ui.shared.lesson import enter_lesson, open_lesson, pin_control
from ui.shared.sidebar import sidebar
from ui.shared.state import flush_url, start_url

st.set_page_config(page_title="Attention Explorer", page_icon="🔍", layout="wide")

# Each page beside the prefixes of the URL keys it writes (its widgets' and its explorers'): the URL keeps
# those and the sidebar's, so another page's state leaves the address when the page changes.
PAGES = [
    (st.Page("ui/start.py", title="Start here", url_path="start", icon=":material/home:", default=True), ()),
    (st.Page("ui/hand.py", title="Self-attention by hand", url_path="hand"), ("hand_", "step")),
    (st.Page("ui/reshape.py", title="Multi-head reshape", url_path="reshape"), ("reshape_",)),
    (st.Page("ui/classifier.py", title="Sentiment classifier", url_path="classifier"), ("cls_",)),
    (st.Page("ui/generator.py", title="Shakespeare generator", url_path="generator"), ("gen_",)),
    (st.Page("ui/translator.py", title="Translator (de → en)", url_path="translator"), ("tr_", "trhub_")),
    (st.Page("ui/any_model.py", title="Any model (Hugging Face)", url_path="any_model"), ("hub_",)),
    (st.Page("ui/ablation.py", title="Head ablation", url_path="ablation"), ("abl_",)),
    (st.Page("ui/pairs.py", title="Minimal pairs", url_path="pairs"), ("pair",)),
    (st.Page("ui/profiles.py", title="Head profiles", url_path="profiles"), ("pro_", "proex_")),
    (st.Page("ui/heads.py", title="Head finder", url_path="heads"), ("heads_",)),
    (st.Page("ui/history.py", title="Training history", url_path="history"), ("hist_",)),
    (st.Page("ui/workshop.py", title="Workshop: predict, then reveal", url_path="workshop"), ("q", "ws_")),
    (st.Page("ui/classroom.py", title="Classroom", url_path="classroom"), ("room", "teacher", "crk_", "crr_")),
]
URL_KEYS = {page.url_path: prefixes for page, prefixes in PAGES}

lesson = open_lesson()  # a valid ?lesson= link pins the page: no menu (ui/shared/lesson.py)
# every page listed: past 10 Streamlit would hide some behind "View more"
page = st.navigation([page for page, _ in PAGES], expanded=True, position="hidden" if lesson else "sidebar")
start_url()
prefixes = URL_KEYS.get(page.url_path, ())
in_lesson = enter_lesson(lesson, page, {p.url_path: p for p, _ in PAGES}, prefixes)
sidebar()
if not in_lesson and page.url_path != "classroom":  # a live room has its own join link, and a teacher key
    pin_control(page, prefixes)
try:
    page.run()
finally:  # also after st.stop(): a page that stops early still writes what it set
    flush_url(prefixes)
