"""bench/classroom_load.py in miniature: a real app server (and, for Redis, two of them on one
redis-server), a teacher and three students as websocket-level sessions, one round. Every answer
must be counted, every student must see the reveal, and no page may show an error."""

from __future__ import annotations

import shutil

import pytest

from bench.classroom_load import run_backend


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_a_round_through_the_apps_websocket(backend):
    if backend == "redis" and shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (`make redis-server` installs it as root)")
    result = run_backend(backend, students=3, rounds=1, processes=2 if backend == "redis" else 1)
    assert result["errors"] == 0, result["error_samples"]
    assert result["answers_sent"] == 3 and result["answers_counted"] == 3 and result["answers_lost"] == 0
    assert result["reveal_latency_s"]["n"] == 3
    assert result["app_processes"] == (2 if backend == "redis" else 1)
    assert result["answers_in_store"] == 3
