"""A whole view as one standalone HTML file: the figures stay interactive and it opens offline.

plotly.js is embedded once, inline, before the first figure (no CDN, no network), and the
title and notes are HTML-escaped. Text inside the figures is already safe: plotly writes the
figure JSON with ``<`` as ``\\u003c``, so no label can close the script that draws it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

CONFIG = {"displaylogo": False, "responsive": True, "toImageButtonOptions": {"format": "png", "scale": 2}}
STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; }
.notes { white-space: pre-wrap; line-height: 1.5; }
figure { margin: 2rem 0; }
footer { margin-top: 3rem; color: #666; font-size: 0.9rem; }
"""


def _fit_margins(fig: go.Figure) -> go.Figure:
    """A copy whose axes make room for their labels and titles. The app sets margins from estimated
    label widths (measuring costs a redraw on every rerun there); the exported page draws in the
    browser's own fonts, often wider, which cut the y-axis title off. A file is drawn once, so it
    can afford plotly's measuring."""
    out = go.Figure(fig)
    out.update_xaxes(automargin=True)
    out.update_yaxes(automargin=True)
    return out


def figures_to_html(figs: Sequence[go.Figure], title: str, notes: str = "") -> str:
    """One self-contained HTML document with ``figs`` in order under ``title`` and ``notes``.

    ``notes`` is plain text (line breaks kept); like ``title`` it is escaped, never read as markup.
    """
    if not figs:
        raise ValueError("there are no figures to export; pass at least one plotly figure")
    parts = []
    for i, fig in enumerate(figs):
        if not isinstance(fig, go.Figure):
            raise ValueError(f"item {i} is a {type(fig).__name__}, not a plotly Figure")
        div = _fit_margins(fig).to_html(
            full_html=False,
            include_plotlyjs=i == 0,  # the ~4.8 MB bundle once, inline; later figures reuse it
            include_mathjax=False,
            config=CONFIG,
            default_width="100%",
            div_id=f"figure-{i}",
        )
        parts.append(f'<figure aria-label="figure {i + 1}">{div}</figure>')
    safe_title = html.escape(title or "Attention Explorer", quote=True)
    notes_html = f'<p class="notes">{html.escape(notes, quote=True)}</p>\n' if notes else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="Attention Explorer">\n'
        f"<title>{safe_title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{safe_title}</h1>\n{notes_html}"
        + "\n".join(parts)
        + f"\n<footer>Exported from Attention Explorer: {len(parts)} interactive figure(s). plotly.js is "
        "embedded in this file, so it works offline.</footer>\n</body>\n</html>\n"
    )
