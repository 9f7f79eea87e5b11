"""Every way a Hugging Face model can fail to open or run ends in one HubError whose message says
what to do; downloads go through a loopback stand-in for the Hub (fixtures/hub_tiny.FakeHub)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from fixtures.hub_tiny import FakeHub, edit_config, save_bert, save_gpt2, save_marian
from model.__main__ import main
from model.hub import HubError
from model.hub.download import OFFLINE, TIMEOUT_ENV
from model.hub.load import MAX_PARAMS_ENV, load, max_params
from model.hub.run import run


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hub")
    return {"gpt2": save_gpt2(root / "gpt2"), "bert": save_bert(root / "bert"), "marian": save_marian(root / "marian")}


@pytest.fixture
def copy(tiny, tmp_path):
    """A fresh copy of one tiny model's folder, to break."""
    return lambda name: Path(shutil.copytree(tiny[name], tmp_path / name))


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """An empty Hub cache of this test's own; the endpoint is set per test."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HOME", raising=False)
    return monkeypatch


def fails(source, match: str, **kw) -> None:
    with pytest.raises(HubError, match=match):
        load(str(source), **kw)


@pytest.mark.parametrize(
    "source, match",
    [
        ("", "type a model id"),
        ("   ", "type a model id"),
        ("./no/such/folder", "there is no folder ./no/such/folder"),
        ("not a valid id!!", "is not a model id"),
    ],
)
def test_bad_names(source, match, hub_env):
    hub_env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    fails(source, match)


def test_folder_without_config(tmp_path):
    (tmp_path / "weights.txt").write_text("x")
    fails(tmp_path, "has no config.json")
    fails(tmp_path / "weights.txt", "is not a folder")


def test_parameter_cap_comes_from_the_environment(tiny, monkeypatch):
    monkeypatch.delenv(MAX_PARAMS_ENV, raising=False)
    assert max_params() == 150_000_000
    monkeypatch.setenv(MAX_PARAMS_ENV, "1000")
    fails(tiny["gpt2"], rf"parameters, more than the 0 M .*{MAX_PARAMS_ENV}")
    monkeypatch.setenv(MAX_PARAMS_ENV, "2M")
    assert max_params() == 2_000_000 and load(str(tiny["gpt2"])).params < 2_000_000
    monkeypatch.setenv(MAX_PARAMS_ENV, "lots")
    fails(tiny["gpt2"], "is not a number of parameters")


def test_cap_is_checked_before_any_weight_is_read(tmp_path, monkeypatch):
    """GPT-2 small's config alone: refused for its size, though there are no weights to read."""
    from transformers import GPT2Config

    monkeypatch.delenv(MAX_PARAMS_ENV, raising=False)
    GPT2Config().save_pretrained(tmp_path)
    fails(tmp_path, "has 124 M parameters, more than the 150 M|has 124 M", limit=100_000_000)
    with pytest.raises(HubError, match="no safetensors weights"):
        load(str(tmp_path))  # under the default cap it gets as far as the weights


@pytest.mark.parametrize(
    "config, match",
    [
        ({"model_type": "mamba", "architectures": ["MambaForCausalLM"]}, "no attention weights"),
        ({"model_type": "vit", "architectures": ["ViTModel"]}, "not a text transformer"),
        (
            {
                "model_type": "my-own-model",
                "auto_map": {"AutoConfig": "configuration_my.MyConfig", "AutoModel": "modeling_my.MyModel"},
            },
            "trust_remote_code",
        ),
        ({"model_type": "no-such-model"}, "does not describe a model transformers knows"),
    ],
)
def test_unsupported_architectures(copy, config, match):
    folder = copy("bert")
    (folder / "config.json").write_text(json.dumps(config))
    fails(folder, match)


def test_pickled_weights_are_never_loaded(copy, monkeypatch):
    folder = copy("gpt2")
    (folder / "model.safetensors").unlink()
    torch.save({"x": torch.zeros(1)}, folder / "pytorch_model.bin")

    def refuse(*args, **kwargs):
        raise AssertionError("torch.load was called")

    monkeypatch.setattr(torch, "load", refuse)
    fails(folder, "no safetensors weights.*never loads pickled")


def test_broken_weights_and_tokenizers(copy):
    folder = copy("gpt2")
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    fails(folder, "its weights could not load")
    folder = copy("bert")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (folder / name).unlink()
    fails(folder, "the folder has no tokenizer files")
    folder = copy("marian")
    (folder / "tokenizer.json").write_text("{not json")
    fails(folder, "its tokenizer could not load")


def test_config_that_transformers_cannot_build(copy):
    folder = edit_config(copy("bert"), hidden_size=15)  # not divisible by its 2 heads
    fails(folder, "cannot build a bert model")


