"""Load through the window: 200 searches in a row, typed and entered, on a 100,000-row knowledge base. No
error; after each one the table, its caption, the status bar and the entry detail show that search's
answer and nothing else; resident memory grows less than a stated bound after warm-up; no asyncio task,
thread, file handle or Qt object is left behind."""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from recall_gui.qt.main_window import MainWindow
from tests.core.test_load import QUERIES
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, waiting_for
from tests.qt.trusttools import banner, column, core_ids

SEARCHES = 200
WARMUP = 20
#: Resident memory may grow this much over the 180 searches after warm-up (allocator noise, Qt's caches
#: settling). A leak of the results of each search (five rows and their texts, the model's row objects)
#: would not show within it; a leak of the search's table data (~150 KB of distances per search on
#: 100,000 rows) or of a page of rows per search would.
MEMORY_GROWTH_BOUND = 24 * 2**20
#: OS threads or file handles that runtime pools (LanceDB's, onnxruntime's, which start workers on
#: demand and retire idle ones) may add over the last 100 searches, and twice that after warm-up; a leak of
#: one per search, or even one per 10 searches, exceeds it.
POOL_SLACK = 8


@dataclass(frozen=True)
class Resources:
    rss: int
    fds: int
    python_threads: int
    os_threads: int
    qt_objects: int
    tasks: int

    @classmethod
    def now(cls, process: Any, window: MainWindow, loop: asyncio.AbstractEventLoop) -> Resources:
        return cls(
            process.memory_info().rss,
            process.num_fds(),
            threading.active_count(),
            process.num_threads(),
            len(window.findChildren(QObject)),
            len([task for task in asyncio.all_tasks(loop) if not task.done()]),
        )


def check_consistent(window: MainWindow, query: str, db_name: str) -> list[str]:
    """Everything the window shows belongs to the search for ``query``; returns the ids shown."""
    knowledge = window.knowledge
    model = knowledge.results.results_model
    result = model.result
    assert result is not None and result.query == query
    table = knowledge.results.results_table
    ids = column(table, 1)
    assert ids == [hit.id for hit in result.hits] and len(ids) == 5
    assert [rank.split()[0] for rank in column(table, 0)] == [
        "1",
        "2",
        "3",
        "4",
        "5",
    ]  # "2  ≈ 1": a near-copy
    distances = [hit.distance for hit in result.hits]
    assert distances == sorted(distances)
    assert knowledge.results.caption.text().startswith(f"5 results for “{query}” in {db_name}")
    assert knowledge.status_count.text() == "5 results"
    assert window.findChild(QLineEdit, "detailId").text() == ids[0]
    assert knowledge.results.mode == "results" and not knowledge.query_bar.cancel_button.isEnabled()
    return ids


def test_two_hundred_searches_in_a_row_through_the_window(
    kb_100k: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    import psutil

    process = psutil.Process()
    window = open_window(kb_100k.registry_dir)
    query = window.findChild(QLineEdit, "queryEdit")
    answers: dict[str, set[tuple[str, ...]]] = {}
    marks: dict[int, Resources] = {}
    latencies: list[float] = []
    started = time.perf_counter()
    for n in range(SEARCHES):
        if n in (WARMUP, SEARCHES // 2):
            loop.run_until_complete(window.operations.wait_idle())
            marks[n] = Resources.now(process, window, loop)
        text = QUERIES[n % len(QUERIES)]
        query.selectAll()
        qtbot.keyClicks(query, text)
        begun = time.perf_counter()
        with waiting_for(loop, window.knowledge.searchFinished):
            qtbot.keyClick(query, Qt.Key.Key_Return)
        latencies.append((time.perf_counter() - begun) * 1000)
        assert banner(window) == ("", ""), n
        answers.setdefault(text, set()).add(tuple(check_consistent(window, text, kb_100k.name)))
    loop.run_until_complete(window.operations.wait_idle())
    end = Resources.now(process, window, loop)
    elapsed = time.perf_counter() - started

    warm, middle = marks[WARMUP], marks[SEARCHES // 2]
    growth = end.rss - warm.rss
    latencies.sort()
    print(
        f"\n{SEARCHES} searches through the window on 100,000 rows: {elapsed:.1f} s, "
        f"p50 {statistics.median(latencies):.1f} ms, p95 {latencies[int(0.95 * len(latencies))]:.1f} ms; "
        f"RSS growth after warm-up {growth / 2**20:.1f} MiB (bound {MEMORY_GROWTH_BOUND / 2**20:.0f} MiB); "
        f"Qt objects {warm.qt_objects} -> {end.qt_objects}; threads {warm.os_threads} -> {end.os_threads}; "
        f"file handles {warm.fds} -> {end.fds}"
    )
    # The same query always shows the same rows, and they are the core's.
    for text, shown in answers.items():
        assert shown == {tuple(core_ids(loop, kb_100k.registry_dir, kb_100k.name, text))}, text
    assert growth < MEMORY_GROWTH_BOUND
    assert end.tasks == 0 and window.operations.pending == 0
    assert end.qt_objects == warm.qt_objects
    assert end.python_threads == warm.python_threads
    for count in ("os_threads", "fds"):
        assert getattr(end, count) <= getattr(middle, count) + POOL_SLACK, count
        assert getattr(end, count) <= getattr(warm, count) + 2 * POOL_SLACK, count
