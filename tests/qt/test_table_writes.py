"""Another program writes the table while the window shows it: after the next search, the header's rows
and version and the version list's "latest" are the table's as LanceDB reports it, and an older version
the user opened stays shown."""

from __future__ import annotations

import asyncio
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from PySide6.QtWidgets import QComboBox

from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, until, waiting_for

QUERY = "How do I change my password?"


def add_row(kb: KnowledgeBase, embedder: Any, entry_id: str, text: str) -> Any:
    """Another program adds a row: a new version of the table."""
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    vector = np.asarray(embedder.embed_sync(text), np.float32)
    table.add(
        pa.table(
            {
                "id": [entry_id],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )
    return table


def versions_listed(window: MainWindow) -> list[str]:
    combo = window.findChild(QComboBox, "versionCombo")
    return [combo.itemText(row) for row in range(combo.count())]


def listed_latest(window: MainWindow) -> bool:
    return any("latest" in item for item in versions_listed(window))


def search(window: MainWindow, loop: asyncio.AbstractEventLoop) -> None:
    page = window.knowledge
    page.query_bar.query_edit.setText(QUERY)
    with waiting_for(loop, page.searchFinished):
        page.request_search()


def header(window: MainWindow) -> str:
    text: str = window.knowledge.database_bar.info.text()
    return text


def test_after_another_program_writes_the_header_and_the_list_follow_the_search(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, until(lambda: listed_latest(window), "the versions listed"))
    assert "12 rows" in header(window) and "version 1" in header(window)

    for number, text in enumerate(("Tide tables list high and low water.", "Passwords expire yearly."), 1):
        table = add_row(kb, embedder, f"new-{number}", text)
        search(window, loop)
        latest, rows = table.version, table.count_rows()  # the oracle: LanceDB's own facts
        run(loop, until(lambda latest=latest: f"version {latest}" in header(window), f"version {latest}"))
        assert f"{rows} rows" in header(window)
        run(
            loop,
            until(lambda latest=latest: versions_listed(window)[0].startswith(f"{latest} · latest"), "list"),
        )
        assert sum("latest" in item for item in versions_listed(window)) == 1


def test_an_older_version_opened_stays_shown_while_the_list_marks_the_new_latest(
    kb: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    add_row(kb, embedder, "new-1", "Tide tables list high and low water.")  # version 2
    window = open_window(kb.registry_dir)
    page = window.knowledge
    run(loop, until(lambda: listed_latest(window), "the versions listed"))
    run(loop, page.open_version(1, page.read_inputs()))
    table = add_row(kb, embedder, "new-2", "Passwords expire yearly.")  # version 3, while 1 is shown
    search(window, loop)
    latest = table.version
    run(
        loop,
        until(lambda: versions_listed(window)[0].startswith(f"{latest} · latest"), "the new latest listed"),
    )
    assert f"version {latest}" in header(window)
    assert page.looking_at.version == 1
    assert window.findChild(QComboBox, "versionCombo").currentText().startswith("1 · ")
    assert f"the latest is version {latest}" in page.version_bar.note.message
