"""The matrix views of the hand-worked and reshape pages on a phone (390 px, touch), issue 43's screenshot
review: they ran past the edge and scrolled sideways with nothing to say so, and cut the column label
"4:dessert" at the edge. Now a sentence's 6 × 6 attention weights fit with every label whole, and a table
wider than the phone shows a "scroll →" caption and a fade on its right edge, which go once it is scrolled
to the end. At 1440 px as well, a table shows them where, and only where, it runs past its box (the hand
page's 28-number context vector does)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .test_pages import wait_until_idle

VIEW = '[data-testid="matrix-view"]'
DEVICES = {
    "phone": dict(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True),
    "desktop": dict(viewport={"width": 1440, "height": 900}),
}
# every view shown on the page: whether its table runs past its box, its caption, and whether the fade shows
SHOWN = """views => views.filter(v => v.offsetParent).map(v => {
  const s = v.querySelector('.mv-scroll'), hint = v.querySelector('.mv-hint'), frame = v.querySelector('.mv-frame');
  return {
    title: v.querySelector('.mv-title').textContent,
    over: s.scrollWidth > s.clientWidth + 1,
    hint: hint && hint.offsetParent ? hint.textContent : null,
    fade: frame ? getComputedStyle(frame, '::after').opacity : null,
  };
})"""


@pytest.fixture(params=list(DEVICES))
def device(request, browser) -> Iterator[tuple[str, object]]:
    context = browser.new_context(**DEVICES[request.param])
    try:
        yield request.param, context.new_page()
    finally:
        context.close()


def shown_views(page, path: str, app_url: str) -> list[dict]:
    page.goto(f"{app_url}/{path}", wait_until="domcontentloaded")
    wait_until_idle(page)
    views = page.locator(VIEW)
    views.first.wait_for(timeout=60_000)
    page.wait_for_timeout(500)  # the last frame's layout (fonts, the caption)
    return views.evaluate_all(SHOWN)


@pytest.mark.parametrize("path", ["hand", "reshape"])
def test_a_table_wider_than_the_screen_says_so(device, app_url: str, path: str) -> None:
    name, page = device
    shown = shown_views(page, path, app_url)
    assert shown, f"no matrix view shown on /{path}"
    for view in shown:  # the caption and the fade where, and only where, the table runs past its box
        if view["over"]:
            assert view["hint"] == "scroll →" and view["fade"] == "1", view
        else:
            assert view["hint"] is None and view["fade"] == "0", view
    wide = [v for v in shown if v["over"]]
    if name == "desktop" and not wide:
        return
    assert wide, f"no table on /{path} is wider than a phone: nothing was tested"
    view = page.locator(VIEW).filter(has=page.locator(".mv-title", has_text=wide[0]["title"])).first
    scroll = view.locator(".mv-scroll")
    scroll.evaluate("s => { s.scrollLeft = s.scrollWidth; }")  # to the last column
    page.wait_for_function(
        "v => v.querySelector('.mv-hint').textContent === '← scroll'", arg=view.element_handle(), timeout=10_000
    )
    page.wait_for_timeout(300)  # the fade's transition
    assert view.locator(".mv-frame").evaluate("f => getComputedStyle(f, '::after').opacity") == "0"


def test_the_attention_weights_fit_a_phone_with_every_label_whole(browser, app_url: str) -> None:
    """The hand page's 6 × 6 weights, the table its questions are about, cut "4:dessert" at 390 px."""
    context = browser.new_context(**DEVICES["phone"])
    try:
        page = context.new_page()
        shown = shown_views(page, "hand", app_url)
        weights = next(v for v in shown if v["title"].startswith("attention weights"))
        assert not weights["over"] and weights["hint"] is None, weights
        view = page.locator(VIEW).filter(has=page.locator(".mv-title", has_text="attention weights")).first
        labels = view.locator("th.mv-col").evaluate_all(
            """ths => ths.map(th => {  // shown whole: not cut by its ellipsis, nor by the box's edge
              const box = th.closest('.mv-scroll').getBoundingClientRect(), r = th.getBoundingClientRect();
              return [th.textContent, th.scrollWidth <= th.clientWidth && r.right <= box.right + 0.5];
            })"""
        )
        assert [t for t, _ in labels] == ["0:Life", "1:is", "2:short", "3:eat", "4:dessert", "5:first."]
        assert all(whole for _, whole in labels), labels
    finally:
        context.close()
