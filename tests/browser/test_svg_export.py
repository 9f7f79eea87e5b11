"""Vector export (issue 36, item 9) in a real browser: the explorer's "SVG" button in each view
(heatmap, lines, grid, mean, rollout), in the app's harness and in the offline HTML file, and the
matrix view's, each download parsed as XML: the tokens are text (a markup token escaped, the whole
token in a <title> where the label is cut), one element per cell or line the screen draws, and a
known weight's colour the same as the screen's pixel."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import numpy as np
import pytest

from fixtures.explorer_runs import MARKUP, classifier_run, generator_run, rollout_of, translator_run
from fixtures.server import streamlit_server
from viz.common import HEAD_COLORS, WEIGHT_STOPS
from viz.explorer import display_token, explorer_html, explorer_payload
from viz.matrixview import asset as matrix_asset
from viz.matrixview import matrix_payload

from .conftest import ARTIFACTS, STARTUP_SECONDS
from .test_explorer import CANVAS, ROOT, TIMEOUT_S, fresh_page, layout, open_case, until
from .test_matrixview import view_titled
from .test_pages import wait_until_idle

SVG = "{http://www.w3.org/2000/svg}"
MAX_LABEL = 14  # data.js: characters of a token on an axis


@pytest.fixture(scope="module")
def harness_url() -> Iterator[str]:
    ARTIFACTS.mkdir(exist_ok=True)
    with streamlit_server(
        app="tests/browser/explorer_app.py", log_path=ARTIFACTS / "svg-harness.log", startup_seconds=STARTUP_SECONDS
    ) as server:
        yield server.url


@pytest.fixture
def spage(browser) -> Iterator[object]:
    with fresh_page(browser, viewport={"width": 1300, "height": 1100}, accept_downloads=True) as page:
        yield page


def short(label: str) -> str:
    """An axis label as data.js cuts it."""
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def download(page, button) -> tuple[str, str, ET.Element]:
    """Click ``button``; the download's file name, its text and its parsed root (which must be XML)."""
    with page.expect_download(timeout=TIMEOUT_S * 1000) as info:
        button.click()
    text = open(info.value.path(), encoding="utf-8").read()
    return info.value.suggested_filename, text, ET.fromstring(text.encode("utf-8"))


def export_explorer(page) -> tuple[str, str, ET.Element]:
    return download(page, page.locator(ROOT).get_by_role("button", name="Download this view as SVG"))


def group(svg: ET.Element, **attr: str) -> ET.Element:
    """The first <g> whose attributes include ``attr`` (data_map -> data-map)."""
    want = {k.replace("_", "-"): v for k, v in attr.items()}
    for g in svg.iter(f"{SVG}g"):
        if all(g.get(k) == v for k, v in want.items()):
            return g
    raise AssertionError(f"no <g> with {want}")


def texts(g: ET.Element) -> list[str]:
    return [t.text for t in g.iter(f"{SVG}text")]


def pixel(page, x: float, y: float) -> str:
    """The shown map canvas's colour at (x, y) as #rrggbb."""
    rgb = (
        page.locator(ROOT)
        .locator(CANVAS)
        .evaluate(f"c => Array.from(c.getContext('2d').getImageData({x}, {y}, 1, 1).data.slice(0, 3))")
    )
    return "#" + "".join(f"{v:02x}" for v in rgb)


def cell(svg: ET.Element, q: int, k: int) -> ET.Element:
    return next(r for r in svg.iter(f"{SVG}rect") if r.get("data-q") == str(q) and r.get("data-k") == str(k))


def check_heat_cells(page, svg: ET.Element, n_q: int, n_k: int, known: tuple[int, int], weight: float) -> None:
    """One <rect> per cell; the known cell carries its weight and is the screen's colour."""
    maps = [g for g in svg.iter(f"{SVG}g") if g.get("data-map")]
    assert len(maps) == 1 and len(maps[0].findall(f"{SVG}rect")) == n_q * n_k
    lay = layout(page, "heat")
    q, k = known
    rect = cell(svg, q, k)
    assert float(rect.get("data-w")) == pytest.approx(weight, rel=1e-5)
    assert rect.get("fill") == pixel(page, lay["x0"] + (k + 0.5) * lay["c"], lay["y0"] + (q + 0.5) * lay["c"])


