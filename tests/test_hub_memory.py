"""What a Hugging Face model's run holds on to (issue 33: at GPT-2's 1,024 tokens one run's maps are 300 MB,
their causal triangle): the forward pass's per-layer maps are let go as they are stacked, so a run never holds them twice; the
page keeps runs within a budget and lets a large one go before it makes the next; the explorer's download holds the run
only weakly (Streamlit keeps a download's callable until the session's next run ends). Tiny random
models (fixtures/hub_tiny.py); the arrays they hold stand for the large ones."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import model.core.triangle as triangle
import pages.shared.hub as page_hub
from fixtures.hub_tiny import save_gpt2, save_marian
from model.core.results import causal
from model.core.triangle import CausalMaps, compact
from model.hub.load import load
from model.hub.run import _batch_item, _maps, run
from pages.shared.explorer import explorer_file
from tests import apptest

TEXT = "the cat sat on the mat ."


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    return load(str(save_gpt2(tmp_path_factory.mktemp("hub") / "gpt2")))


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return load(str(save_marian(tmp_path_factory.mktemp("hub") / "marian")))


@pytest.fixture(autouse=True)
def hub_env(hub_env):
    """No Hub, empty caches (tests/conftest.py's ``hub_env``): each test starts with no run kept."""
    return hub_env


def forward(hub):
    x = torch.tensor([hub.tokenizer(TEXT)["input_ids"]])
    extra = {"decoder_input_ids": x[:, :4]} if hub.shape == "encoder-decoder" else {}
    with torch.no_grad():
        return hub.model(input_ids=x, output_attentions=True, **extra)


@pytest.mark.parametrize("packed", [False, True], ids=["dense", "triangle"])
@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("gpt2", "attentions"),
        ("marian", "encoder_attentions"),
        ("marian", "decoder_attentions"),
        ("marian", "cross_attentions"),
    ],
)
def test_stacking_lets_go_of_each_layer_while_the_output_lives(request, monkeypatch, name, field, packed):
    """Dense, and (where the map is causal) packed as its triangle, which these tiny maps are made to be."""
    hub = request.getfixturevalue(name)
    out = forward(hub)
    expected = torch.stack([m[0] for m in getattr(out, field)]).numpy()
    causal_map = field in ("attentions", "decoder_attentions")
    monkeypatch.setattr(triangle, "PACK_FROM_BYTES", 0 if packed else 1 << 40)
    layers = _maps(out, field)
    held = [weakref.ref(layer) for layer in layers]
    maps = compact(_batch_item(layers), causal(expected.shape[-1]) if causal_map else None)
    gc.collect()
    assert all(ref() is None for ref in held), "the model's output still holds the per-layer maps"
    assert out is not None and out[field] is None and getattr(out, field) is None
    assert isinstance(maps, CausalMaps) == (packed and causal_map)
    np.testing.assert_array_equal(np.asarray(maps), expected)  # the same float32 weights, bit for bit
    if isinstance(maps, CausalMaps):
        assert maps.nbytes < expected.nbytes  # the triangle only


@pytest.fixture
def runs_made(monkeypatch) -> tuple[list, list]:
    """The page's runs as they are made: a weak reference to each, and for each, which earlier ones were
    still alive (after a garbage collection) when it was asked for."""
    made, alive_when_made = [], []

    def spy(*args, **kwargs):
        gc.collect()
        alive_when_made.append([ref() is not None for ref in made])
        out = run(*args, **kwargs)
        made.append(weakref.ref(out))
        return out

    monkeypatch.setattr(page_hub, "run", spy)
    return made, alive_when_made


def test_a_big_run_is_let_go_before_the_next(gpt2, runs_made, monkeypatch):
    monkeypatch.setattr(page_hub, "BIG_RUN", 0)  # these tiny runs stand for 300 MB ones
    made, alive_when_made = runs_made
    first = page_hub.run_hub(gpt2, TEXT, 0)
    assert page_hub.run_hub(gpt2, TEXT, 0) is first  # a click or a rerun: no forward pass
    del first
    second = page_hub.run_hub(gpt2, "a dog ran in the park .", 0)
    assert len(made) == 2 and alive_when_made == [[], [False]]  # the first was gone before the second was made
    assert page_hub.run_hub(gpt2, "a dog ran in the park .", 0) is second and len(made) == 2
    assert page_hub.run_hub(gpt2, "a dog ran in the park .", 1) is not second  # another length is another run


def test_the_page_holds_no_earlier_big_run_while_it_makes_the_next(tmp_path, runs_made, monkeypatch):
    monkeypatch.setattr(page_hub, "BIG_RUN", 0)
    made, alive_when_made = runs_made
    folder = save_gpt2(tmp_path / "gpt2")
    at = apptest.run(apptest.page("any_model"), {"hub_id": str(folder), "hub_text": TEXT})
    assert not at.exception and at.get("bidi_component")
    at.text_input(key="hub_text").set_value("a dog ran in the park .").run()
    assert not at.exception and at.get("bidi_component")
    assert alive_when_made == [[], [False]]  # neither the fragment's arguments nor the cache held the first


def test_small_runs_stay_within_the_budget_oldest_first(gpt2, runs_made, monkeypatch):
    """A room of students, each on a sentence: every run is kept (a click never runs the model again)
    until together they pass the budget; then the oldest go, and the newest always stays."""
    made, _ = runs_made
    texts = ["the cat sat on the mat .", "a dog ran in the park .", "two men play chess ."]
    first = [page_hub.run_hub(gpt2, t, 0) for t in texts]
    assert [page_hub.run_hub(gpt2, t, 0) for t in texts] == first and len(made) == 3  # no forward pass again
    one = page_hub.run_bytes(first[0])
    assert one > 0 and all(
        page_hub.run_bytes(r) == sum(k.weights.nbytes for k in r.result.kinds.values()) for r in first
    )
    monkeypatch.setattr(page_hub, "RUNS_BUDGET", 2 * one)  # room for about two
    page_hub.run_hub(gpt2, "a woman reads a book .", 0)
    kept = list(page_hub._run_slot()["runs"])
    assert len(kept) <= 2 and kept[-1][-2] == "a woman reads a book ."
    assert texts[0] not in [k[-2] for k in kept]  # the oldest went first
    monkeypatch.setattr(page_hub, "RUNS_BUDGET", 0)
    last = page_hub.run_hub(gpt2, "the end .", 0)
    assert list(page_hub._run_slot()["runs"].values()) == [last]  # over budget on its own, the newest stays


def test_the_download_holds_the_run_weakly_and_makes_it_again_when_it_is_gone(gpt2, monkeypatch):
    buttons = []
    monkeypatch.setattr(page_hub, "html_download", lambda data, name, key: buttons.append(data))
    out = run(gpt2, TEXT)
    expected = explorer_file(list(out.result.kinds.values()), "title")
    held = weakref.ref(out)
    page_hub.hub_download(gpt2, held, TEXT, 0, False, "title", None)
    assert buttons[0]() == expected  # the run it was given
    del out
    gc.collect()
    assert held() is None, "the download's callable holds the run"
    assert buttons[0]() == expected  # made again, the same maps