def test_empty_text(tiny):
    hub = load(str(tiny["bert"]))
    for text in ("", "  \n"):
        with pytest.raises(HubError, match="type some text"):
            run(hub, text)


def test_download_reports_progress_and_fetches_only_what_it_needs(tiny, copy, hub_env):
    folder = copy("gpt2")
    (folder / "modeling_evil.py").write_text("raise SystemExit('ran remote code')")
    torch.save({"x": torch.zeros(1)}, folder / "pytorch_model.bin")
    events = []
    with FakeHub({"org/tiny-gpt2": folder}) as fake:
        hub_env.setenv("HF_ENDPOINT", fake.url)
        hub = load("org/tiny-gpt2", progress=lambda f, text: events.append((f, text)))
    assert hub.shape == "decoder" and hub.source == "org/tiny-gpt2"
    assert sorted(fake.fetched) == sorted(
        ["config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    )
    fractions = [f for f, _ in events]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and events[-1] == (1.0, "ready")
    assert any(text.startswith("downloading") for _, text in events)
    # downloaded once, it opens from the Hub cache when the Hub is out of reach
    hub_env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    assert load("org/tiny-gpt2").params == hub.params


def test_hub_refusals(tiny, hub_env):
    with FakeHub(
        {"org/gpt2": tiny["gpt2"], "org/gated": tiny["gpt2"], "org/private": tiny["gpt2"]},
        gated=("org/gated",),
        private=("org/private",),
    ) as fake:
        hub_env.setenv("HF_ENDPOINT", fake.url)
        fails("org/missing", "org/missing was not found on the Hugging Face Hub")
        fails("org/private", "not found on the Hugging Face Hub .*private models cannot be opened")
        fails("org/gated", "org/gated is gated")
        fails("org/gpt2", "more than the 0 M", limit=1000)
        assert fake.fetched == ["config.json"]  # the cap refused before any weight was downloaded


def test_repo_without_safetensors(tiny, copy, hub_env):
    folder = copy("gpt2")
    (folder / "model.safetensors").unlink()
    torch.save({"x": torch.zeros(1)}, folder / "pytorch_model.bin")
    with FakeHub({"org/old": folder}) as fake:
        hub_env.setenv("HF_ENDPOINT", fake.url)
        fails("org/old", "org/old has no safetensors weights")
    assert "pytorch_model.bin" not in fake.fetched


def test_no_network_says_open_a_local_folder(hub_env):
    with FakeHub({}) as fake:
        closed = fake.url  # nothing listens there once the stand-in has stopped
    hub_env.setenv("HF_ENDPOINT", closed)
    with pytest.raises(HubError) as err:
        load("gpt2")
    assert str(err.value) == OFFLINE


@pytest.mark.timeout(120)  # a guard: without the client timeout this would wait forever
def test_a_hub_that_never_answers_times_out(hub_env):
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # the kernel accepts connections; nobody ever answers
        hub_env.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
        hub_env.setenv(TIMEOUT_ENV, "0.5")
        with pytest.raises(HubError) as err:
            load("org/model")
    assert str(err.value) == OFFLINE


def test_cli_prints_json(tiny, capsys, tmp_path):
    main(["hub", str(tiny["gpt2"]), "the cat sat", "--generate", "3", "--explain", "decoder,1,0,2,1"])
    out = json.loads(capsys.readouterr().out)
    n = len(out["kinds"]["decoder"]["queries"])
    assert out["shape"] == "decoder" and out["kinds"]["decoder"]["shape"] == [2, 2, n, n]
    assert len(out["steps"]) == 3 and out["prediction"]
    assert out["explain"]["explained"] and out["explain"]["scores"][3:] == [None] * (n - 3)
    assert out["explain"]["recomputed"] == pytest.approx(out["explain"]["weight"], abs=1e-5)
    from fixtures.hub_tiny import save_t5

    main(["hub", str(save_t5(tmp_path / "t5")), "the cat sat", "--generate", "2", "--explain", "cross,0,0,1,1"])
    out = json.loads(capsys.readouterr().out)["explain"]
    assert not out["explained"] and "relative-position bias" in out["reason"] and "recomputed" not in out
    main(["hub", str(tiny["marian"]), "der mann", "--target", "a man"])
    out = json.loads(capsys.readouterr().out)
    assert set(out["kinds"]) == {"encoder", "decoder", "cross"} and out["notes"]["reference"] == "a man"


def test_cli_errors_exit_with_the_message(tmp_path, capsys):
    with pytest.raises(SystemExit, match="error: .* has no config.json"):
        main(["hub", str(tmp_path), "text"])
