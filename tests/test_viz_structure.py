"""The viz package has one heatmap API and one label helper, and no module reaches into another's
private names: what several figure modules share is public in viz/common.py."""

from __future__ import annotations

import ast
from pathlib import Path

VIZ = Path(__file__).resolve().parent.parent / "viz"


def modules() -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text()) for p in VIZ.glob("*.py")}


def test_one_attention_heatmap_and_one_label_helper():
    defined: dict[str, list[str]] = {}
    for name, tree in modules().items():
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.Assign):
                names = (
                    [node.name] if isinstance(node, ast.FunctionDef) else [getattr(t, "id", "") for t in node.targets]
                )
                for n in names:
                    defined.setdefault(n, []).append(name)
    for shared in ("attention_heatmap", "plot_labels", "DIVERGING", "escape"):
        assert len(defined.get(shared, [])) == 1, f"{shared} is defined in {defined.get(shared)}"
    assert defined["plot_labels"] == ["common.py"] and defined["DIVERGING"] == ["common.py"]


def test_no_module_imports_another_modules_private_names():
    private = [
        f"{name} imports {alias.name} from {node.module}"
        for name, tree in modules().items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("viz")
        for alias in node.names
        if alias.name.startswith("_")
    ]
    assert not private, private
