"""Contributions are assembled once: our models and Hugging Face models each fill a
:class:`~model.analysis.contributions.Sources` and hand it to the one :func:`~model.analysis.contributions.assemble`;
neither family builds an :class:`~model.analysis.contributions.Attribution` itself, and neither imports
another module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import model.analysis.contributions as contributions
from model.analysis.contributions import Attribution

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = {"ours": ROOT / "model/analysis/attribute.py", "hub": ROOT / "model/hub/attribute.py"}


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def called_names(node: ast.AST) -> set[str]:
    """The plain names called anywhere under ``node`` (``f(...)``, not ``x.f(...)``)."""
    return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_delegates_to_the_one_assembly(family: str) -> None:
    module = tree(FAMILIES[family])
    imported = {
        (node.module, a.name) for node in ast.walk(module) if isinstance(node, ast.ImportFrom) for a in node.names
    }
    assert ("model.analysis.contributions", "assemble") in imported
    private = sorted(f"{m}.{n}" for m, n in imported if m and m.startswith("model.") and n.startswith("_"))
    assert not private, f"{family} imports private names of other modules: {private}"
    attribute = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "attribute")
    assert "assemble" in called_names(attribute)
    assert "Attribution" not in called_names(module), f"{family} builds its Attribution itself"


def test_both_families_results_come_out_of_assemble(checkpoints, tmp_path, monkeypatch) -> None:
    """At run time: the record each family returns is the one ``assemble`` built (it alone calls
    ``Attribution`` in the shared module, which is watched here)."""
    from fixtures.hub_tiny import save_gpt2
    from model.analysis.attribute import attribute
    from model.core.checkpoint import load_checkpoint
    from model.hub.attribute import attribute as hub_attribute
    from model.hub.load import load
    from model.hub.run import run

    built: list[Attribution] = []

    def watched(**fields) -> Attribution:
        built.append(Attribution(**fields))
        return built[-1]

    monkeypatch.setattr(contributions, "Attribution", watched)
    ck = load_checkpoint(checkpoints / "classifier", task="classifier")
    ours = attribute(ck, {"ids": ck.vocabs["words"].encode("the plot is thin".split())}, "encoder", 1)
    hub = load(str(save_gpt2(tmp_path / "gpt2")))
    theirs = hub_attribute(hub, run(hub, "the cat sat on the mat .", generate=2).result, "decoder", 2)
    assert len(built) == 2 and built[0] is ours and built[1] is theirs
    assert ours.model == "classifier" and theirs.model == hub.source
