"""The matrix view's browser code, read as the inline strings Streamlit's components v2 takes:
``matrixview.css``, and the view's script: the ES module ``matrixview.js`` (the entry) with the modules it
imports (``cells.js``, ``svg.js``) joined in, as the explorer's are (:func:`viz.explorer.assets.join_modules`
says why one script, with no build step)."""

from __future__ import annotations

import functools
from pathlib import Path

from viz.explorer.assets import join_modules

HERE = Path(__file__).resolve().parent
ENTRY = "matrixview.js"


def asset(name: str) -> str:
    """``matrixview.js``: the view's whole script (:func:`script`); any other name: the text of that file
    beside this module (``matrixview.css``)."""
    return script() if name == ENTRY else (HERE / name).read_text(encoding="utf-8")


@functools.cache
def script() -> str:
    """``matrixview.js`` and the modules it imports, joined into one script."""
    return join_modules(HERE, ENTRY)
