"""The Training history page's note under "each role's best head per snapshot" describes the panels the chart
has: a model whose snapshots record no repeat loss (the classifier) has no loss panel to explain. (The chart was
one plot with a second y axis on the right; issue 51 asked for two panels, each with its own named axis.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixtures.tiny import HISTORY_EPOCHS, make_checkpoints, make_history
from pages.explore.history_parts import LOSS_PANEL, SCORES_PANEL
from tests import apptest
from tests.apptest import run_on
from tests.test_viz_profiles_history import read_svg

pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> Path:
    """Scored snapshots for the classifier (roles only) and the generator (roles and the repeat loss)."""
    root = make_history(make_checkpoints(tmp_path_factory.mktemp("checkpoints")))
    for task, repeat in (("classifier", False), ("generator", True)):
        path = root / task / "history.json"
        meta = json.loads(path.read_text())
        meta["snapshots"] = {
            str(e): {
                "roles": {"previous": {"score": 0.2 * e, "kind": "encoder", "layer": 0, "head": 1}},
                **({"repeat_loss": 4.0 / e} if repeat else {}),
            }
            for e in HISTORY_EPOCHS
        }
        path.write_text(json.dumps(meta))
    return root


def roles_note(at) -> tuple[dict, str]:
    """The roles chart (read from its SVG) and the caption right under it."""
    shown = [m for m in at.markdown if m.value.startswith("<svg") and "best head per snapshot" in m.value]
    assert len(shown) == 1, "no roles chart on the page"
    captions = [c.value for c in at.caption]
    return read_svg(shown[0].value), next(c for c in captions if "by the Head finder's own definitions" in c)


@pytest.mark.parametrize("task, loss", [("classifier", False), ("generator", True)])
def test_the_roles_note_names_only_the_panels_the_chart_has(checkpoints, task, loss):
    at = run_on(checkpoints, apptest.page("history"), {"hist_task": task})
    assert not at.exception
    chart, note = roles_note(at)
    assert chart["panels"] == [SCORES_PANEL, LOSS_PANEL] if loss else [SCORES_PANEL]
    assert {s["panel"] for s in chart["series"].values()} == set(chart["panels"])
    assert ("Bottom:" in note) is loss
    assert note.startswith("Top: for each role, the score of the head that plays it best")
    assert "axis" not in note  # no axis to look for: each panel names its own
