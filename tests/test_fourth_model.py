"""A fourth model is one module (issue 53): a toy review classifier, written here as one file that reuses the
classifier's network and kind of output and has no examples of its own, is registered in model.zoo at run
time; it then loads, runs, and every page that takes or lists our models works with it."""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fixtures.tiny import CLASSIFIER, CLASSIFIER_TEXT, make_checkpoints, word_vocab
from model import zoo
from tests import apptest

APP = str(apptest.ROOT / "app.py")  # the router: the listing pages link to every page through it

NAME, TITLE = "reviews", "Review classifier"
MODULE = f'''"""A toy fourth model: a second sentiment classifier, for tests."""

from model.nets.classifier import Classifier, ClassifierConfig
from model.zoo.records import KindSpec, ModelEntry, ModelSpec

ENTRY = ModelEntry(
    spec=ModelSpec(
        name="{NAME}",
        title="{TITLE}",
        short="rev",
        kinds=(KindSpec("encoder", "Self-attention", "query", "key", "ids", "ids", "words", "words"),),
        inputs=("ids",),
        input_name="English review",
        unit="words",
        output="classes",
        data="toy reviews",
        corpus="sst2.txt",
    ),
    net=Classifier,
    config=ClassifierConfig,
    recipe="classifier.json",
)
'''
# the pages with a model picker, by the URL key that picks it; every other page that reads the registry lists
# all our models (the start page's results, the lesson's checks)
PICKERS = {"ablation": "abl_model", "pairs": "pair_model", "profiles": "pro_task", "heads": "heads_model"}
PICKERS["history"] = "hist_task"
LISTS = ("start", "lesson")
pytestmark = pytest.mark.usefixtures("app_env")


@pytest.fixture(scope="module", autouse=True)
def fourth(tmp_path_factory: pytest.TempPathFactory):
    """The fourth model's module, written and imported from a temporary folder and registered for this module."""
    path = tmp_path_factory.mktemp("zoo") / f"{NAME}.py"
    path.write_text(MODULE, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"toy_{NAME}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(zoo.MODELS, NAME, module.ENTRY)
        yield module.ENTRY


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory, fourth) -> Path:
    """The three tiny checkpoints and a tiny one of the fourth model beside them, with its heads scored (the
    head finder reads stored scores, as it does for the shipped models)."""
    from model.analysis.head_scan import our_reader, scan
    from model.core.checkpoint import load_checkpoint, save_checkpoint

    root = make_checkpoints(tmp_path_factory.mktemp("checkpoints"))
    words = word_vocab(CLASSIFIER_TEXT, "en")
    save_checkpoint(root / NAME, NAME, fourth.build(vars(replace(CLASSIFIER, vocab_size=len(words)))), {"words": words})
    lines = [line for line in CLASSIFIER_TEXT.splitlines() if line.strip()]
    (corpus := root / f"{NAME}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = scan(our_reader(load_checkpoint(root / NAME)), lines).to_json(examples=True, corpus=str(corpus))
    (root / NAME / "heads.json").write_text(json.dumps(report), encoding="utf-8")
    return root


def test_one_module_makes_a_model_the_code_knows(checkpoints, fourth):
    from model.analysis.head_scan import CORPORA, default_corpus
    from model.analysis.runs import run
    from model.core import specs
    from model.core.checkpoint import load_checkpoint

    assert specs.SPECS[NAME] is fourth.spec and specs.spec_for(NAME).title == TITLE
    assert specs.MODELS == ("classifier", "generator", "translator", NAME)
    assert default_corpus(fourth.spec) == CORPORA / "sst2.txt"
    assert fourth.examples == zoo.Examples()  # none of its own: the pages open on the plain English ones
    ck = load_checkpoint(checkpoints / NAME, task=NAME)
    assert ck.spec is fourth.spec and type(ck.model) is zoo.MODELS["classifier"].net
    r = run(ck, "a good film")
    assert r.task == NAME and tuple(r.kinds) == ("encoder",)
    assert r.prediction in r.probs and sum(r.probs.values()) == pytest.approx(1.0, abs=1e-4)


def test_the_pages_that_read_the_registry_are_all_checked_here():
    """A page script that picks or lists our models (pick_model, SPECS, MODELS outside comments) is in this
    test: a new one cannot escape it."""
    from pages import PAGES

    def reads(path: str) -> bool:
        code = "\n".join(line.split("#")[0] for line in Path(path).read_text(encoding="utf-8").splitlines())
        return bool(re.search(r"pick_model\(|\bSPECS\b|\bMODELS\b", code))

    assert {p.address for p in PAGES if reads(p.script)} == {*PICKERS, *LISTS}


@pytest.mark.parametrize("page", list(PICKERS))
def test_every_page_that_takes_a_model_works_with_the_fourth(page):
    at = apptest.run(apptest.page(page), {PICKERS[page]: NAME})
    assert not at.exception, at.exception
    assert at.session_state[PICKERS[page]] == NAME  # the fourth model is the one chosen, not a fallback
    assert not at.error, [e.value for e in at.error]
    if page in ("ablation", "profiles"):  # its text box opens on the plain English example
        [box] = [w for w in [*at.text_input, *at.text_area] if w.label == "English review"]
        assert box.value == zoo.Examples().ablation
    if page == "pairs":
        assert [w.value for w in at.text_input if w.label.endswith("English review")] == list(zoo.Examples().pair)
    if page == "heads":  # its lines are shown, without a link to a model page it does not have
        [table] = [m.value for m in at.markdown if "| decile |" in m.value]
        assert "| top |" in table and "](" not in table and "opens it" not in table


@pytest.mark.parametrize("page", LISTS)
def test_every_page_that_lists_the_models_works_with_the_fourth(page):
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(apptest.page(page)).run()
    assert not at.exception, at.exception
    if page == "start":  # the front door's results: one per model, the fourth too
        assert f"{TITLE} · toy reviews" in [m.label for m in at.metric]
