"""The benchmarks' own smoke tests (run by `make test` beside tests/): the repo root on sys.path, one
CPU thread and fixed seeds, as in tests/. They import bench and fixtures, never tests/, and tests/
never imports bench (tests/test_fixtures.py checks both)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

torch.set_num_threads(1)  # the machine's cores are shared with the servers these tests start


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)
    torch.manual_seed(0)
