"""Shared test set-up: the repo root on sys.path, one CPU thread, fixed seeds."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the machine's cores are shared (training runs, the browser tests' Streamlit server)
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    """Every test starts from the same random state, so tiny-model results are reproducible."""
    random.seed(0)
    torch.manual_seed(0)
