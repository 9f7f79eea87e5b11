"""A real Streamlit server and Debian's Chromium (driven by Playwright) for the browser tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_SECONDS = 60


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as resp:
            return resp.status == 200 and resp.read().strip() == b"ok"
    except (OSError, urllib.error.URLError):
        return False


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Base URL of ``streamlit run app.py`` on a free loopback port; stopped after the session."""
    ARTIFACTS.mkdir(exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    log_path = ARTIFACTS / "streamlit.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while not healthy(base):
                if proc.poll() is not None:
                    pytest.fail(f"streamlit exited with code {proc.returncode}; see {log_path}")
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"streamlit did not answer {base}/_stcore/health within {STARTUP_SECONDS} s; see {log_path}"
                    )
                time.sleep(0.25)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium through Playwright; the tests skip only when it is not installed."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (`make test` installs it with apt-get when run as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, app_url: str) -> Iterator[object]:
    """A fresh browser context and page per test, so sessions never share state."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()
