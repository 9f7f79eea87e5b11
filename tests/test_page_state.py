"""What a widget shows, what is drawn and what the URL says stay one state (issue: state that drifts).

Each case follows the steps of the report: a view chosen by URL survives an empty input and a new
sentence; a decoding step survives an edited reference."""

from functools import partial

import pytest

from fixtures.tiny import CLASSIFIER, GENERATOR
from tests import apptest
from tests.apptest import explorer, url

pytestmark = pytest.mark.usefixtures("app_env")


def test_classifier_view_survives_an_empty_sentence():
    run = partial(apptest.run, apptest.page("classifier"))
    at = run({"cls_layer": "1", "cls_head": "2"})
    assert explorer(at)["state"]["layer"] == 1 and explorer(at)["state"]["head"] == 2
    at.text_input(key="cls_text").input("").run()
    assert any("empty" in w.value for w in at.warning) and not at.get("bidi_component")
    at.text_input(key="cls_text").input("a good film").run()
    state = explorer(at)["state"]
    assert (state["layer"], state["head"]) == (1, 2) == (int(url(at, "cls_layer")), int(url(at, "cls_head")))
    assert CLASSIFIER.layers > 1 and CLASSIFIER.heads > 2


def test_generator_view_and_window_survive_an_empty_prompt():
    run = partial(apptest.run, apptest.page("generator"))
    at = run({"gen_layer": "2", "gen_head": "1", "gen_window": "30", "gen_steps": "True"})
    at.text_area(key="gen_prompt").input("").run()
    assert any("empty" in w.value for w in at.warning)
    at.text_area(key="gen_prompt").input("ROMEO:").run()
    assert not at.exception
    state = explorer(at)["state"]
    assert (state["layer"], state["head"]) == (2, 1) and GENERATOR.layers > 2
    shown = at.slider(key="gen_window").value
    assert shown == 30 and any("last 30 characters" in c.value for c in at.caption)


def test_decoding_step_survives_an_edited_reference():
    run = partial(apptest.run, apptest.page("translator"))
    at = run(tr_forced=True, tr_steps=True)
    at.slider(key="tr_step").set_value(4).run()
    at.text_input(key="tr_reference").input("a man rides a red bike .").run()
    assert not at.exception
    assert at.slider(key="tr_step").value == 4
    assert url(at, "tr_step") == "4"


def test_url_casts_for_toggles_and_index_lists():
    from pages.shared.state import flag, index_list

    assert flag("True") is True and flag("False") is False and flag("yes") is False
    cast = index_list(4)
    assert cast("2,0, 2") == [0, 2] and cast("") == []
    for bad in ("4", "-1", "x"):
        with pytest.raises(ValueError):
            cast(bad)
