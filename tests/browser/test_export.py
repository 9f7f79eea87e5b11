"""The whole-view HTML export in a real browser: the button downloads one standalone file with
plotly.js inline, and that file draws its figures with the network switched off."""

from __future__ import annotations

import csv
import io
import re

import pytest

from model.training.checkpoint import WEIGHTS, default_dir

from .test_pages import CHART_TIMEOUT_MS, wait_until_idle


@pytest.mark.parametrize(
    "path, n_figures",
    [("pairs", 3), ("ablation", 3), ("classifier", 5), ("translator", 9), ("generator", 7)],  # generator: 4 steps, grid, step
)
def test_view_downloads_as_offline_html(page, app_url: str, path: str, n_figures: int, tmp_path) -> None:
    task = path if path in ("translator", "generator") else "classifier"
    if not (default_dir(task) / WEIGHTS).is_file():
        pytest.skip(f"no {task} checkpoint: the page shows only the could-not-be-loaded message")
    page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.wait_for_selector(".js-plotly-plot", state="attached", timeout=CHART_TIMEOUT_MS)
    with page.expect_download(timeout=CHART_TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download this view as HTML").click()
    download = info.value
    assert download.suggested_filename.endswith(".html")
    html = download.path().read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "plotly.js v" in html
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, flags=re.I)
    assert html.count('class="plotly-graph-div"') == n_figures

    saved = tmp_path / "view.html"
    saved.write_text(html, encoding="utf-8")
    context = page.context
    context.set_offline(True)
    try:
        offline = context.new_page()
        offline.goto(saved.as_uri())
        offline.wait_for_function(
            f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n_figures}",
            timeout=CHART_TIMEOUT_MS,
        )
    finally:
        context.set_offline(False)


def test_heatmap_csv_downloads_the_weights(page, app_url: str) -> None:
    """The CSV under a heatmap is written when clicked: one row per query, one column per key, rows of
    softmax weights that sum to 1."""
    if not (default_dir("classifier") / WEIGHTS).is_file():
        pytest.skip("no classifier checkpoint: the page shows only the could-not-be-loaded message")
    page.goto(f"{app_url}/classifier", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.wait_for_selector(".js-plotly-plot", state="attached", timeout=CHART_TIMEOUT_MS)
    with page.expect_download(timeout=CHART_TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download CSV").first.click()
    rows = list(csv.reader(io.StringIO(info.value.path().read_text(encoding="utf-8"))))
    header, body = rows[0], rows[1:]
    assert len(body) == len(header) - 1 >= 2  # self-attention: as many keys as queries
    assert [r[0] for r in body] == header[1:]  # the same tokens label rows and columns
    for r in body:
        assert abs(sum(map(float, r[1:])) - 1) < 1e-4
