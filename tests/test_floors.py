"""The package's floors, read from the imports themselves: ``model/`` imports only downward, and the
room store is a service that never loads the ML stack (STYLE.md 22)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# model's floors, bottom first: a module may import its own floor and the floors below it. The Hugging Face
# models (hub) sit on the analysis they feed (contributions, the head finder's readers); the command line on
# everything; recipes/ holds data only (each shipped model's stages, read by model.training.replay)
FLOORS = {
    "nets": 0,
    "zoo": 0,  # our models, one module each: a description, a network, a recipe file, examples (data only)
    "core": 1,
    "analysis": 2,
    "training": 2,
    "recipes": 2,
    "hub": 3,
    "lessons": 3,
    "cli": 4,
    "__main__": 5,
}
COMMAND_LINE = ("cli", "__main__")  # argparse lives here only


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it: at the top, or inside a function (a lazy import is an
    import all the same). Absolute imports; the project uses no relative ones."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def folder(path: Path) -> str:
    """The floor a file of model/ is on: its folder under model/, or ``__main__``."""
    return "__main__" if path.name == "__main__.py" else path.relative_to(ROOT / "model").parts[0]


def floor_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "model" or len(parts) < 2:
        return None
    return FLOORS[parts[1]]


MODEL_FILES = sorted(p for p in (ROOT / "model").rglob("*.py") if p.name != "__init__.py" or p.parent.name != "model")


@pytest.mark.parametrize("path", MODEL_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_model_imports_only_downward(path: Path):
    here = FLOORS[folder(path)]
    up = sorted(m for m in imports(path) if (f := floor_of(m)) is not None and f > here)
    assert not up, f"{path.relative_to(ROOT)} (floor {here}) imports upward: {up}"
    outside = sorted(m for m in imports(path) if m.split(".")[0] in {"streamlit", "plotly", "viz", "pages", "argparse"})
    if folder(path) in COMMAND_LINE:
        outside = [m for m in outside if m != "argparse"]
    assert not outside, f"{path.relative_to(ROOT)} imports {outside}"


def test_the_floors_are_every_folder_of_model():
    folders = {p.name for p in (ROOT / "model").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert folders == set(FLOORS) - {"__main__"}


def test_the_walk_finds_an_upward_import(tmp_path: Path):
    """The check above is not vacuous: an import from a higher floor is seen as one."""
    f = tmp_path / "x.py"
    f.write_text("from model.analysis.runs import run\nimport model.lessons.workshop\n")
    assert {floor_of(m) for m in imports(f)} == {2, 3}


def folder_graph(files: list[Path]) -> dict[str, set[str]]:
    """Which folders of model/ each folder imports (every import, lazy ones too)."""
    graph: dict[str, set[str]] = {}
    for path in files:
        here = folder(path)
        for m in imports(path):
            parts = m.split(".")
            if parts[0] == "model" and len(parts) > 1 and parts[1] != here:
                graph.setdefault(here, set()).add(parts[1])
    return graph


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import loop between folders, each as the path that closes it."""
    found, done = [], set()

    def visit(node: str, path: list[str]) -> None:
        if node in path:
            found.append(path[path.index(node) :] + [node])
            return
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    return found


def test_no_import_loop_between_folders():
    """Two folders on one floor may import each other's modules as far as the floors go; a loop between them
    (analysis -> hub -> analysis, one side lazily) is still a loop."""
    assert loops(folder_graph(MODEL_FILES)) == []


def test_the_walk_sees_a_lazy_import_and_the_loop_it_closes(tmp_path: Path):
    """The checks above are not vacuous: an import inside a function is seen, and so is the loop it closes."""
    lazy = tmp_path / "x.py"
    lazy.write_text("def reader():\n    from model.hub.run import run\n    return run\n")
    assert imports(lazy) == {"model.hub.run"}
    assert loops({"analysis": {"core", "hub"}, "hub": {"analysis"}, "core": set()}) == [["analysis", "hub", "analysis"]]