def check_tokens(text: str, svg: ET.Element, queries: list[str], keys: list[str]) -> None:
    """The axis labels are the tokens as text, as the screen cuts them, markup escaped in the file."""
    shown_q, shown_k = [display_token(t) for t in queries], [display_token(t) for t in keys]
    assert texts(group(svg, data_axis="query")) == [short(t) for t in shown_q]
    assert texts(group(svg, data_axis="key")) == [short(t) for t in shown_k]
    titles = [t.text for t in group(svg, data_axis="key").iter(f"{SVG}title")]
    assert titles == [t for t in shown_k if short(t) != t]  # the whole token where the label cuts it
    assert "&lt;img src=x" in text and "<img" not in text and "<script" not in text


def test_heatmap_and_mean_export_as_svg(spage, harness_url: str) -> None:
    kinds = translator_run(src=8, tgt=8)  # what the harness shows
    root = open_case(spage, harness_url)
    root.focus()
    spage.keyboard.press("]")  # layer 0, head 1
    until(spage, lambda s: s["head"] == 1)
    name, text, svg = export_explorer(spage)
    assert name == "harness-translator-encoder-heatmap-layer0-head1.svg"
    assert svg.tag == f"{SVG}svg" and (svg.get("data-view"), svg.get("data-head")) == ("heatmap", "1")
    enc = kinds[0]
    check_tokens(text, svg, enc.queries, enc.keys)
    check_heat_cells(spage, svg, 8, 8, (2, 5), float(enc.weights[0, 1, 2, 5]))
    assert "Encoder self-attention · L0 H1 · heatmap" in texts(svg)  # the caption
    stops = [s.get("stop-color") for s in svg.iter(f"{SVG}stop")]
    assert stops == list(WEIGHT_STOPS)  # the colour scale, as a gradient of the one scale's stops

    root.get_by_role("button", name="Decoder self-attention").click()
    root.get_by_role("button", name="mean", exact=True).click()
    until(spage, lambda s: (s["kind"], s["view"]) == ("decoder", "mean"))
    name, text, svg = export_explorer(spage)
    dec = kinds[1]
    assert name.endswith("-decoder-mean-layer0.svg")
    check_tokens(text, svg, dec.queries, dec.keys)
    check_heat_cells(spage, svg, 8, 8, (5, 2), float(dec.weights[0, :, 5, 2].mean()))
    assert cell(svg, 1, 6).get("fill") == "url(#ae-hatch)"  # above the diagonal: masked, hatched
    assert "hatched: masked, the model cannot attend there" in texts(svg)
    assert spage.dialogs == []


def test_lines_and_grid_export_as_svg(spage, harness_url: str) -> None:
    kinds = translator_run(src=8, tgt=8)
    root = open_case(spage, harness_url)
    root.get_by_role("button", name="Cross-attention").click()
    root.get_by_role("button", name="lines", exact=True).click()
    until(spage, lambda s: (s["kind"], s["view"]) == ("cross", "lines"))
    root.get_by_role("button", name="head 2").click()  # heads 0 and 2 as lines
    until(spage, lambda s: s["heads_shown"] == [0, 2])
    layout(spage, "lines")
    spage.mouse.move(0, 0)
    _, text, svg = export_explorer(spage)
    cross = kinds[2]
    assert texts(group(svg, data_axis="query")) == [short(display_token(t)) for t in cross.queries]
    assert texts(group(svg, data_axis="key")) == [short(display_token(t)) for t in cross.keys]
    lines = list(group(svg, data_lines="").iter(f"{SVG}line"))
    expected = []  # the lines lines.js draws: weight / the map's largest >= 0.02, masked cells none
    for h in (0, 2):
        w = cross.weights[0, h].astype(np.float64)
        a = w * (1 / float(cross.weights[0, h].max()))
        expected += [(h, q, k) for q, k in zip(*np.nonzero(a >= 0.02), strict=True)]
    got = [(int(x.get("data-head")), int(x.get("data-q")), int(x.get("data-k"))) for x in lines]
    assert sorted(got) == sorted(expected)
    assert {x.get("stroke").lower() for x in lines if x.get("data-head") == "2"} == {HEAD_COLORS[2].lower()}
    assert texts(group(svg, data_swatches="")) == ["head 0", "head 2"]
    assert "&lt;img src=x" in text and "<img" not in text

    root.get_by_role("button", name="grid", exact=True).click()
    until(spage, lambda s: s["view"] == "grid")
    lay = layout(spage, "grid")
    name, _, svg = export_explorer(spage)
    assert name.endswith("-cross-grid.svg")
    thumbs = [g for g in svg.iter(f"{SVG}g") if g.get("data-map")]
    assert len(thumbs) == 2 * 3 and all(len(g.findall(f"{SVG}rect")) == 8 * 8 for g in thumbs)
    assert [t for t in texts(svg) if t.startswith(("head ", "layer "))] == [
        "head 0",
        "head 1",
        "head 2",
        "layer 0",
        "layer 1",
    ]
    # a thumbnail cell the screen draws over several pixels: same colour (each map on its own scale)
    step, size = lay["thumb"] + lay["gap"], lay["thumb"] / 8
    l, h, q, k = 1, 2, 3, 6
    thumb = next(g for g in thumbs if (g.get("data-layer"), g.get("data-head")) == (str(l), str(h)))
    rect = next(r for r in thumb.iter(f"{SVG}rect") if (r.get("data-q"), r.get("data-k")) == (str(q), str(k)))
    x, y = lay["x0"] + h * step + (k + 0.5) * size, lay["y0"] + l * step + (q + 0.5) * size
    assert rect.get("fill") == pixel(spage, x, y)


