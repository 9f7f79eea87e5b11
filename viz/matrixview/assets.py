"""The matrix view's browser code: ``matrixview.js`` (one plain ES module, the component's whole
script) and ``matrixview.css``, read as the inline strings Streamlit's components v2 takes."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def asset(name: str) -> str:
    """The text of ``matrixview.js`` or ``matrixview.css`` beside this module."""
    return (HERE / name).read_text(encoding="utf-8")
