"""The app's pages (run by app.py's st.navigation) and what they share (ui/shared/).

Every page has one shape: module-level functions, then a single ``main()`` call as its last line.
``main()`` writes the title and introduction; a page with controls draws them in ``options()``, which
returns what they chose as one immutable value (a frozen ``Options`` record; the model's
:class:`~model.core.specs.ModelSpec` or the question number where that is the only choice), and
``body(...)`` draws what depends on it. Functions rather than top-level statements: a page's values then
travel as arguments, never as module globals that helpers read behind the reader's back (a fragment
reruns with the arguments it was given), and a page that has nothing more to show returns instead of
calling ``st.stop()``. A widget bound to the URL is drawn and read in one call
(``ui.shared.state.url_widget`` and the pickers beside it); the prefixes of a page's URL keys stand
beside its ``st.Page`` in app.py.

The folder is not called ``pages/``: Streamlit serves a ``pages/`` folder beside the entry file in
its legacy multipage mode until ``st.navigation`` has run once, so a direct link on a fresh server
would run a page without the router. Under this name nothing needs switching off.
"""
