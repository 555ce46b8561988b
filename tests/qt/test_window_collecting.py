"""While the window is open, Python's collector runs on the window's thread only (qt/window/collecting.py):
a reference cycle dropped on a worker thread is freed on the window's thread, never on the worker's."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, ClassVar

from PySide6.QtCore import QObject

from recall_gui.qt.window.collecting import WindowCollector
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import run, until


class Cycle:
    """Garbage only the collector frees; it notes the thread that freed it."""

    freed_on: ClassVar[list[str]] = []

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        Cycle.freed_on.append(threading.current_thread().name)


def drop_cycles_on_a_worker(count: int) -> None:
    """Make and drop ``count`` cycles on a thread of its own, allocating well past every threshold."""

    def work() -> None:
        for _ in range(count):
            Cycle()
        for _ in range(3):
            [[n] for n in range(100_000)]  # allocations that would start automatic passes here

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join(60)


def test_cycles_dropped_on_a_worker_are_freed_on_the_collectors_thread(
    qapp: Any, loop: asyncio.AbstractEventLoop
) -> None:
    owner = QObject()
    collector = WindowCollector(owner)
    collector.start()
    try:
        Cycle.freed_on.clear()
        drop_cycles_on_a_worker(1_000)
        assert Cycle.freed_on == []  # nothing collected on the worker
        run(loop, until(lambda: len(Cycle.freed_on) == 1_000, "the collector's timer frees the cycles"))
        assert set(Cycle.freed_on) == {threading.main_thread().name}
    finally:
        collector.stop()
        owner.deleteLater()


def test_the_window_collects_while_it_is_open_and_hands_collection_back_when_closed(
    kb: KnowledgeBase, open_window: Any
) -> None:
    window = open_window(kb.registry_dir)
    assert window.collector.holding
    window.close()
    assert not window.collector.holding
    window.collector.stop()  # again: nothing more to hand back
    assert not window.collector.holding
