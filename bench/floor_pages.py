"""The floor page served at a page path (``/floor``) of a two-page app instead of at the root.

    python -m bench.page_latency --pages floor,floor_page

Every page of the app but its start page lives at a path like ``/classifier``. On a reload or a shared
link, Streamlit's front end first asks ``/<path>/_stcore/health`` (a 404: it probes whether the path
is a base URL) and asks ``/`` after a fixed retry delay. The root floor (``bench/floor_app.py``) never
pays that; this one does, and otherwise draws exactly the same text box and heatmap.
"""

import streamlit as st


def start() -> None:
    st.write("The floor page is at /floor.")


st.navigation(
    [st.Page(start, title="Start", default=True), st.Page("floor_app.py", title="Floor", url_path="floor")]
).run()
