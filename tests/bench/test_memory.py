"""The benchmark's memory growth is the peak's rise above the start: it sees memory used and given back
within the stretch, and memory an earlier step frees during it cannot make it negative (as the difference
of two readings of the resident size did)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bench import memory
from bench.memory import PeakGrowth, resident_mb
from tests.waiting import wait_until

MB = 2**20


@pytest.fixture(params=["high-water mark", "sampling thread"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    if request.param == "sampling thread":  # where /proc/self/clear_refs cannot be written
        monkeypatch.setattr(memory, "CLEAR_REFS", tmp_path / "missing" / "clear_refs")
    yield request.param


def allocated(megabytes: int) -> np.ndarray:
    block = np.ones(megabytes * MB // 8)  # written, so resident
    return block


@pytest.mark.slow
def test_memory_used_and_freed_within_the_stretch_counts(way: str) -> None:
    growth = PeakGrowth()
    block = allocated(200)
    wait_until(lambda: growth.mb() >= 150, "the peak is seen", timeout=10)  # the sampler's next reading
    del block
    assert growth.stop() >= 150


def test_memory_freed_during_the_stretch_makes_no_negative_figure(way: str) -> None:
    earlier = allocated(200)
    before = resident_mb()
    growth = PeakGrowth()
    del earlier
    after = resident_mb()
    assert after - before < -150  # the control: what the difference of two readings says
    assert growth.stop() >= 0
