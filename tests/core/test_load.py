"""Load: 1,000 searches in a row through the core on a 100k-row knowledge base, with no error, bounded
memory growth and no leaked tasks, threads or file handles.

The 100k rows are honest: the demo's real passages with their real model vectors, each copied with a
small random perturbation (then renormalised, as the model's vectors are), so every query still finds the
passages it should. The table has an IVF index, as a knowledge base of that size would.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

from recall_gui.core.search.harness import Harness
from tests.kbtools import KnowledgeBase

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROWS = 100_000
SEARCHES = 1_000
WARMUP = 50
#: Resident memory may grow this much over the 950 searches after warm-up (allocator noise, caches that
#: settle); a leak of even 1 KB per search plus the result objects would pass it, 100 KB per search not.
MEMORY_GROWTH_BOUND = 48 * 2**20

#: How many OS threads or file handles runtime pools (LanceDB's Rust workers, onnxruntime's) may add or
#: retire between checkpoints: they start workers on demand and drop idle ones. A leak of one per search,
#: or even one per 50 searches, exceeds it over the 500 searches between checkpoints.
POOL_SLACK = 8
CHECKPOINTS = (WARMUP, SEARCHES // 2)


@dataclass(frozen=True)
class Resources:
    rss: int
    fds: int
    python_threads: int
    os_threads: int

    @classmethod
    def now(cls, process: Any) -> Resources:
        return cls(
            process.memory_info().rss, process.num_fds(), threading.active_count(), process.num_threads()
        )


QUERIES = [
    "how do generators work",
    "what does the with statement do",
    "how are exceptions raised and caught",
    "string formatting with format specifiers",
    "how do decorators work",
    "the global and nonlocal statements",
    "comparisons between objects of different types",
    "what is a lambda expression",
    "how does import find a module",
    "how are class attributes looked up",
    "list comprehensions and generator expressions",
    "async def and await",
    "boolean operations and or not",
    "what does the assert statement do",
    "slicing sequences",
    "how does the for loop iterate",
    "keyword arguments in function calls",
    "the del statement",
    "truth value testing",
    "integer literals and numeric types",
]


def test_a_thousand_searches_in_a_row(kb_100k: KnowledgeBase) -> None:
    import psutil

    process = psutil.Process()

    async def session() -> dict[str, Any]:
        harness = Harness(kb_100k.registry_dir)
        latencies: list[float] = []
        marks: dict[str, Any] = {}
        tops: dict[str, str] = {}
        try:
            for n in range(SEARCHES):
                if n in CHECKPOINTS:
                    marks[n] = Resources.now(process)
                query = QUERIES[n % len(QUERIES)]
                started = time.perf_counter()
                report = await harness.run({"db_name": kb_100k.name, "query": query, "limit": 5})
                latencies.append((time.perf_counter() - started) * 1000)
                assert len(report.result.hits) == 5
                tops.setdefault(query, report.result.hits[0].id)
            marks[SEARCHES] = Resources.now(process)
            marks["method"] = report.result.method
            marks["tasks"] = len(asyncio.all_tasks()) - 1
        finally:
            await harness.aclose()
        marks["latencies"], marks["tops"] = latencies, tops
        return marks

    started = time.perf_counter()
    marks = asyncio.run(session())
    elapsed = time.perf_counter() - started
    warm, middle, end = marks[WARMUP], marks[SEARCHES // 2], marks[SEARCHES]
    growth = end.rss - warm.rss
    latencies = sorted(marks["latencies"])
    print(
        f"\n{SEARCHES} searches on {ROWS} rows ({marks['method']}): {elapsed:.1f} s, "
        f"p50 {statistics.median(latencies):.1f} ms, p95 {latencies[int(0.95 * len(latencies))]:.1f} ms; "
        f"RSS growth after warm-up {growth / 2**20:.1f} MiB (bound {MEMORY_GROWTH_BOUND / 2**20:.0f} MiB)"
    )
    assert marks["tops"]["how do generators work"].split("#")[0] in ("yield", "yieldexpr")
    assert marks["tasks"] == 0
    assert growth < MEMORY_GROWTH_BOUND
    # Python threads: exactly those there were. OS threads and file handles include LanceDB's Rust pools,
    # which may start a worker or open a file late: they must have settled, not grow with the searches.
    assert end.python_threads == warm.python_threads
    for count in ("os_threads", "fds"):
        assert getattr(end, count) <= getattr(middle, count) + POOL_SLACK, count
        assert getattr(end, count) <= getattr(warm, count) + POOL_SLACK, count
