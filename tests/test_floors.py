"""The package's floors, read from the imports themselves: ``model/`` imports only downward, and the
room store is a service that never loads the ML stack (STYLE.md 22)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# model's floors, bottom first: a module may import its own floor and the floors below it
FLOORS = {"nets": 0, "core": 1, "analysis": 2, "hub": 2, "training": 2, "lessons": 3, "__main__": 4}


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute imports; the project uses no relative ones)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "model" or len(parts) < 2:
        return None
    return FLOORS[parts[1]]


MODEL_FILES = sorted(p for p in (ROOT / "model").rglob("*.py") if p.name != "__init__.py" or p.parent.name != "model")


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_model_imports_only_downward(path: Path):
    here = FLOORS["__main__" if path.name == "__main__.py" else path.relative_to(ROOT / "model").parts[0]]
    up = sorted(m for m in imports(path) if (f := floor_of(m)) is not None and f > here)
    assert not up, f"{path.relative_to(ROOT)} (floor {here}) imports upward: {up}"
    outside = sorted(m for m in imports(path) if m.split(".")[0] in {"streamlit", "plotly", "viz", "pages", "argparse"})
    assert not outside or path.name == "__main__.py", f"{path.relative_to(ROOT)} imports {outside}"


def test_the_floors_are_every_folder_of_model():
    folders = {p.name for p in (ROOT / "model").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(FLOORS) - {"__main__"}


def test_the_walk_finds_an_upward_import(tmp_path: Path):
    """The check above is not vacuous: an import from a higher floor is seen as one."""
    f = tmp_path / "x.py"
    f.write_text("from model.analysis.runs import run\nimport model.lessons.workshop\n")
    assert {floor_of(m) for m in imports(f)} == {2, 3}