def test_rollout_exports_as_svg(spage, harness_url: str) -> None:
    kinds = classifier_run()
    rolled = rollout_of(kinds[0])
    root = open_case(spage, harness_url, "case=classifier")
    root.get_by_role("button", name="rollout", exact=True).click()
    until(spage, lambda s: s["view"] == "rollout")
    name, text, svg = export_explorer(spage)
    assert name.endswith("-encoder-rollout.svg")
    n = len(kinds[0].queries)
    check_tokens(text, svg, kinds[0].queries, kinds[0].keys)
    check_heat_cells(spage, svg, n, n, (3, 2), float(rolled[3, 2]))
    assert cell(svg, 0, n - 1).get("fill") == "url(#ae-hatch)"  # the padding key


def test_the_offline_file_exports_svg(spage, tmp_path) -> None:
    kinds = translator_run(src=8, tgt=8)
    path = tmp_path / "explorer.html"
    path.write_text(explorer_html(explorer_payload(kinds, title="Offline & <b>bold</b>")), encoding="utf-8")
    errors: list[str] = []
    spage.on("pageerror", lambda e: errors.append(str(e)))
    spage.goto(path.as_uri())
    until(spage, lambda s: s["view"] == "heatmap")
    name, text, svg = export_explorer(spage)
    assert name == "offline-b-bold-b-encoder-heatmap-layer0-head0.svg"
    assert svg.find(f"{SVG}title").text.startswith("Offline & <b>bold</b> · ")  # text in the file, not markup
    assert "Offline &amp; &lt;b&gt;bold" in text
    check_tokens(text, svg, kinds[0].queries, kinds[0].keys)
    check_heat_cells(spage, svg, 8, 8, (4, 1), float(kinds[0].weights[0, 0, 4, 1]))
    assert errors == [] and spage.dialogs == []


def test_a_map_too_big_for_a_rect_a_cell_goes_in_as_the_screens_image(spage, tmp_path) -> None:
    kinds = generator_run(n=260, layers=1, heads=2)  # 67,600 cells a map: over MAX_SVG_CELLS
    path = tmp_path / "big.html"
    path.write_text(explorer_html(explorer_payload(kinds, title="big")), encoding="utf-8")
    spage.goto(path.as_uri())
    until(spage, lambda s: s["view"] == "heatmap")
    lay = layout(spage, "heat")
    _, _, svg = export_explorer(spage)
    [m] = [g for g in svg.iter(f"{SVG}g") if g.get("data-map")]
    [image] = m.findall(f"{SVG}image")
    assert not m.findall(f"{SVG}rect") and image.get("href").startswith("data:image/png;base64,")
    assert float(image.get("width")) == 260 * lay["c"] and float(image.get("x")) == lay["x0"]
    labels = texts(group(svg, data_axis="query"))  # the labels stay text, as thinned as on the screen
    assert labels == [short(display_token(t)) for t in kinds[0].queries[:: lay["stride"]]]

    spage.locator(ROOT).get_by_role("button", name="grid", exact=True).click()
    until(spage, lambda s: s["view"] == "grid")
    layout(spage, "grid")
    _, _, svg = export_explorer(spage)
    thumbs = [g for g in svg.iter(f"{SVG}g") if g.get("data-map")]
    assert len(thumbs) == 2 and all(len(g.findall(f"{SVG}image")) == 1 for g in thumbs)


