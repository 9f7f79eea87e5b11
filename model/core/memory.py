"""Giving freed memory back to the system.

glibc's allocator keeps what a process frees for its next allocations: after a forward pass at 1,024
tokens, or an explorer payload built from 150 M weights, hundreds of MB the process no longer uses would
stay counted against it (Community Cloud stops an app past 2.7 GB). ``malloc_trim`` returns them.
"""

from __future__ import annotations

import ctypes
import threading

GIVEN_BACK_AFTER = 2.0  # seconds: a Streamlit page's messages are sent after its script, by the event loop


def give_back_memory(*, later: bool = False) -> None:
    """Return freed heap memory to the system (glibc's ``malloc_trim(0)``); elsewhere (no glibc) nothing.

    ``later``: also once more :data:`GIVEN_BACK_AFTER` seconds from now, in a thread of its own, for what
    is freed after the caller returns (Streamlit serialises and sends a large element once the script has
    handed it over: some 60 MB of buffers at 1,024 tokens)."""
    _trim()
    if later:
        timer = threading.Timer(GIVEN_BACK_AFTER, _trim)
        timer.daemon = True
        timer.start()


def _trim() -> None:
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass
