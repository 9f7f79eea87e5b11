"""The house's layout (issue 41): every page script in a section folder beside its own parts, and every
module of pages/shared used by two or more pages (directly or through other shared modules)."""

from __future__ import annotations

import ast
from pathlib import Path

from pages import PAGES

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / "pages" / "shared"


def imported(path: Path) -> set[str]:
    """The modules under ``pages`` that ``path`` imports (absolute imports only, as the project writes)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pages."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("pages."))
    return found


def reach(module: str, seen: set[str]) -> set[str]:
    """Every pages.* module ``module`` imports, transitively."""
    path = ROOT / (module.replace(".", "/") + ".py")
    if module in seen or not path.is_file():
        return seen
    seen.add(module)
    for m in imported(path):
        reach(m, seen)
    return seen


def test_every_shared_module_serves_two_or_more_pages():
    users: dict[str, set[str]] = {}
    for page in PAGES:
        for module in reach(page.script.removesuffix(".py").replace("/", "."), set()):
            users.setdefault(module, set()).add(page.address)
    lonely = {
        f"pages.shared.{p.stem}": sorted(users.get(f"pages.shared.{p.stem}", ()))
        for p in SHARED.glob("*.py")
        if p.stem != "__init__" and len(users.get(f"pages.shared.{p.stem}", ())) < 2
    }
    assert not lonely, f"shared modules used by fewer than two pages (move them beside their page): {lonely}"


def test_a_pages_own_parts_live_in_its_section():
    """A module beside the page scripts of a section is used only by that section's pages."""
    for section in {p.section for p in PAGES}:
        folder = ROOT / "pages" / section
        scripts = {p.address for p in PAGES if p.section == section}
        for part in folder.glob("*.py"):
            if part.stem in scripts or part.stem == "__init__":
                continue
            module = f"pages.{section}.{part.stem}"
            users = {p.section for p in PAGES if module in reach(p.script.removesuffix(".py").replace("/", "."), set())}
            assert users <= {section}, f"{module} is used by pages of {sorted(users)}: it belongs in pages/shared"
