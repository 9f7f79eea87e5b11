"""Shared test set-up: the repo root on sys.path, one CPU thread, fixed seeds, and the tiny
checkpoints and app environment of the AppTest page tests (their helpers are in ``tests/apptest.py``)."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the machine's cores are shared (training runs, the browser tests' Streamlit server)
torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def _rooms_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Classroom rooms live in a file by default (``rooms.store.rooms_path``): tests, and the app servers
    they start, keep theirs in a temporary folder, never in the checkout's ``.attention/``."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ATTENTION_ROOMS_DIR", str(tmp_path_factory.mktemp("rooms")))
        yield


@pytest.fixture(autouse=True)
def _seed() -> None:
    """Every test starts from the same random state, so tiny-model results are reproducible."""
    random.seed(0)
    torch.manual_seed(0)


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tiny random-weight checkpoints of the three tasks (``fixtures/tiny.py``), written once per module.
    A module that needs other ones (with training histories, say) defines its own ``checkpoints``."""
    from fixtures.tiny import make_checkpoints

    return make_checkpoints(tmp_path_factory.mktemp("checkpoints"))


@pytest.fixture
def app_env(checkpoints: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app reads ``checkpoints``, and every test starts and ends with empty Streamlit caches.
    Page-test modules opt in with ``pytestmark = pytest.mark.usefixtures("app_env")``; a test
    may still point ``ATTENTION_CHECKPOINTS`` elsewhere with ``monkeypatch``."""
    from model.core.checkpoint import CHECKPOINTS_ENV
    from tests.apptest import clear_caches

    monkeypatch.setenv(CHECKPOINTS_ENV, str(checkpoints))
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def hub_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No Hub (a closed loopback port), an empty Hub cache, the default parameter cap and empty Streamlit
    caches: a page test of a Hugging Face model sees only the folders it writes itself."""
    from fixtures.hub_tiny import FakeHub
    from model.hub.load import MAX_PARAMS_ENV
    from tests.apptest import clear_caches

    with FakeHub({}) as fake:
        closed = fake.url  # nothing listens there once the stand-in has stopped
    monkeypatch.setenv("HF_ENDPOINT", closed)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("HF_HOME", raising=False)
    monkeypatch.delenv(MAX_PARAMS_ENV, raising=False)
    clear_caches()
    yield monkeypatch
    clear_caches()
