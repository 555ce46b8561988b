"""The benchmark's account of a GUI-thread gap: the scheduler's and the host's counters, read right."""

from __future__ import annotations

import sys
import time

import pytest

from bench.gap import (
    GapParts,
    Sample,
    parse_schedstat,
    parse_steal_per_cpu,
    thread_sched_ms,
)

PROC_STAT = """cpu  100 0 50 9000 10 0 3 17 0 0
cpu0 60 0 30 4500 5 0 2 5 0 0
cpu1 40 0 20 4500 5 0 1 12 0 0
intr 12345 0 0
ctxt 999
"""


def test_schedstat_gives_cpu_and_wait_in_ms() -> None:
    assert parse_schedstat("123000000 45000000 7\n") == (123.0, 45.0)
    assert parse_schedstat("") is None
    assert parse_schedstat("not numbers") is None


def test_steal_is_read_per_cpu_not_from_the_total_line() -> None:
    assert parse_steal_per_cpu(PROC_STAT, 100) == (50.0, 120.0)
    assert parse_steal_per_cpu("intr 1 2 3\n", 100) is None


def test_a_gap_is_split_into_cpu_wait_and_the_most_stolen_cpu() -> None:
    before = Sample(1000.0, (10.0, 5.0), (0.0, 100.0))
    after = Sample(1060.0, (22.0, 35.0), (40.0, 110.0))
    parts = GapParts.between(before, after)
    assert parts == GapParts(60.0, 12.0, 30.0, 40.0)
    assert parts.to_json() == {"gap_ms": 60.0, "gui_cpu_ms": 12.0, "cpu_wait_ms": 30.0, "host_steal_ms": 40.0}


def test_what_the_system_does_not_tell_stays_unknown() -> None:
    parts = GapParts.between(Sample(0.0, None, None), Sample(25.0, (1.0, 1.0), (3.0,)))
    assert parts == GapParts(25.0, None, None, None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/thread-self is Linux's")
def test_the_threads_cpu_counter_follows_its_work() -> None:
    before = thread_sched_ms()
    started = time.thread_time()
    while time.thread_time() - started < 0.03:
        pass
    after = thread_sched_ms()
    assert before is not None and after is not None
    assert after[0] - before[0] >= 20.0
    assert after[1] >= before[1]
