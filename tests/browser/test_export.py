"""The whole-view HTML export in a real browser: the button downloads one standalone file with
plotly.js inline, and that file draws its figures with the network switched off."""

from __future__ import annotations

import csv
import io
import re

import pytest

from model.core.checkpoint import WEIGHTS, default_dir

from .test_pages import CHART_TIMEOUT_MS, DRAWN, wait_until_idle


@pytest.mark.parametrize(
    "path, n_figures",
    # translator: the decoding step's three figures; generator: the open causal step and the step's two;
    # pairs and ablation: the bars and the two heatmaps the page shows as matrix views, built on the click
    [("pairs", 3), ("ablation", 3), ("translator", 3), ("generator", 3)],
)
def test_view_downloads_as_offline_html(page, app_url: str, path: str, n_figures: int, tmp_path) -> None:
    task = path if path in ("translator", "generator") else "classifier"
    if not (default_dir(task) / WEIGHTS).is_file():
        pytest.skip(f"no {task} checkpoint: the page shows only the could-not-be-loaded message")
    # the step sections (three charts each) opened
    query = {"translator": "?tr_steps=True", "generator": "?gen_steps=True"}.get(path, "")
    page.goto(f"{app_url}/{path}{query}", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.wait_for_selector(DRAWN, state="attached", timeout=CHART_TIMEOUT_MS)
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


def test_every_weight_downloads_as_csv(page, app_url: str) -> None:
    """The explorer's CSV is written when clicked: one row per weight (kind, layer, head, query, key),
    and each query's weights over the keys sum to 1."""
    if not (default_dir("classifier") / WEIGHTS).is_file():
        pytest.skip("no classifier checkpoint: the page shows only the could-not-be-loaded message")
    page.goto(f"{app_url}/classifier", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.locator('[data-testid="attention-explorer"]').wait_for(timeout=CHART_TIMEOUT_MS)
    with page.expect_download(timeout=CHART_TIMEOUT_MS) as info:
        page.get_by_role("button", name="Download every weight (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(info.value.path().read_text(encoding="utf-8"))))
    assert list(rows[0]) == ["kind", "layer", "head", "query", "key", "weight"]
    sums: dict[tuple, float] = {}
    for r in rows:
        key = (r["kind"], r["layer"], r["head"], r["query"])
        sums[key] = sums.get(key, 0.0) + float(r["weight"])
    assert len(sums) >= 2 and all(abs(v - 1) < 1e-4 for v in sums.values())
