"""Near-copies among the results are marked "≈ n" beside their rank, and the caption says how many
distinct entries the agent really gets; the copies are known by construction (a passage stored twice)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QTableView
from pytestqt.qtbot import QtBot

from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry
from tests.qt.conftest import WindowFactory, waiting_for

QUERY = "How do I change my password?"


def test_a_passage_stored_twice_is_marked_as_a_copy_of_the_first(
    tmp_path: Path,
    embedder: Any,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    texts = {**PASSAGES, "pw-reset-again": PASSAGES["pw-reset"]}
    write_lance_table(
        tmp_path / "db",
        "notes",
        list(texts),
        list(texts.values()),
        [embedder.embed_sync(t) for t in texts.values()],
    )
    window = open_window(write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")]))
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, QUERY)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)
    model = window.findChild(QTableView, "resultsTable").model()
    ids = [model.index(row, 1).data() for row in range(model.rowCount())]
    ranks = [model.index(row, 0).data() for row in range(model.rowCount())]
    first, second = sorted(ids.index(i) for i in ("pw-reset", "pw-reset-again"))
    assert ranks[second] == f"{second + 1}  ≈ {first + 1}"
    assert [r for n, r in enumerate(ranks) if n != second] == [
        str(n + 1) for n in range(len(ids)) if n != second
    ]
    captions = [label.text() for label in window.findChildren(QLabel) if "distinct" in label.text()]
    assert captions and f"· {len(ids) - 1} distinct" in captions[0]
