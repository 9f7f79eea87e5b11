"""model.core.specs: each model described once, and the description true to the model it describes."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.tiny import make_checkpoints
from model.analysis.runs import input_limit, run
from model.core.checkpoint import load_checkpoint
from model.core.specs import SPECS, hub_spec, spec_for

TEXTS = {"classifier": "a good film", "generator": "ROMEO:", "translator": "ein mann fährt fahrrad ."}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = make_checkpoints(tmp_path_factory.mktemp("checkpoints"))
    return {name: load_checkpoint(root / name, task=name) for name in SPECS}


@pytest.mark.parametrize("name", list(SPECS))
def test_a_run_has_the_kinds_inputs_and_labels_its_description_names(checkpoints, name):
    ck = checkpoints[name]
    spec, r = ck.spec, run(ck, TEXTS[name])
    assert spec is SPECS[name] and r.task == name and r.unit == spec.unit
    assert tuple(r.kinds) == spec.kind_names and tuple(r.inputs) == spec.inputs
    for k in spec.kinds:
        view = r.kinds[k.name]
        assert (view.title, view.query_axis, view.key_axis) == (k.title, k.query_axis, k.key_axis)
        assert view.weights.shape[-2:] == (len(r.inputs[k.query_input]), len(r.inputs[k.key_input]))
        assert view.cross == k.cross
        T = view.weights.shape[-1]
        if k.causal:  # the description says causal: no query sees a later key, in the mask and in the weights
            assert not np.triu(view.mask, 1).any() and (np.triu(view.weights, 1) == 0).all()
        else:
            assert view.mask[:, : T - 1].all() if T > 1 else True
    # the limit the description reads from the config is the one the model enforces
    limit = spec.limit(ck.model.config)
    assert limit == input_limit(ck) > 0
    long = run(ck, ("a " if not spec.characters else "a") * (limit + 5))
    assert long.truncated and not run(ck, TEXTS[name]).truncated


def test_spec_names_and_kinds():
    assert spec_for("translator").kind("cross").key_input == "src"
    with pytest.raises(ValueError, match="unknown model 'nope'; choose one of classifier, generator, translator"):
        spec_for("nope")
    with pytest.raises(ValueError, match="the classifier has no 'cross' attention; choose one of encoder"):
        SPECS["classifier"].kind("cross")
    assert SPECS["generator"].characters and not SPECS["classifier"].characters
    assert {s.short for s in SPECS.values()} == {"cls", "gen", "tr"}  # URL prefixes, unique


@pytest.mark.parametrize(
    "shape, head, kinds, inputs, output",
    [
        ("encoder", "masked-lm", ("encoder",), ("ids",), "masked"),
        ("encoder", "base", ("encoder",), ("ids",), ""),
        ("decoder", "causal-lm", ("decoder",), ("ids",), "next"),
        ("encoder-decoder", "seq2seq", ("encoder", "decoder", "cross"), ("src", "tgt"), "text"),
    ],
)
def test_a_hub_model_is_described_from_its_config(shape, head, kinds, inputs, output):
    s = hub_spec("org/model", shape, head, 512)
    assert (s.kind_names, s.inputs, s.output, s.unit, s.limit(None)) == (kinds, inputs, output, "tokens", 512)
    assert all(k.causal == (k.name == "decoder") for k in s.kinds)
    with pytest.raises(ValueError, match="unknown model shape"):
        hub_spec("x", "mixture", head, 1)


@pytest.mark.parametrize("name", list(SPECS))
def test_each_model_is_one_module_that_the_old_tables_read(checkpoints, name):
    """Issue 53: a shipped model's module (model/zoo/<name>.py) holds its description, network, recipe file,
    default corpus and examples; the description, the loader, the head finder's corpus, the recipe replay
    and the training recipe read it."""
    from model import zoo
    from model.analysis.head_scan import CORPORA, default_corpus
    from model.training import recipes
    from model.training.replay import load_recipe

    entry = zoo.model_entry(name)
    assert entry.name == name and SPECS[name] is entry.spec and spec_for(name) is entry.spec
    assert type(checkpoints[name].model) is entry.net and type(checkpoints[name].model.config) is entry.config
    assert default_corpus(entry.spec) == CORPORA / entry.spec.corpus and default_corpus(entry.spec).is_file()
    assert load_recipe(name)["task"] == name
    assert isinstance(recipes.get(name), recipes.RECIPES[entry.spec.output])
    assert entry.examples.ablation and len(entry.examples.pair) == 2
