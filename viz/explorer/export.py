"""The explorer as one standalone HTML file: the same script and style as in the app, with one run's
data inlined (weights as base64). It needs no server and no network: it works from ``file://``."""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Mapping
from typing import Any

from viz.explorer.assets import asset, script


def script_json(value: Any) -> str:
    """JSON that is safe inside an HTML ``<script>`` element: ``<``, ``>``, ``&`` and the line
    separators U+2028/2029 are written as ``\\u`` escapes, so no token can close the script."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text


def explorer_html(payload: Mapping[str, Any], title: str = "") -> str:
    """One standalone HTML document: the explorer with ``payload`` inlined (weights as base64). It
    needs no server and no network (``file://`` works); every view, hover and key works, the
    click-to-explain needs the app, and the file says so."""
    header = {k: v for k, v in payload.items() if k != "weights"}
    data = {**header, "weights_b64": base64.b64encode(payload["weights"]).decode("ascii"), "standalone": True}
    safe_title = html.escape(title or payload.get("title") or "Attention explorer", quote=True)
    js = script().replace("</", "<\\/")  # the script is ours, but never let it end early
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Attention Explorer">\n'
        f"<title>{safe_title}</title>\n"
        f"<style>{STANDALONE_CSS}\n{asset('explorer.css')}</style>\n</head>\n<body>\n"
        f"<h1>{safe_title}</h1>\n"
        '<p class="note">Hover any cell or token; the keyboard works once the explorer has focus (click it): '
        "arrow keys move the cell, [ and ] change head, Page Up / Page Down change layer. Explaining a "
        "weight (a click or Enter) needs the app: this file has the weights, not the model.</p>\n"
        '<div id="explorer-host"></div>\n'
        f'<script type="application/json" id="explorer-data">{script_json(data)}</script>\n'
        f'<script type="module">\n{js}\nmountStandalone(document.getElementById("explorer-host"), '
        'JSON.parse(document.getElementById("explorer-data").textContent));\n</script>\n'
        "</body>\n</html>\n"
    )


STANDALONE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #31333f; background: #fff; }
@media (prefers-color-scheme: dark) { body { color: #fafafa; background: #0e1117; } }
h1 { font-size: 1.6rem; }
.note { color: #777; font-size: 0.9rem; line-height: 1.4; }
"""
