"""A golden check made on a folder opened by its path names the folder, not the table's name: it runs on
the folder until the folder is registered, then on the registered database, under whatever name it was
given, and the Checks page says which."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QPushButton, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.golden.golden import FolderTable, GoldenCheck, read_golden
from recall_gui.qt.models.checks_model import DATABASE, RESULT
from tests.qt.conftest import FolderWindow, run, waiting_for
from tests.qt.test_checks_page import cells, default_golden
from tests.qt.test_open_folders import search, shown_ids
from tests.qt.test_search import select_rows

QUERY = "How do I change my password?"


def test_a_check_made_on_an_opened_folder_follows_it_into_the_registry(
    folder_window: FolderWindow, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window, db = folder_window.window, folder_window.folder
    search(window, qtbot, loop, QUERY)
    found = shown_ids(window)
    select_rows(window.knowledge.results.results_table, 0)
    window.knowledge.entry_tools.add_golden_action.trigger()

    folder = FolderTable(str(db.resolve()), "vectorstore", "AllMiniLML6V2")
    assert read_golden(default_golden()).checks == (GoldenCheck(None, QUERY, (found[0],), 5, folder),)
    written = default_golden().read_bytes()
    message = window.services.banner.message
    assert message is None or "tool description" not in message.text + (message.hint or "")

    page = window.checks
    table = page.findChild(QTableView, "checksTable")
    assert cells(table, DATABASE) == [f"folder {db.resolve()}, table vectorstore (not registered)"]
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert cells(table, RESULT) == ["✓ passed"]

    # Registered under another name than the table's: the check follows, and the file is not touched.
    with waiting_for(loop, window.opened.addDialogShown):
        window.menus.add_to_agents_action.trigger()
    dialog = window.opened.add_dialog
    assert dialog is not None
    dialog.name_edit.setText("lc-notes")
    with waiting_for(loop, window.registryReloaded):
        dialog.add_button.click()
    run(loop, window.operations.wait_idle())
    shown = "lc-notes (registered; the check names its folder)"
    assert cells(table, DATABASE) == [shown]
    with waiting_for(loop, page.runFinished):
        page.findChild(QPushButton, "checksRunButton").click()
    assert cells(table, RESULT) == ["✓ passed"]
    select_rows(table, 0)
    assert page.detail.toPlainText().startswith(f'"{QUERY}" in {shown}, limit 5\n')
    assert default_golden().read_bytes() == written
