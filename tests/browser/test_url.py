"""Each page's URL holds that page's state only, and Back goes where a user expects (issue: stale or
lost state)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from .test_explorer import ROOT, TIMEOUT_S, until


def keys(page) -> set[str]:
    return set(parse_qs(urlparse(page.url).query))


def test_moving_to_another_page_leaves_the_old_page_state_behind(page, app_url: str) -> None:
    page.goto(f"{app_url}/classifier?cls_layer=1&cls_head=2", wait_until="domcontentloaded")
    root = page.locator(ROOT)
    root.wait_for(timeout=TIMEOUT_S * 1000)
    until(page, lambda s: s is not None)
    root.focus()
    page.keyboard.press("]")  # the explorer writes its view into the address bar, no history entry
    until(page, lambda s: s["head"] == 3)
    assert "cls_head" in keys(page)
    page.get_by_role("link", name="Translator (de → en)").click()
    page.wait_for_url("**/translator**", timeout=TIMEOUT_S * 1000)
    page.locator(ROOT).wait_for(timeout=TIMEOUT_S * 1000)
    page.wait_for_timeout(500)
    assert not {k for k in keys(page) if k.startswith("cls_")}, page.url
    # Back: Streamlit's own page switch leaves one entry (the new page with the old query string), which
    # the app rewrites in place; so the classifier is at most two Backs away, with its own view only
    for _ in range(2):
        page.go_back()
        page.wait_for_timeout(1500)
        if "/classifier" in page.url:
            break
    assert "/classifier" in page.url and not {k for k in keys(page) if k.startswith("tr_")}, page.url
    assert {"cls_layer", "cls_head"} <= keys(page)
