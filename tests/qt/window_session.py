"""A session of everything a user does in the window with a knowledge base, driven with real key events.

Browsing and paging to the last row, opening rows (which reads their vectors), filtering, searching with
odd queries, copying, exporting (to a folder outside the knowledge base), changing the limit, and the
description panel: switching a database off and on and editing its description (both write the registry,
never the knowledge base), then F5. Run in-process by :func:`drive_session` on a started window, or as
``python -m tests.qt.window_session REGISTRY_DIR DB_NAME EXPORT_DIR CONFIG_DIR`` (for sessions under
another user or on a read-only mount), which prints the JSON summary. The summary says what the session
saw, so a test can tell that it really worked.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableView,
)

from recall_gui.core.messages import UserMessage
from recall_gui.qt.main_window import MainWindow
from tests.qt.conftest import run, waiting_for

QUERIES = ("How do I change my password?", "capital of France", "🚀 ش emoji", "ocean tides\tand the Moon")
DESCRIPTION = "Edited in a read-only session: the registry changes, the knowledge base does not."


def select_row(table: QTableView, row: int) -> None:
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
    table.selectionModel().setCurrentIndex(table.model().index(row, 0), flags)


def drive_session(window: MainWindow, loop: asyncio.AbstractEventLoop, export_dir: Path) -> dict[str, Any]:
    knowledge = window.knowledge
    messages: list[UserMessage] = []
    show = window.banner.show_message

    def record(message: UserMessage) -> None:
        messages.append(message)
        show(message)

    window.banner.show_message = record  # type: ignore[method-assign]
    summary: dict[str, Any] = {}
    run(loop, window.operations.wait_idle())

    # Browse every row, page by page, as the view scrolls to the end.
    browse = window.findChild(QTableView, "browseTable")
    model = knowledge.browse_model
    total = model.total or 0
    for _ in range(total // model.cache.page_size + 2):
        if model.rowCount() >= total:
            break
        browse.scrollToBottom()  # the view asks the model for the next page
        run(loop, window.operations.wait_idle())
    summary["rows"], summary["paged"] = total, model.rowCount()
    summary["pages_read"] = model.cache.pages_held
    select_row(browse, total - 1)  # open the last row: its vector is read on demand
    run(loop, window.operations.wait_idle())
    summary["last_row"] = window.findChild(QLineEdit, "detailId").text()
    summary["last_row_vector"] = window.findChild(QLabel, "detailVector").text()

    # Filter, open a filtered row, export the filtered rows.
    filter_edit = window.findChild(QLineEdit, "filterEdit")
    QTest.keyClicks(filter_edit, "MOON")
    with waiting_for(loop, knowledge.browseReady):
        QTest.keyClick(filter_edit, Qt.Key.Key_Return)
    summary["filtered"] = model.total
    select_row(browse, 0)
    run(loop, window.operations.wait_idle())
    summary["rows_exported"] = run(loop, knowledge.exporter.export_to(export_dir / "rows.json", "json"))

    # Search from the keyboard, open and copy results, export them.
    query = window.findChild(QLineEdit, "queryEdit")
    tops = []
    for text in QUERIES:
        QTest.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
        QGuiApplication.clipboard().setText(text)
        QTest.keyClick(query, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
        with waiting_for(loop, knowledge.searchFinished):
            QTest.keyClick(query, Qt.Key.Key_Return)
        tops.append(knowledge.results.results_model.hit(0).id)
    summary["tops"] = tops
    results = window.findChild(QTableView, "resultsTable")
    results.setFocus()
    select_row(results, 1)
    QTest.keyClick(results, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    summary["copied"] = QGuiApplication.clipboard().text().split("\t")[1]
    spin = window.findChild(QSpinBox, "limitSpin")
    spin.setFocus()
    spin.selectAll()
    QTest.keyClicks(spin, "12")
    with waiting_for(loop, knowledge.searchFinished):
        QTest.keyClick(spin, Qt.Key.Key_Return)
    summary["limit_rows"] = knowledge.results.results_model.rowCount()
    summary["results_exported"] = [
        run(loop, knowledge.exporter.export_to(export_dir / f"results.{fmt}", fmt)) for fmt in ("csv", "json")
    ]
    with waiting_for(loop, knowledge.browseReady):
        QTest.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)  # browse all again

    # The description panel: switch the database off and on, edit its description, reload.
    QTest.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    active = window.findChild(QTableView, "activeTable")
    active.setFocus()
    active.setCurrentIndex(active.model().index(0, 1))
    for _ in range(2):
        with waiting_for(loop, window.registryReloaded):
            QTest.keyClick(active, Qt.Key.Key_Space)
        run(loop, window.operations.wait_idle())
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    editor.setPlainText(DESCRIPTION)
    with waiting_for(loop, window.registryReloaded):
        QTest.mouseClick(window.findChild(QPushButton, "saveDescriptionButton"), Qt.MouseButton.LeftButton)
    QTest.keyClick(window, Qt.Key.Key_F5)
    run(loop, window.operations.wait_idle())
    QTest.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    entry = window.registry.get(knowledge.current.name if knowledge.current else "")
    summary["active_after"] = bool(entry and entry.active)
    summary["description_after"] = entry.description if entry else None
    summary["problems"] = [f"{m.level}: {m.text} | {m.hint}" for m in messages if m.level != "info"]
    window.banner.show_message = show  # type: ignore[method-assign]
    return summary


def main(argv: list[str]) -> int:
    """Open the window on ``REGISTRY_DIR``, choose ``DB_NAME``, run the session, print its summary."""
    from recall_gui.qt import create_window
    from tests.qt.conftest import TestEventLoop

    registry_dir, db_name, export_dir, config_dir = argv
    app = QApplication([])
    loop = TestEventLoop(app)
    asyncio.set_event_loop(loop)
    window = create_window(registry_dir, config_dir)
    window.show()
    run(loop, window.start())
    run(loop, window.knowledge.choose_database(db_name))
    summary = drive_session(window, loop, Path(export_dir))
    window.close()
    loop.run_until_complete(window.operations.wait_idle())
    loop.run_until_complete(window.aclose())
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
