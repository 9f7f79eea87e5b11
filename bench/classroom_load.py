"""Classroom load: placeholder, filled in below."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bench._server import free_port, stop

REDIS_SERVER = "redis-server"


@contextmanager
def redis_server(startup_seconds: float = 20) -> Iterator[str]:
    """A throw-away ``redis-server`` on a free loopback port (no snapshots, no append-only file);
    yields its URL and stops it (by its process id) on exit. RuntimeError when it is not installed
    or does not answer."""
    exe = shutil.which(REDIS_SERVER)
    if exe is None:
        raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server; `make redis-server`)")
    import redis

    port = free_port()
    cmd = [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client, deadline = redis.Redis.from_url(url), time.monotonic() + startup_seconds
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {port} did not start") from None
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        stop(proc)
