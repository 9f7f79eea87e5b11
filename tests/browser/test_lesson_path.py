"""The lesson in a real browser (issue 51, "A guided path" and item 6): a newcomer walks the first three steps
in order, each step's link opening its page at the step's state in the same tab, the check answered back on
the lesson page; the teacher's guide on the start page links every step in the same tab too."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from model.core.checkpoint import WEIGHTS, default_dir
from model.lessons.path import lesson_path

from .test_pages import RUN_TIMEOUT_MS, wait_until_idle

LINK = '[data-testid="stPageLink-NavLink"]'
NAV = '[data-testid="stSidebarNav"]'
pytestmark = pytest.mark.skipif(
    not (default_dir("classifier") / WEIGHTS).is_file(), reason="no classifier checkpoint: step 3 cannot open"
)


def query(page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query, keep_blank_values=True).items()}


def arrive(page, address: str) -> None:
    """Wait until this tab shows the page at ``address`` and its script has run."""
    page.wait_for_function("p => location.pathname.endsWith(p)", arg=f"/{address}", timeout=RUN_TIMEOUT_MS)
    wait_until_idle(page)


def open_step_here(page, number: int) -> None:
    """Follow the lesson's link for step ``number``: it must open in this tab, not a new one."""
    link = page.locator(LINK, has_text=f"Open step {number} here")
    expect(link).to_have_count(1)
    assert link.get_attribute("target") in (None, "", "_self")  # a Markdown link would say _blank
    pages = len(page.context.pages)
    link.click()
    arrive(page, lesson_path()[number - 1].page)
    assert len(page.context.pages) == pages  # no new tab


def back_to_the_lesson(page) -> None:
    page.locator(NAV).get_by_role("link", name="The lesson").click()
    arrive(page, "lesson")
    expect(page.locator('[data-testid="stMain"] h1')).to_contain_text("The lesson", timeout=RUN_TIMEOUT_MS)


def pick(page, key_start: str, option: str) -> None:
    """Choose ``option`` in the select box whose key starts with ``key_start``."""
    page.locator(f'[class*="st-key-{key_start}"] [data-testid="stSelectbox"]').click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_until_idle(page)


def test_a_newcomer_walks_the_first_three_steps_in_order(page, app_url: str) -> None:
    path = lesson_path()
    page.goto(f"{app_url}/lesson", wait_until="domcontentloaded")
    wait_until_idle(page)
    expect(page.locator('[data-testid="stMain"] h3').first).to_contain_text(f"1. {path[0].title}")

    # step 1: the hand-worked head, opened at its sentence and its one-step view
    open_step_here(page, 1)
    assert urlsplit(page.url).path.endswith("/hand") and query(page)["hand_sentence"] == path[0].params["hand_sentence"]
    expect(page.locator(".st-key-hand_sentence input")).to_have_value(path[0].params["hand_sentence"])
    back_to_the_lesson(page)
    assert query(page).get("lesson_step") == "1"
    pick(page, "path_guess_1_", "4: dessert")  # answered here, graded on the head's own weights
    expect(page.get_by_text("Right.", exact=False)).to_be_visible()
    page.locator(".st-key-path_next_bottom button").click()
    wait_until_idle(page)

    # step 2: the reshape, opened on the same sentence
    expect(page.locator('[data-testid="stMain"] h3').first).to_contain_text(f"2. {path[1].title}")
    assert query(page).get("lesson_step") == "2"
    open_step_here(page, 2)
    assert (
        urlsplit(page.url).path.endswith("/reshape") and query(page)["reshape_text"] == path[1].params["reshape_text"]
    )
    back_to_the_lesson(page)
    page.locator(".st-key-path_next_top button").click()  # no answer: Next still leads on
    wait_until_idle(page)

    # step 3: the classifier's previous-token head, selected in the explorer
    expect(page.locator('[data-testid="stMain"] h3').first).to_contain_text(f"3. {path[2].title}")
    open_step_here(page, 3)
    assert urlsplit(page.url).path.endswith("/classifier")
    expect(page.locator(".st-key-cls_text input")).to_have_value(path[2].params["cls_text"])
    page.locator('[data-testid="attention-explorer"]').wait_for(timeout=RUN_TIMEOUT_MS)
    shown = query(page)
    assert (shown["cls_layer"], shown["cls_head"]) == (path[2].params["cls_layer"], path[2].params["cls_head"])


def test_the_start_page_s_guide_links_every_step_in_the_same_tab(page, app_url: str) -> None:
    page.goto(app_url, wait_until="domcontentloaded")
    wait_until_idle(page)
    links = page.locator(f".st-key-lesson-guide {LINK}")
    expect(links).to_have_count(len(lesson_path()))
    for i in range(links.count()):
        assert links.nth(i).get_attribute("target") in (None, "", "_self")
    links.nth(5).click()  # the induction head: the generator on a phrase written twice, the window covering it
    arrive(page, "generator")
    step = lesson_path()[5]
    assert urlsplit(page.url).path.endswith("/generator") and len(page.context.pages) == 1
    shown = query(page)
    for key in ("gen_chars", "gen_layer", "gen_head"):
        assert shown[key] == step.params[key]


@pytest.mark.parametrize("width", [1440, 390])
def test_the_lesson_has_no_serious_accessibility_violation(browser, app_url: str, width: int) -> None:
    """axe-core's WCAG A and AA rules (tests/browser/test_axe.py) on a step with each kind of check."""
    from .test_axe import SERIOUS, violations

    context = browser.new_context(viewport={"width": width, "height": 1000})
    try:
        page = context.new_page()
        for step in (1, 2, 4, 7):  # a key check, the width check, the ablation check, a choice
            page.goto(f"{app_url}/lesson?lesson_step={step}", wait_until="domcontentloaded")
            wait_until_idle(page)
            found = [v for v in violations(page) if v["impact"] in SERIOUS]
            assert not found, (step, found)
    finally:
        context.close()


def test_the_lesson_s_step_never_lands_on_the_hand_page(page, app_url: str) -> None:
    """The hand page reads its own ``?step=N``: the lesson's step has a key of its own, so Back from the lesson
    (whose address the browser may briefly join to the page before) never opens the hand page at the lesson's
    step."""
    page.goto(f"{app_url}/lesson?lesson_step=3", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.locator(NAV).get_by_role("link", name="Self-attention by hand").click()
    arrive(page, "hand")
    back_to_the_lesson(page)
    assert query(page).get("lesson_step") == "3"
    for _ in range(4):  # Back, through whatever entries the two page changes left, to the hand page
        page.go_back()
        wait_until_idle(page)
        if urlsplit(page.url).path.endswith("/hand"):
            break
    assert urlsplit(page.url).path.endswith("/hand")
    assert "step" not in query(page) and query(page).get("hand_view") != "step"
