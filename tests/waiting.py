"""Waiting on a condition from a test without an event loop: the test goes on as soon as it holds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Return once ``condition()`` is true; fail, naming ``what``, after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        pause.wait(0.02)  # polls: the condition has no signal of its own (another thread's file write)
