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
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core import Harness
from recall_gui.core.demo import DEMO_NAME
from tests.conftest import DemoBuild
from tests.kbtools import cosh_entry, write_registry

ROWS = 100_000
SEARCHES = 1_000
WARMUP = 50
#: Resident memory may grow this much over the 950 searches after warm-up (allocator noise, caches that
#: settle); a leak of even 1 KB per search plus the result objects would pass it, 100 KB per search not.
MEMORY_GROWTH_BOUND = 48 * 2**20

#: How many OS threads or file handles a runtime pool may add after warm-up (a leak adds one per search).
POOL_SLACK = 4
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


@pytest.fixture(scope="module")
def big_kb(demo_build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 100k-row knowledge base built from the demo's passages and vectors; returns its registry."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import IvfFlat

    demo = lancedb.connect(str(demo_build.db_dir)).open_table(DEMO_NAME).to_arrow()
    base = np.vstack(demo.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    ids, contents = demo.column("id").to_pylist(), demo.column("content").to_pylist()
    source = np.arange(ROWS) % len(ids)
    rng = np.random.default_rng(2024)
    vectors = base[source] + rng.normal(0.0, 0.01, (ROWS, base.shape[1])).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    root = tmp_path_factory.mktemp("load")
    table = pa.table(
        {
            "id": pa.array([f"{ids[s]}~{i}" for i, s in enumerate(source)], pa.utf8()),
            "content": pa.array([contents[s] for s in source], pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), base.shape[1]),
        }
    )
    created = lancedb.connect(str(root / "db")).create_table("python-docs-100k", table)
    created.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=256))
    return write_registry(root / "registry", [cosh_entry("python-docs-100k", root / "db")])


def test_a_thousand_searches_in_a_row(big_kb: Path) -> None:
    import psutil

    process = psutil.Process()

    async def session() -> dict[str, Any]:
        harness = Harness(big_kb)
        latencies: list[float] = []
        marks: dict[str, Any] = {}
        tops: dict[str, str] = {}
        try:
            for n in range(SEARCHES):
                if n in CHECKPOINTS:
                    marks[n] = Resources.now(process)
                query = QUERIES[n % len(QUERIES)]
                started = time.perf_counter()
                report = await harness.run({"db_name": "python-docs-100k", "query": query, "limit": 5})
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
    assert end.os_threads <= middle.os_threads <= warm.os_threads + POOL_SLACK
    assert end.fds <= middle.fds <= warm.fds + POOL_SLACK
