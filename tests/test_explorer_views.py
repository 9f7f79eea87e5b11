"""The explorer's views are named in one place on each side: ``viz/explorer/js/views.js`` (the registry)
and each view's own module, which declares its key, in the browser; ``viz/explorer/views.py`` on the
server. Nothing else compares a view's name, looks something up by it or relies on where a view sits in
the list; the tabs, the fallbacks and the URL follow the registry whatever its order."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import viz.explorer.views as views
from model.core.results import attention_kind
from viz.explorer import VIEWS, clamp_state
from viz.explorer.views import REGISTRY, view_for

ROOT = Path(__file__).resolve().parents[1]
JS_REGISTRY = ("views.js",)
PY_REGISTRY = ("viz/explorer/views.py",)
NAMES = ("heatmap", "lines", "grid", "mean", "rollout")

COMMENT = re.compile(r"(^|\s)//.*$")
LITERAL = re.compile(r"""(["'`])(\w+)\1""")
COMPARED = re.compile(r"""(===|!==|==|!=|\bcase)\s*$""")
COMPARES = re.compile(r"""^\s*(===|!==|==|!=)""")
LOOKED_UP = re.compile(r"\}\s*\[\s*[\w.]*\bview\s*\]")  # { mean: ..., rollout: ... }[s.view]
SLICED = re.compile(r"\bVIEWS\s*(\.slice\(|\[)")  # a view found by its place in the list


def js_view_names(folder: Path) -> list[str]:
    """Where the explorer's JS names a view outside the registry: a comparison with a view's name, an
    object looked up by the view, the list of views taken by position, or a view's name in any module
    but the one that declares that view (``key: "name"``)."""
    found = []
    for path in sorted(folder.glob("*.js")):
        if path.name in JS_REGISTRY:
            continue
        lines = [COMMENT.sub("", line) for line in path.read_text(encoding="utf-8").splitlines()]
        declared = set(re.findall(r"""\bkey:\s*["'](\w+)["']""", "\n".join(lines)))
        for n, line in enumerate(lines, 1):
            where = f"{path.name}:{n}: {line.strip()}"
            for m in LITERAL.finditer(line):
                if m[2] not in NAMES:
                    continue
                if COMPARED.search(line[: m.start()]) or COMPARES.match(line[m.end() :]):
                    found.append(f"{where} (compares {m[2]!r})")
                elif m[2] not in declared:
                    found.append(f"{where} (names {m[2]!r}, a view another module declares)")
            if LOOKED_UP.search(line):
                found.append(f"{where} (looks up by the view)")
            if SLICED.search(line):
                found.append(f"{where} (takes views by position)")
    return found


def py_view_names(paths: list[Path]) -> list[str]:
    """Where the explorer's Python compares a view's name (==, !=, in), looks up a dict by view names or
    takes the list of views by position, outside the registry."""

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in NAMES
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Compare) and any(named(x) for x in [node.left, *node.comparators]):
                found.append(f"{where} (compares a view's name)")
            elif isinstance(node, ast.Subscript):
                if isinstance(node.value, ast.Dict) and any(named(k) for k in node.value.keys if k is not None):
                    found.append(f"{where} (looks up by a view's name)")
                if isinstance(node.value, ast.Name) and node.value.id == "VIEWS":
                    found.append(f"{where} (takes views by position)")
            elif isinstance(node, ast.MatchValue) and named(node.value):
                found.append(f"{where} (matches a view's name)")
    return found


def explorer_python(root: Path) -> list[Path]:
    paths = [
        *sorted((root / "viz/explorer").glob("*.py")),
        root / "pages/shared/explorer.py",
        root / "pages/shared/views.py",
    ]
    return [p for p in paths if p.is_file() and str(p.relative_to(root)) not in PY_REGISTRY]


def test_the_explorer_js_names_no_view_outside_its_registry() -> None:
    assert js_view_names(ROOT / "viz/explorer/js") == []


def test_the_explorer_python_compares_no_view_name_outside_its_registry() -> None:
    assert py_view_names(explorer_python(ROOT)) == []


def test_the_checks_catch_what_they_look_for(tmp_path) -> None:
    (tmp_path / "chrome.js").write_text(
        'const lines = s.view === "lines";\n'
        'const what = { mean: "m", rollout: "r" }[s.view] || "";\n'
        "const views = ex.rollout ? VIEWS : VIEWS.slice(0, -1);\n"
        'if ("grid" !== v) go({ view: "heatmap" });  // "mean" in a comment is fine\n'
    )
    (tmp_path / "grid.js").write_text('export const gridView = { key: "grid", pane: "grid" };\n')
    assert len(js_view_names(tmp_path)) == 5
    (tmp_path / "state.py").write_text(
        'views = VIEWS if rollout_of else VIEWS[:-1]\nif view == "rollout" and kind != rollout_of:\n    view = "mean"\n'
        'ok = view in ("heatmap", "lines")\nwhat = {"mean": 1}[view]\nheader = payload["rollout"]\n'
    )
    assert len(py_view_names([tmp_path / "state.py"])) == 4


