"""The app's pages (run by app.py's st.navigation) and what they share (ui/shared/).

The folder is not called ``pages/``: Streamlit serves a ``pages/`` folder beside the entry file in
its legacy multipage mode until ``st.navigation`` has run once, so a direct link on a fresh server
would run a page without the router. Under this name nothing needs switching off.
"""
