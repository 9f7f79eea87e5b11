"""Every page passes axe-core's WCAG 2.0 and 2.1 A and AA rules in Chromium, at a projector's 1440 px and a
phone's 390 px (issue 51, item 10): no serious or critical violation in what the app draws.

axe-core is the copy that PyPI's ``axe-playwright-python`` ships (its ``axe.min.js``, MPL-2.0), installed
by ``make test`` with the other test requirements and injected from disk: nothing is fetched at run time.

Left out, by selector, is only markup that is Streamlit's own and that no page of ours can change:

- the page menu (``stSidebarNavItems``): Streamlit puts its section headings as ``<div>``s inside the
  ``<ul>`` of page links, which axe's ``list`` and ``listitem`` rules reject;
- the label of a disabled widget (``stWidgetLabel[disabled]``): Streamlit greys it to 40%, and WCAG 1.4.3
  exempts the text of an inactive control from the contrast minimum, which axe cannot tell;
- for the rule ``scrollable-region-focusable`` only, the box that scrolls an ``st.table`` wider than a phone
  (the profiles page's nearest heads, 434 px in 356): Streamlit gives it no ``tabindex``, and Chromium makes
  such a scroller a Tab stop of its own anyway (checked: Tab reaches it on /profiles at 390 px).
  Our own scrolling boxes (the matrix view's) carry ``tabindex="0"``, a role and a name.
"""

from __future__ import annotations

from importlib.resources import files

import pytest

from .test_page_fit import open_page, sized  # noqa: F401 - sized: a page at 1440 px, then at 390 px
from .test_pages import PAGES

AXE = files("axe_playwright_python") / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
STREAMLITS_OWN = ['[data-testid="stSidebarNavItems"]', '[data-testid="stWidgetLabel"][disabled]']
TABLE_SCROLLER = '[data-testid="stTable"] > div'  # Streamlit's own box around an st.table
SERIOUS = ("serious", "critical")
RUN_AXE = """async ([tags, own, scroller]) => {
  const r = await axe.run(
    { include: [document], exclude: own.map(s => [s]) },
    { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
  const streamlits = (v, n) => v.id === 'scrollable-region-focusable' && n.target.length === 1
    && document.querySelector(n.target[0])?.matches(scroller);
  return r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.filter(n => !streamlits(v, n))
      .map(n => [n.target.join(' '), n.failureSummary.split('\\n').slice(0, 2).join(' ')]) }))
    .filter(v => v.nodes.length);
}"""


def violations(page) -> list[dict]:
    """axe's WCAG A and AA violations on the page as it stands, Streamlit's own markup left out."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE, [TAGS, STREAMLITS_OWN, TABLE_SCROLLER])


def test_axe_is_the_installed_copy() -> None:
    """The engine comes from the installed package, not a CDN: a real axe-core of version 4."""
    head = AXE.read_text(encoding="utf-8")[:200]
    assert head.startswith("/*! axe v4."), head


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_violation(sized, app_url: str, path: str) -> None:  # noqa: F811
    """Before: captions at 3.88:1 (33 nodes), a link in a caption at 2.96:1, and on the hand page a
    matrix that scrolls but cannot be reached by the keyboard."""
    page, width = sized
    open_page(page, app_url, path)
    found = [v for v in violations(page) if v["impact"] in SERIOUS]
    assert found == [], f"/{path} at {width} px: {found}"
