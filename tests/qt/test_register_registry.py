"""The "Add to agents' databases" dialog says which registry it writes and who reads it: recall-gui's own
registry (when there is no cosh registry) is read by `recall-gui mcp`, never by cosh; cosh's registry is
read by both. The banner after adding says the same. Once it is closed, the window's shortcuts work again
(no window was active before, where no window manager handed the keyboard back)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from recall_gui.qt.main_window import MainWindow
from tests.foldertools import write_langchain_table
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for


@pytest.fixture
def folder(tmp_path: Path, passage_vectors: Any) -> Path:
    """A LangChain table, not registered: what the dialog adds."""
    write_langchain_table(tmp_path / "langchain", "vectorstore", passage_vectors)
    return tmp_path / "langchain"


def add_dialog_intro(window: MainWindow, loop: asyncio.AbstractEventLoop, folder: Path) -> str:
    assert run(loop, window.opened.open_place(str(folder)))
    with waiting_for(loop, window.opened.addDialogShown):
        window.menus.add_to_agents_action.trigger()
    dialog = window.opened.add_dialog
    assert dialog is not None
    return str(dialog.findChild(type(dialog.problem), "addIntro").text())


def test_with_no_cosh_registry_the_dialog_names_the_apps_own_registry_which_cosh_never_reads(
    kb: KnowledgeBase, folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    app_registry = Path(os.environ["RECALL_GUI_DATA_DIR"]) / "registry"
    cosh_file = Path(os.environ["XDG_DATA_HOME"]) / "cosh" / "rag_dbs.json"
    assert not cosh_file.exists()
    write_registry(app_registry, [cosh_entry(kb.name, kb.db_dir)])
    window = open_window(None)
    assert window.location.source == "app"

    intro = add_dialog_intro(window, loop, folder)
    assert f"to recall-gui's own registry ({app_registry / 'rag_dbs.json'})" in intro
    assert f"`recall-gui mcp` reads it; cosh does not (cosh reads only {cosh_file})" in intro
    assert "cosh and" not in intro
    dialog = window.opened.add_dialog
    assert dialog is not None
    with waiting_for(loop, window.registryReloaded):
        dialog.add_button.click()
    run(loop, window.operations.wait_idle())
    message = window.banner.message
    assert message is not None and message.text == "Added vectorstore to the agents' databases (active)."
    assert message.hint is not None
    assert message.hint.startswith("`recall-gui mcp` offers it from its next tool listing when it reads")
    assert "cosh does not read this registry" in message.hint
    assert not cosh_file.exists()


def test_on_coshs_registry_the_dialog_says_cosh_and_the_mcp_server_read_it(
    kb: KnowledgeBase, folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    cosh_dir = Path(os.environ["XDG_DATA_HOME"]) / "cosh"
    write_registry(cosh_dir, [cosh_entry(kb.name, kb.db_dir)])
    window = open_window(None)
    assert window.location.source == "cosh"
    intro = add_dialog_intro(window, loop, folder)
    assert f"to cosh's registry ({cosh_dir / 'rag_dbs.json'}), which cosh and `recall-gui mcp` read." in intro


def test_ctrl_g_right_after_the_register_dialog_adds_the_check_and_says_so_beside_the_button(
    kb: KnowledgeBase, folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.activateWindow()
    run(loop, until(lambda: QApplication.activeWindow() is window, "the window is active"))
    page = window.knowledge
    page.query_bar.query_edit.setText("capital of France")
    add_dialog_intro(window, loop, folder)
    dialog = window.opened.add_dialog
    assert dialog is not None
    dialog.name_edit.setText("lc-notes")
    with waiting_for(loop, page.searchFinished):  # registered, then searched with the query typed
        dialog.add_button.click()
    run(loop, window.operations.wait_idle())
    assert page.current is not None and page.current.name == "lc-notes"

    results = page.results.results_table
    QTest.mouseClick(
        results.viewport(),
        Qt.MouseButton.LeftButton,
        pos=results.visualRect(results.model().index(1, 1)).center(),
    )
    expected = page.results.selected_items()[0]
    QTest.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    checks = window.services.golden.checks
    assert [(c.db_name, c.query, c.expect) for c in checks] == [
        ("lc-notes", "capital of France", (expected.id,))
    ]
    assert page.entry_tools.golden_added.text() == "✓ Added in golden.json"
    assert page.entry_tools.golden_added.toolTip().endswith("The Checks page (Ctrl+5) runs it.")
    assert page.entry_tools.golden_added.isVisible()