MOUNT_MATRIX = """async ([js, data]) => {
    const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));  // as Streamlit loads it
    const host = document.createElement("div");
    document.body.append(host);
    (await import(url)).default({ parentElement: host, data });
}"""


def test_matrix_view_exports_as_svg(spage, tmp_path) -> None:
    rows = ["0:a", f"1:{MARKUP}", "2:&amp;", "3:" + "x" * 40]
    cols = ["0:a", "1:<script>", "2:&", "3:b", "4:c"]
    values = np.random.default_rng(0).random((4, 5))
    values[2, 3] = np.nan  # a blank cell
    payload = matrix_payload(values, rows, cols, name="scores <ω>", row_title="query", col_title="key", marks=[(1, 2)])
    page_file = tmp_path / "host.html"
    page_file.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    spage.goto(page_file.as_uri())
    spage.evaluate(MOUNT_MATRIX, [matrix_asset("matrixview.js"), payload])
    view = spage.locator('[data-testid="matrix-view"]')
    name, text, svg = download(spage, view.get_by_role("button", name="Download this matrix as SVG"))
    assert name == "scores-4-5.svg"
    cells = [r for r in svg.iter(f"{SVG}rect") if r.get("data-i") is not None]
    assert len(cells) == 4 * 5
    assert texts(group(svg, data_axis="columns")) == cols
    row_texts = texts(group(svg, data_axis="rows"))
    cut = [full for shown, full in zip(row_texts, rows, strict=True) if shown != full]
    assert row_texts[0] == rows[0] and row_texts[2] == rows[2] and rows[3] in cut  # cut past 12em, as the table...
    assert all(
        shown == full or (shown[-1] == "…" and full.startswith(shown[:-1])) for shown, full in zip(row_texts, rows)
    )
    assert [t.text for t in group(svg, data_axis="rows").iter(f"{SVG}title")] == cut  # ...and whole in a <title>
    assert "1:&lt;script&gt;" in text and "2:&amp;amp;" in text and "<script" not in text and "<img" not in text
    numbers = texts(group(svg, data_numbers=""))
    assert len(numbers) == 4 * 5 - 1 and f"{values[0, 0]:.4f}" in numbers
    blank = next(r for r in cells if (r.get("data-i"), r.get("data-j")) == ("2", "3"))
    assert blank.get("fill") == "url(#mv-hatch)"
    screen = view.locator("td").evaluate_all("tds => tds.map((td) => td.style.backgroundColor)")
    svg_fill = {(int(r.get("data-i")), int(r.get("data-j"))): r.get("fill") for r in cells}
    for i in range(4):
        for j in range(5):
            if (i, j) != (2, 3):
                assert svg_fill[i, j].replace(" ", "") == screen[i * 5 + j].replace(" ", "")
    assert [s.get("stop-color") for s in svg.iter(f"{SVG}stop")] == list(WEIGHT_STOPS)  # the one scale
    assert spage.dialogs == []


def test_a_matrix_view_on_the_hand_page_exports_as_svg(page, app_url: str) -> None:
    page.goto(f"{app_url}/hand", wait_until="domcontentloaded")
    wait_until_idle(page)
    view = view_titled(page, "attention weights")
    name, text, svg = download(page, view.get_by_role("button", name="Download this matrix as SVG"))
    assert name.startswith("attention-weights") and name.endswith(".svg")
    cells = [r for r in svg.iter(f"{SVG}rect") if r.get("data-i") is not None]
    assert len(cells) == 36 and "0.4917" in texts(group(svg, data_numbers=""))  # query 1:is, key 4:dessert
    assert "1:is" in texts(group(svg, data_axis="rows")) and "4:dessert" in texts(group(svg, data_axis="columns"))
    screen = view.locator("td").nth(1 * 6 + 4).evaluate("td => td.style.backgroundColor")
    rect = next(r for r in cells if (r.get("data-i"), r.get("data-j")) == ("1", "4"))
    assert rect.get("fill").replace(" ", "") == screen.replace(" ", "")
