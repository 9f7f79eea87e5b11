"""Words that read wrong on the pages' screenshots (issue 43, reviewed at 1440 and 390 px), through AppTest:
the workshop names the page its example is worked on, and the generator says how it drew its characters
without "top-k all"."""

from __future__ import annotations

import pytest

from pages import page
from tests.apptest import chart, run
from tests.apptest import page as script

pytestmark = pytest.mark.usefixtures("app_env")


def test_the_warm_up_names_the_page_its_example_is_worked_on():
    """It said "as on the first page", and the first page is now the start page."""
    at = run(script("workshop"))
    assert not at.exception
    (note,) = [c.value for c in at.caption if "d_q = d_k = 24" in c.value]
    hand = page("hand")
    assert "first page" not in note and f"[{hand.title}]({hand.address})" in note


@pytest.mark.parametrize(
    "top_k, words",
    [(0, "from every character"), (1, "from the likeliest character"), (5, "from the 5 likeliest characters")],
)
def test_the_generator_says_how_its_characters_were_drawn(top_k, words):
    at = run(script("generator"), {"gen_topk": str(top_k), "gen_temp": "0.8"}, gen_next=True)
    assert not at.exception
    (said,) = [c.value for c in at.caption if "were sampled" in c.value]
    assert said.endswith(f"sampled at temperature 0.8 {words}.") and "top-k" not in said
    bars = chart(at, "what comes after")  # the next character's distribution, before and after
    names = [trace["name"] for trace in bars["data"]]
    assert names[0] == "at temperature 1 from every character" and names[1].startswith(f"at temperature 0.8 {words}")
