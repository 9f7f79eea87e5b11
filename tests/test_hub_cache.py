"""The Hub model cache (model/hub/cache.py): models kept by key within a byte budget, least recently used first
out, never one a holder (a session) is using; a full budget refuses in plain words. Fake sizes first, then two
tiny real Hugging Face models (fixtures/hub_tiny.py) loaded from folders."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from fixtures.hub_tiny import save_bert, save_gpt2
from model.hub.cache import (
    BYTES_PER_PARAM,
    DEFAULT_MEMORY_MB,
    MEMORY_ENV,
    PIN_TTL_S,
    CacheFull,
    ModelCache,
    memory_budget,
    model_bytes,
)
from model.hub.errors import HubError
from model.hub.load import load


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def cache(budget: int = 100, **kw) -> tuple[ModelCache, list, Clock]:
    evicted, clock = [], Clock()
    return ModelCache(budget, clock=clock, on_evict=lambda k, v: evicted.append(k), **kw), evicted, clock


def test_least_recently_used_unpinned_model_goes_first():
    c, evicted, _ = cache(100)
    c.put("m1", "one", 40, "alice")
    c.put("m2", "two", 40, "bob")
    c.put("m3", "three", 10, "carol")
    c.release("alice")
    c.release("carol")  # m1 and m3 are kept, in use by nobody; m1 was used least recently
    c.put("m4", "four", 45, "dave")  # needs 35 more than is free: m1 (40) goes, m3 stays
    assert evicted == ["m1"] and c.keys() == ["m2", "m3", "m4"] and c.used() == 95
    assert c.get("m3", "erin") == "three"  # now the most recently used
    c.release("erin")
    with pytest.raises(CacheFull):  # bob (m2) and dave (m4) use theirs: no room however m3 goes
        c.put("m5", "five", 55, "frank")
    assert c.keys() == ["m2", "m4", "m3"] and evicted == ["m1"]  # refused: nothing was let go


def test_a_pinned_model_is_never_evicted_and_the_refusal_says_so_plainly():
    c, evicted, _ = cache(100 * 2**20)
    c.put("gpt2", "g", 60 * 2**20, "alice")
    with pytest.raises(CacheFull) as full:
        c.put("bert", "b", 50 * 2**20, "bob")
    assert c.keys() == ["gpt2"] and not evicted  # alice keeps hers
    message = str(full.value)
    assert "memory for models is full" in message and "1 other person is using 1 model" in message
    assert "about 60 MB of the about 100 MB" in message and "bert" not in message  # no name given: "this model"
    assert "No one's model is taken away" in message and isinstance(full.value, HubError)
    with pytest.raises(CacheFull, match="more than the about 100 MB this server keeps"):
        c.check(200 * 2**20, "carol", name="big")
    c.check(40 * 2**20, "carol")  # fits beside alice's: no error, nothing let go
    assert c.keys() == ["gpt2"]


def test_a_holder_moving_to_another_model_frees_its_old_one():
    c, evicted, _ = cache(100)
    c.put("m1", "one", 60, "alice")
    c.put("m2", "two", 60, "alice")  # alice's own pin moves: m1 can go for her new model
    assert evicted == ["m1"] and c.keys() == ["m2"] and c.pinned() == {"m2": {"alice"}}


def test_a_pin_lapses_when_its_holder_stops_asking():
    c, evicted, clock = cache(100)
    c.put("m1", "one", 60, "alice")
    clock.now = PIN_TTL_S - 1
    assert c.get("m1", "alice") == "one"  # renewed
    clock.now = 2 * PIN_TTL_S - 2
    with pytest.raises(CacheFull):
        c.put("m2", "two", 60, "bob")  # alice asked PIN_TTL_S - 1 s ago: still hers
    clock.now = 2 * PIN_TTL_S
    c.put("m2", "two", 60, "bob")  # her session was closed or left: m1 goes
    assert evicted == ["m1"] and c.keys() == ["m2"]


def test_two_holders_on_one_model_share_it_and_both_pin_it():
    c, evicted, _ = cache(100)
    c.put("m1", "one", 60, "alice")
    assert c.get("m1", "bob") == "one" and c.pinned() == {"m1": {"alice", "bob"}}
    c.release("alice")
    with pytest.raises(CacheFull):
        c.put("m2", "two", 60, "carol")  # bob still uses it
    assert c.put("m1", "other copy", 60, "carol") == "one"  # a second load of a kept key: the kept one wins
    assert not evicted


def test_one_lock_per_key_for_loading():
    c, _, _ = cache()
    assert c.loading("a") is c.loading("a") and c.loading("a") is not c.loading("b")


@pytest.mark.parametrize("seed", range(5))
def test_random_use_keeps_the_budget_and_every_pinned_model(seed):
    """Against a brute-force check after every step: the kept bytes never pass the budget, a model some holder
    pinned is still kept, and a refusal happens only when the pinned models really leave no room."""
    rng = random.Random(seed)
    c, evicted, clock = cache(100, pin_ttl=1e9)
    sizes = {f"m{i}": rng.randint(5, 60) for i in range(8)}
    uses: dict[str, str] = {}  # holder -> key, the reference's own record of the pins
    for _ in range(300):
        who, key = rng.choice("abcde"), rng.choice(list(sizes))
        if rng.random() < 0.15:
            c.release(who)
            uses.pop(who, None)
            continue
        if c.get(key, who) is not None:
            uses[who] = key
            continue
        others = {k for h, k in uses.items() if h != who}
        room = 100 - sum(sizes[k] for k in others)
        try:
            c.put(key, key.upper(), sizes[key], who)
            uses[who] = key
            assert sizes[key] <= room
        except CacheFull:
            assert sizes[key] > room
        assert c.used() <= 100
        assert set(uses.values()) <= set(c.keys())  # every model in use is still kept


def test_memory_budget_reads_the_hosts_setting(monkeypatch):
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    assert memory_budget() == DEFAULT_MEMORY_MB * 2**20
    monkeypatch.setenv(MEMORY_ENV, "1500")
    assert memory_budget() == 1500 * 2**20
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(MEMORY_ENV, bad)
        with pytest.raises(HubError, match=MEMORY_ENV):
            memory_budget()


# two tiny real Hugging Face models


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hub-cache")
    return {"gpt2": save_gpt2(root / "gpt2"), "bert": save_bert(root / "bert"), "gpt2b": save_gpt2(root / "b", seed=1)}


@pytest.fixture(scope="module")
def loaded(tiny) -> dict:
    return {name: load(str(folder)) for name, folder in tiny.items()}


def test_model_bytes_counts_each_tensor_once(loaded):
    for hub in loaded.values():
        tensors = [*hub.model.state_dict().values(), *hub.model.buffers()]  # buffers: the unsaved ones too
        unique = {t.data_ptr(): t.numel() * t.element_size() for t in tensors}
        assert model_bytes(hub.model) == sum(unique.values())
        params = sum(p.numel() for p in hub.model.parameters())  # tied weights once, as parameters() yields them
        assert params * BYTES_PER_PARAM <= model_bytes(hub.model)  # float32, plus buffers (position ids)


def test_two_users_keep_their_own_real_models_and_a_third_is_told_the_budget_is_full(tiny, loaded):
    sizes = {name: model_bytes(hub.model) for name, hub in loaded.items()}
    c, evicted, _ = cache(sizes["gpt2"] + sizes["bert"] + 1)
    for who, name in (("alice", "gpt2"), ("bob", "bert")):
        c.put(str(tiny[name]), loaded[name], sizes[name], who)
    assert c.get(str(tiny["gpt2"]), "alice") is loaded["gpt2"] and c.get(str(tiny["bert"]), "bob") is loaded["bert"]
    # a third learner's model, sized before any weight is read (parameters x 4 bytes), is refused: nothing moves
    fits = lambda params: c.check(params * BYTES_PER_PARAM, "carol", name="her model")
    with pytest.raises(CacheFull, match="2 other people are using 2 models"):
        load(str(tiny["gpt2b"]), fits=fits)
    assert c.keys() == [str(tiny["gpt2"]), str(tiny["bert"])] and not evicted
    c.release("alice")  # alice leaves: her model can now make room
    third = load(str(tiny["gpt2b"]), fits=fits)
    c.put(str(tiny["gpt2b"]), third, model_bytes(third.model), "carol")
    assert evicted == [str(tiny["gpt2"])] and c.get(str(tiny["bert"]), "bob") is loaded["bert"]


def test_threads_loading_one_model_load_it_once(tiny):
    c, _, _ = cache(10**9)
    loads, barrier = [], threading.Barrier(3)

    def open_model(who: str) -> None:
        barrier.wait()
        key = str(tiny["bert"])
        with c.loading(key):
            if c.get(key, who) is None:
                loads.append(who)
                hub = load(key)
                c.put(key, hub, model_bytes(hub.model), who)

    threads = [threading.Thread(target=open_model, args=(w,)) for w in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1 and c.pinned() == {str(tiny["bert"]): {"a", "b", "c"}}