def test_the_python_registry_answers_as_before() -> None:
    assert VIEWS == ("heatmap", "lines", "grid", "mean", "rollout")
    assert [view_for(v, "encoder") for v in ("lines", "rollout", "nope", None, ["grid"])] == [
        "lines",
        "heatmap",
        "heatmap",
        "heatmap",
        "heatmap",
    ]
    assert view_for("rollout", "encoder", "encoder") == "rollout" and view_for("rollout", "cross", "encoder") == "mean"
    assert {v.key for v in REGISTRY} == set(VIEWS)


def test_the_python_registry_works_in_any_order(monkeypatch) -> None:
    monkeypatch.setattr(views, "REGISTRY", tuple(reversed(views.REGISTRY)))  # rollout first
    assert [view_for(v, "encoder") for v in ("rollout", "nope", "grid")] == ["mean", "mean", "grid"]
    assert [view_for(v, "encoder", "encoder") for v in ("rollout", "nope")] == ["rollout", "rollout"]
    assert view_for("rollout", "cross", "encoder") == "mean"
    kinds = [attention_kind("encoder", np.zeros((1, 1, 2, 2)), ["a", "b"], ["a", "b"])]
    assert clamp_state(kinds, {"view": "lines"})["view"] == "lines"


# ---- the browser's registry, run in Node where there is one ------------------------------------------

NODE = shutil.which("node")
PROBE = """
import { VIEWS, listedViews, viewFor, paneNames } from "%s";
const answer = (ex) => ({
  tabs: listedViews(ex).map((v) => v.key),
  rollout: viewFor(ex, "rollout", "cross").key,
  unknown: viewFor(ex, "nope", "encoder").key,
});
const none = { rollout: null }, some = { rollout: { kind: "encoder" } };
const before = { keys: VIEWS.map((v) => v.key), panes: paneNames(), none: answer(none), some: answer(some) };
VIEWS.reverse();  // the same views in another order: the tabs follow it, the answers stay
const after = { none: answer(none), some: answer(some) };
console.log(JSON.stringify({ before, after }));
"""


@pytest.mark.skipif(NODE is None, reason="no Node to run the browser's modules")
def test_the_browser_registry_builds_the_tabs_in_any_order(tmp_path) -> None:
    probe = tmp_path / "probe.mjs"
    probe.write_text(PROBE % (ROOT / "viz/explorer/js/views.js").as_uri())
    out = json.loads(subprocess.run([NODE, str(probe)], capture_output=True, text=True, check=True, timeout=60).stdout)
    before, after = out["before"], out["after"]
    assert before["keys"] == list(VIEWS)  # the browser's registry and the server's agree
    assert before["panes"] == ["heat", "lines", "grid"]
    assert before["none"] == {"tabs": list(VIEWS[:4]), "rollout": "heatmap", "unknown": "heatmap"}
    assert before["some"] == {"tabs": list(VIEWS), "rollout": "mean", "unknown": "heatmap"}
    # rollout first: a run without one still has every other tab, and falls back to the first it has
    assert after["none"] == {"tabs": list(reversed(VIEWS[:4])), "rollout": "mean", "unknown": "mean"}
    assert after["some"] == {"tabs": list(reversed(VIEWS)), "rollout": "mean", "unknown": "rollout"}


def test_a_view_keeps_its_state_in_its_own_module() -> None:
    """The views' modules (each declares ``key:``) and the registry create nothing on the explorer
    object: what a view keeps (its caches, the lines' heads, the grid's peek) is its module's own
    (view.js: ownState). The check fails on ex.lines = ..., ex.thumbs || (ex.thumbs = ...)."""
    js = ROOT / "viz/explorer/js"
    modules = [p for p in js.glob("*.js") if re.search(r"""\bkey:\s*["']""", p.read_text(encoding="utf-8"))]
    assert {p.name for p in modules} >= {"heatmap.js", "lines.js", "grid.js", "mean.js", "rollout.js"}
    found = []
    for path in [*modules, js / "views.js", js / "view.js", js / "state.js"]:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bex\.\w+\s*=[^=]", COMMENT.sub("", line)):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []
