"""Docstrings and comments name the ideas they follow (Raschka's worked example, Bloem's "Transformers
from scratch", the seq2seq tutorial's translator, a Keras layer), not the numbered seed notebooks,
which are not in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = re.compile(r"\bseeds? 0+[0-4]\b")  # a notebook's number; seed=123 arguments do not match


def test_no_python_file_cites_a_seed_notebook():
    cited = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for folder in ("app.py", "model", "pages", "viz", "bench", "tests")
        for path in ([ROOT / folder] if folder.endswith(".py") else sorted((ROOT / folder).rglob("*.py")))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NOTEBOOK.search(line)
    ]
    assert not cited, "\n".join(cited)
