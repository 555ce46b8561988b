"""The window owns the one registry snapshot: its harness resolves names in it and never reads the
registry itself (the window reads it off the GUI thread and follows the files)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.errors import DatabaseNotFoundError
from recall_gui.core.registry import registry as registry_module
from recall_gui.core.registry import registry_keeper as keeper_module
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for

QUERY = "What is the capital of France?"


def test_the_windows_harness_searches_the_windows_snapshot_without_reading_the_registry(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    registry_dir = write_registry(
        tmp_path / "reg",
        [cosh_entry(kb.name, kb.db_dir), view_entry(kb, "later")],
        active=[kb.name],
    )
    reads_by_harness: list[str] = []
    # A harness reads the registry only through its own keeper: the window's must never.
    monkeypatch.setattr(keeper_module, "load_registry", lambda d, *_: reads_by_harness.append(str(d)))
    gui_thread = threading.get_ident()
    reads_on_gui: list[Path] = []
    reads: list[Path] = []
    real_load = registry_module.load_registry

    def watched_load(directory: Path, previous: Any = None) -> Any:
        reads.append(directory)
        if threading.get_ident() == gui_thread:
            reads_on_gui.append(directory)
        return real_load(directory, previous)

    window = open_window(registry_dir)
    monkeypatch.setattr("recall_gui.qt.window.registry_reading.load_registry", watched_load)
    harness = run(loop, window.services.harness())
    assert harness.registry is window.registry
    answer = json.loads(run(loop, harness.recall_search({"db_name": kb.name, "query": QUERY, "limit": 2})))
    assert answer["results"][0]["id"] == "paris"
    with pytest.raises(DatabaseNotFoundError, match="Active databases: notes"):
        harness.resolve_active("later")

    # Another program activates "later": the window follows the files, and its harness with it.
    with waiting_for(loop, window.registryReloaded):
        (registry_dir / "rag_active.json").write_text(json.dumps([kb.name, "later"]), encoding="utf-8")
    assert harness.resolve_active("later").name == "later"
    assert harness.registry is window.registry
    assert reads and reads_on_gui == []  # the window read it again, on its worker
    assert reads_by_harness == []
