"""A process's age, the clock of the start-up figures: never longer than the time since its parent
started it (psutil's reading was, by the fraction of a second the boot time loses in /proc/stat)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]
#: One clock tick (the start is counted in ticks of 10 ms) and a little for rounding.
TICK_S = 0.011


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="read on Linux's own clock")
def test_a_childs_age_is_within_a_tick_of_the_time_since_it_was_started() -> None:
    code = "from bench.process_age import process_age_s; print(process_age_s())"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    elapsed = time.monotonic() - started
    age = float(done.stdout)
    assert 0 < age <= elapsed + TICK_S
