"""Every model on every device this machine has: our three (fixtures/tiny.py checkpoints) and tiny
Hugging Face ones (fixtures/hub_tiny.py) give the same logits and attention everywhere.

The reference is a float64 run on the CPU; each device's float32 run must match it within
``ATOL`` (attention weights are probabilities, so an absolute tolerance fits them) and
``LOGIT_ATOL``. A GPU run is also compared with the CPU float32 run. CUDA and MPS are skipped,
saying so, where they are absent.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from fixtures.hub_tiny import save_bert, save_gpt2, save_marian
from fixtures.tiny import make_checkpoints
from model.core.checkpoint import load_checkpoint

ATOL = 1e-5  # attention weights: float32 against float64
LOGIT_ATOL = 1e-4  # logits of these tiny models are O(1)
DEVICE_ATOL = 1e-4  # a GPU's float32 kernels against the CPU's float32 ones

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine"),
    ),
    pytest.param(
        "mps",
        id="mps",
        marks=pytest.mark.skipif(
            not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()),
            reason="no Apple MPS device on this machine",
        ),
    ),
]


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    return make_checkpoints(tmp_path_factory.mktemp("checkpoints"))


@pytest.fixture(scope="module")
def hub_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    return {"gpt2": save_gpt2(root / "gpt2"), "bert": save_bert(root / "bert"), "marian": save_marian(root / "marian")}


def _inputs(task: str, device) -> tuple:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, 12, (2, 9), generator=g)
    if task == "translator":
        return ids.to(device), torch.randint(4, 12, (2, 6), generator=g).to(device)
    return (ids.to(device),)


def _ours(model: torch.nn.Module, task: str, device) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    with torch.no_grad():
        logits, maps = model(*_inputs(task, device), return_attention=True)
    kinds = {
        k: torch.stack(getattr(maps, k)).double().cpu().numpy()
        for k in ("encoder", "decoder", "cross")
        if getattr(maps, k)
    }
    return logits.double().cpu().numpy(), kinds


def _compare(run, reference, atol_logits: float, atol_maps: float, where: str) -> None:
    (logits, maps), (ref_logits, ref_maps) = run, reference
    np.testing.assert_allclose(logits, ref_logits, atol=atol_logits, rtol=0, err_msg=f"{where}: logits")
    assert maps.keys() == ref_maps.keys()
    for kind in maps:
        np.testing.assert_allclose(maps[kind], ref_maps[kind], atol=atol_maps, rtol=0, err_msg=f"{where}: {kind}")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("task", ["classifier", "generator", "translator"])
def test_our_models_agree_on_every_device(ours, task, device):
    cpu = load_checkpoint(ours / task, task=task).model
    reference = _ours(copy.deepcopy(cpu).double(), task, "cpu")
    model = load_checkpoint(ours / task, task=task, device=device).model
    assert next(model.parameters()).device.type == device
    result = _ours(model, task, device)
    _compare(result, reference, LOGIT_ATOL, ATOL, f"{task} on {device} vs float64 CPU")
    if device != "cpu":
        _compare(result, _ours(cpu, task, "cpu"), DEVICE_ATOL, DEVICE_ATOL, f"{task} on {device} vs CPU")


def _hub(hub, text: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Logits of one pass over the run's own ids, and the run's attention maps (made on hub's device)."""
    from model.hub.run import run

    result = run(hub, text, generate=0, target="a man rides" if hub.shape == "encoder-decoder" else None).result
    ins = {k: torch.tensor([v], device=hub.device) for k, v in result.inputs.items()}
    with torch.no_grad():
        if "src" in ins:
            logits = hub.model(input_ids=ins["src"], decoder_input_ids=ins["tgt"]).logits
        else:
            logits = hub.model(input_ids=ins["ids"]).logits
    return logits.double().cpu().numpy(), {k: v.weights.astype(np.float64) for k, v in result.kinds.items()}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["gpt2", "bert", "marian"])
def test_hub_models_agree_on_every_device(hub_folders, name, device):
    from dataclasses import replace

    from model.hub.load import load

    text = "a man rides a bike in the park ."
    cpu = load(str(hub_folders[name]))
    reference = _hub(replace(cpu, model=copy.deepcopy(cpu.model).double()), text)
    hub = load(str(hub_folders[name]), device=device)
    assert hub.device.type == device
    result = _hub(hub, text)
    _compare(result, reference, LOGIT_ATOL, ATOL, f"{name} on {device} vs float64 CPU")
    if device != "cpu":
        _compare(result, _hub(cpu, text), DEVICE_ATOL, DEVICE_ATOL, f"{name} on {device} vs CPU")
    # the step-by-step explanation recomputes the device's own weight from tensors on that device
    from model.hub.explain import explain
    from model.hub.run import run

    out = run(hub, text, generate=3)
    kind = "cross" if hub.shape == "encoder-decoder" else next(iter(out.result.kinds))
    view = out.result.kinds[kind]
    e = explain(hub, out.result, kind, view.layers - 1, 1, len(view.queries) - 1, 1)
    assert e.weight == pytest.approx(e.map_weight, abs=DEVICE_ATOL)
