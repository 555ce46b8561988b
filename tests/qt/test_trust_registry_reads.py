"""The window reads the registry off the GUI thread (a large one takes long to read), and keeps its
guarantees while a read is under way: its own write is never taken for another program's, another
program's change is still noticed, and unsaved text survives."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QPlainTextEdit, QPushButton

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.search.health import DatabaseHealth
from recall_gui.qt.panels import database_bar
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.window import registry_reading
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.test_trust_registry import banner, dbs_json, rewrite, two_database_registry

#: How long a read takes in these tests: long enough for the window's watcher (200 ms) to fire meanwhile.
SLOW_READ_S = 0.6


class SlowReads:
    """``load_registry`` as the window calls it, made slow, with the threads it ran on."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        #: Called on the reading thread after the files were read, before the read returns.
        self.after_read: Callable[[], None] = lambda: None

    def __call__(self, directory: Path, previous: Registry | None = None) -> Registry:
        self.threads.append(threading.current_thread())
        registry = load_registry(directory, previous)
        self.after_read()
        time.sleep(SLOW_READ_S)  # fixed on purpose: the slow registry read this test simulates
        return registry


@pytest.fixture
def slow_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowReads]:
    reads = SlowReads()
    monkeypatch.setattr(registry_reading, "load_registry", reads)
    yield reads


def ticks_while(loop: asyncio.AbstractEventLoop, action: Callable[[], Any], signal: Any) -> int:
    """How often a 10 ms timer fired on the GUI thread between ``action`` and ``signal``."""
    ticks = [0]
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.__setitem__(0, ticks[0] + 1))
    timer.start()
    try:
        with waiting_for(loop, signal):
            action()
    finally:
        timer.stop()
    return ticks[0]


def test_f5_reads_the_registry_off_the_gui_thread_and_the_window_stays_responsive(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, slow_reads: SlowReads
) -> None:
    window = open_window(kb.registry_dir)
    slow_reads.threads.clear()  # the window's first read, before it is shown, is not what this is about
    data = dbs_json(kb.registry_dir)
    data["dbs"].append(cosh_entry("added", kb.db_dir))
    rewrite(kb.registry_dir / "rag_dbs.json", json.dumps(data))
    ticks = ticks_while(loop, window.menus.reload_action.trigger, window.registryReloaded)
    assert "added" in window.knowledge.database_bar.names()
    assert slow_reads.threads and threading.main_thread() not in slow_reads.threads
    assert ticks >= SLOW_READ_S / 0.010 / 3  # the GUI thread served its timer while the registry was read
    run(loop, window.operations.wait_idle())


def test_the_windows_own_write_is_not_taken_for_another_programs_while_it_is_read(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    slow_reads: SlowReads,
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    window = open_window(registry_dir)
    slow_reads.threads.clear()
    suffix = window.findChild(QPlainTextEdit, "suffixEdit")
    suffix.setPlainText("my unsaved suffix")
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    editor.setPlainText("Saved from the window")
    with waiting_for(loop, window.registryReloaded):
        window.findChild(QPushButton, "saveDescriptionButton").click()
    run(
        loop, window.operations.wait_idle()
    )  # the watcher fired during the slow read, and any read it started
    assert "another program" not in banner(window)[0]
    assert window.registry.get(kb.name).description == "Saved from the window"  # type: ignore[union-attr]
    assert suffix.toPlainText() == "my unsaved suffix"
    assert threading.main_thread() not in slow_reads.threads


@pytest.mark.slow
def test_another_programs_change_during_a_read_is_still_noticed(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    slow_reads: SlowReads,
) -> None:
    registry_dir = two_database_registry(kb, tmp_path)
    window = open_window(registry_dir)
    theirs = dbs_json(registry_dir)
    theirs["dbs"][1]["description"] = "Rewritten by cosh while the window was reading"

    def another_program_writes() -> None:
        slow_reads.after_read = lambda: None
        rewrite(registry_dir / "rag_dbs.json", json.dumps(theirs, indent=2))

    slow_reads.after_read = another_program_writes
    with waiting_for(loop, window.registryReloaded):
        window.menus.reload_action.trigger()  # this read misses their change: it read the files before it
    run(loop, window.operations.wait_idle())
    assert window.registry.get("archive").description == theirs["dbs"][1]["description"]  # type: ignore[union-attr]
    assert "changed by another program" in banner(window)[0]


def test_listing_many_databases_draws_each_status_dot_once(
    qapp: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    drawn: list[str] = []
    draw = database_bar.status_dot
    monkeypatch.setattr(database_bar, "status_dot", lambda state: drawn.append(state) or draw(state))
    entries = [cosh_entry(f"db-{i}", f"/data/{i}") for i in range(500)]
    registry = load_registry(write_registry(tmp_path, entries, active=[e["name"] for e in entries[:250]]))
    bar = DatabaseBar()
    bar.set_registry(registry)
    model = bar.combo.model()
    dots = [model.index(row, 0).data(Qt.ItemDataRole.DecorationRole) for row in range(model.rowCount())]
    bar.set_health({db.name: DatabaseHealth(db, None, ()) for db in registry.databases})
    dots += [model.index(row, 0).data(Qt.ItemDataRole.DecorationRole) for row in range(model.rowCount())]
    assert len(bar.names()) == 500 and sum(dot is not None for dot in dots) == 1000
    assert sorted(drawn) == ["checking", "inactive", "ok"]  # 250 active, 250 not
    bar.deleteLater()
