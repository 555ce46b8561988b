"""Waiting on a condition outside Qt's event loop (a child process, a file a thread writes, a log line).

Tests wait for what they need to see, bounded, never for a fixed time: a fixed pause is either too short
on a busy machine (a flaky failure) or longer than needed (a slow suite). Qt tests use qtbot.waitUntil /
waitSignal, and tests/qt/conftest.py's ``until`` and ``waiting_for`` on the test's event loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: How often a condition is checked: often enough to add little latency, rarely enough to cost nothing.
POLL_S = 0.02


def wait_until(condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Return once ``condition()`` is true; fail naming ``what`` if it is not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting until {what}")
        time.sleep(POLL_S)


def spawned_children() -> set[int]:
    """This process's children started by multiprocessing's spawn (the session's filter worker is one)."""
    import contextlib

    import psutil

    found = set()
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if "spawn_main" in " ".join(child.cmdline()):
                found.add(child.pid)
    return found
