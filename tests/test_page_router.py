"""The router (app.py) builds its st.Page objects once per session (pages/router/menu.py): a session's
later runs reuse them, and no two sessions share one (st.navigation marks the page it returns on the
object itself)."""

from __future__ import annotations

import pytest
import streamlit as st

from pages import PAGES
from tests import apptest

APP = str(apptest.ROOT / "app.py")
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[st.Page]:
    """Every st.Page the app builds from here on."""
    made: list[st.Page] = []
    real = st.Page

    def counting(*args, **kwargs) -> st.Page:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(st, "Page", counting)
    return made


def test_a_sessions_later_runs_build_no_page(built):
    """Before: every run built all 14 (0.7 ms of a student's 7 ms rerun in a room)."""
    at = apptest.run(APP)
    assert not at.exception and sorted(p.url_path or "start" for p in built) == sorted(p.address for p in PAGES)
    at.run()
    at.switch_page("pages/teach/classroom.py").run()
    assert not at.exception and at.title[0].value == "Classroom"
    assert len(built) == len(PAGES)  # the first run's, reused since


def test_two_sessions_never_share_a_page_object(built):
    one, two = apptest.run(APP), apptest.run(APP)
    assert not one.exception and not two.exception
    assert len({id(p) for p in built}) == 2 * len(PAGES)


def test_the_sidebar_says_where_the_models_run_in_plain_words():
    """The sidebar is on every page a learner reads: where the models run and which are ready, in words (no
    library version or thread count: those are the README's)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    (said,) = [c.value for c in at.sidebar.caption if "The models run on" in c.value]
    assert said.startswith("The models run on this computer's processor.")
    assert "torch" not in said and "thread" not in said
    assert "Sentiment classifier: ✅ ready" in said
