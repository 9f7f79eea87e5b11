"""The standalone HTML export: plotly.js inline exactly once (works offline), no CDN or remote
script, every figure present in order, title and notes escaped."""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from viz.attention import attention_heatmap
from viz.export import figures_to_html

BUNDLE = get_plotlyjs()
PLOTLY_CALL = re.compile(r'Plotly\.newPlot\(\s*"(figure-\d+)"')


def bar(name: str) -> go.Figure:
    return go.Figure(go.Bar(x=[name], y=[1.0]), layout=dict(title=dict(text=name)))


@pytest.fixture(scope="module")
def page() -> str:
    figs = [bar("first"), attention_heatmap([[0.25, 0.75], [1.0, 0.0]], ["a", "b"]), bar("third")]
    return figures_to_html(figs, "Ablation of <b>heads</b> & more", notes="line one\n<script>alert(1)</script>")


def test_plotly_js_is_inline_exactly_once(page):
    assert page.count(BUNDLE) == 1
    assert page.index(BUNDLE) < page.index('id="figure-0"')


def test_no_cdn_and_no_remote_scripts(page):
    rest = page.replace(BUNDLE, "")  # the bundle itself names a CDN only as the default for geo maps
    assert "cdn.plot.ly" not in rest
    assert not re.search(r"<script[^>]*\bsrc\s*=", rest, flags=re.I)
    assert "http://" not in rest and "https://" not in rest


def test_every_figure_in_order(page):
    assert PLOTLY_CALL.findall(page) == ["figure-0", "figure-1", "figure-2"]
    assert page.count('class="plotly-graph-div"') == 3
    assert page.index('"text":"first"') < page.index('"text":"third"')
    assert "query (row)" in page and "key (column)" in page


def test_title_and_notes_are_escaped(page):
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Ablation of &lt;b&gt;heads&lt;/b&gt; &amp; more</title>" in page
    assert "<h1>Ablation of &lt;b&gt;heads&lt;/b&gt; &amp; more</h1>" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>heads" not in page and "<script>alert" not in page


def test_figure_text_cannot_close_its_script():
    evil = "</script><script>alert(1)</script>"
    page = figures_to_html([bar(evil)], "x")
    assert "<script>alert" not in page.replace(BUNDLE, "")
    spec = page.split('"figure-0",', 1)[1].lstrip()
    data, _ = json.JSONDecoder().raw_decode(spec)
    assert data[0]["x"] == [evil]  # the text survives, as data


def test_one_figure_and_no_notes():
    page = figures_to_html([bar("only")], "")
    assert page.count(BUNDLE) == 1 and page.count('class="plotly-graph-div"') == 1
    assert 'class="notes"' not in page and "<title>Attention Explorer</title>" in page


@pytest.mark.parametrize("figs, message", [([], "no figures"), (["not a figure"], "not a plotly Figure")])
def test_bad_input(figs, message):
    with pytest.raises(ValueError, match=message):
        figures_to_html(figs, "title")


def test_exported_axes_make_room_for_their_titles(page):
    """The app's margins come from estimated label widths; the file is drawn in the browser's own
    fonts, so its axes measure their labels (otherwise the y-axis title was cut off)."""
    heatmap = re.search(r'Plotly\.newPlot\(\s*"figure-1",\s*(\[.*?\]),\s*(\{.*?\}),\s*\{"displaylogo"', page, re.S)
    layout = json.loads(heatmap.group(2))
    assert layout["yaxis"]["automargin"] is True and layout["xaxis"]["automargin"] is True
