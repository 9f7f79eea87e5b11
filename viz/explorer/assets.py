"""The explorer's browser code as the browser gets it: ``explorer.css``, and the ES modules under
``js/`` (entry ``js/main.js``) joined into one script.

Why joined, with no build step: Streamlit's components v2 (``st.components.v2.component(name, js=...)``)
takes the script as one inline string and imports it from a ``blob:`` URL, against which a relative
``import "./data.js"`` cannot resolve; a path instead of a string works only for components in an
installed package with an ``asset_dir`` manifest, which this app is not. The exported HTML file must
run from ``file://``, where browsers refuse to load one module file from another. So :func:`join_modules` writes
the modules out in dependency order, each once, dropping only their ``import`` lines and the
``export`` keyword of their declarations; the entry keeps its ``export default``. The modules stay
plain ES modules (each import names what the other exports, checked here) that a browser or Node
can also import as they are.
"""

from __future__ import annotations

import functools
import posixpath
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
JS = HERE / "js"
ENTRY = "main.js"

IMPORT = re.compile(r'import \{(?P<names>[\w$,\s]+)\} from "(?P<file>(?:\./|(?:\.\./)+)[\w/-]+\.js)";')
EXPORT = re.compile(r"^export (?=(?:async function|function|class|const|let) )")
DECLARED = re.compile(r"(?:export )?(?:async )?(?:function\*?|class|const|let|var) +([\w$]+)")
CONST = re.compile(r"(?:export )?(?:const|let) ")
MORE_CONSTS = re.compile(r",\s*([A-Za-z_$][\w$]*) = ")  # const A = 1, B = 2: the names after the first


def asset(name: str) -> str:
    """The text of a file beside this module (``explorer.css``) or under it (``js/data.js``)."""
    return (HERE / name).read_text(encoding="utf-8")


@functools.cache
def script() -> str:
    """The explorer's script: ``js/main.js`` and the modules it imports, joined (:func:`join_modules`)."""
    return join_modules(JS, ENTRY)


def join_modules(folder: Path, entry: str) -> str:
    """The ES module ``folder/entry`` and every module it imports, in dependency order (a module after
    those it imports), as one script: their ``import`` lines dropped and the ``export`` keyword taken
    off their declarations, except the entry's ``export default``. An import's path is relative to the
    importing module, as a browser reads it (``"./cells.js"``, ``"../explorer/js/svgnodes.js"``); each
    module is named by its path from ``folder`` and joined once.

    Raises ValueError for what would make the joined script differ from the modules: an import other
    than ``import { a, b } from "./file.js";`` (one line), a name imported that the module does not
    export, an import cycle, ``export default`` outside the entry, or one top-level name declared in
    two modules (the joined script has one scope)."""
    texts: dict[str, str] = {}
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise ValueError(f"import cycle: {' -> '.join([*visiting[visiting.index(name) :], name])}")
        visiting.append(name)
        text = texts[name] = (folder / name).read_text(encoding="utf-8")
        for line in text.splitlines():
            if line.startswith("import"):
                m = IMPORT.fullmatch(line.strip())
                if m is None:
                    raise ValueError(f'{name}: write imports as import {{ a, b }} from "./file.js"; not {line!r}')
                imported = posixpath.normpath(posixpath.join(posixpath.dirname(name), m["file"]))
                visit(imported)
                missing = {n.strip() for n in m["names"].split(",")} - _exported(texts[imported])
                if missing:
                    raise ValueError(f"{name} imports {sorted(missing)} from {imported}, which does not export them")
            elif line.startswith("export default") and name != entry:
                raise ValueError(f"{name}: only the entry ({entry}) may have an export default")
        visiting.pop()
        order.append(name)

    visit(entry)
    seen: dict[str, str] = {}
    for name in order:
        for declared, _ in _declarations(texts[name]):
            if declared in seen:
                raise ValueError(f"{declared} is declared in both {seen[declared]} and {name}: rename one")
            seen[declared] = name
    parts = []
    for name in order:
        lines = [EXPORT.sub("", line, count=1) for line in texts[name].splitlines() if not line.startswith("import")]
        parts.append(f"// ---- {name}\n" + "\n".join(lines).strip("\n") + "\n")
    return "\n".join(parts)


def _declarations(text: str) -> list[tuple[str, bool]]:
    """The names a module declares at its top level (lines that start in column 0), each with whether
    it is exported."""
    out = []
    for line in text.splitlines():
        m = DECLARED.match(line)
        if m:
            names = [m[1]]
            if CONST.match(line):
                names += MORE_CONSTS.findall(line.split(";")[0])
            out += [(n, line.startswith("export ")) for n in names]
    return out


def _exported(text: str) -> set[str]:
    return {name for name, exported in _declarations(text) if exported}
