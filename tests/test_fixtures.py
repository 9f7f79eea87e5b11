"""fixtures/ is what tests/ and bench/ both import, so it imports neither of them: no cycle, and a
benchmark runs without the test suite."""

from __future__ import annotations

import ast
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def imported_packages(path: Path) -> set[str]:
    """The top-level packages ``path`` imports (absolute imports, at any depth in the module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def test_fixtures_import_neither_tests_nor_bench() -> None:
    modules = sorted(FIXTURES.glob("*.py"))
    assert len(modules) > 1
    found = {p.name: sorted(imported_packages(p) & {"tests", "bench"}) for p in modules}
    assert not any(found.values()), found


def test_tests_and_bench_import_neither_each_other() -> None:
    """tests/ checks the product and bench/ measures it; what both need is in fixtures/. bench's own
    smoke tests live in bench/tests/, so neither folder imports the other."""
    root = FIXTURES.parent
    tests = {
        p.relative_to(root).as_posix(): "bench"
        for p in (root / "tests").rglob("*.py")
        if "bench" in imported_packages(p)
    }
    bench = {
        p.relative_to(root).as_posix(): "tests"
        for p in (root / "bench").rglob("*.py")
        if "tests" in imported_packages(p)
    }
    assert len(list((root / "bench" / "tests").glob("test_*.py"))) >= 2
    assert not tests and not bench, (tests, bench)
