"""Activate, Deactivate and Unregister in the window (the Database menu, and the context menus of the
database lists), each undone from the banner exactly; the knowledge base is never touched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMenu, QPushButton

from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.qt.trusttools import banner, check_state, table_names


def action_named(menu: QMenu, text: str) -> QAction:
    (found,) = [action for action in menu.actions() if action.text() == text]
    return found


def trigger(loop: asyncio.AbstractEventLoop, window: MainWindow, action: QAction) -> None:
    assert action.isEnabled(), action.text()
    action.trigger()
    run(loop, window.operations.wait_idle())


def click_undo(loop: asyncio.AbstractEventLoop, window: MainWindow) -> None:
    button = window.banner.findChild(QPushButton, "bannerAction")
    assert button.isVisible() and button.text() == "&Undo"
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    run(loop, window.operations.wait_idle())


def listed(window: MainWindow) -> list[str]:
    return table_names(window.description.active_table)


@dataclass(frozen=True)
class TwoDatabases:
    """A window on a registry of two databases over one table: ``kb`` (inactive) and "other" (active,
    with a key this app does not know), and what the files held before the window opened."""

    window: MainWindow
    kb: KnowledgeBase
    registry_dir: Path
    dbs_before: bytes
    kb_before: dict[str, tuple[int, int, str]]


@pytest.fixture
def two_databases(
    make_kb: Callable[..., KnowledgeBase], open_window: WindowFactory, tmp_path: Path
) -> TwoDatabases:
    kb = make_kb()
    other = view_entry(kb, "other", "Another view") | {"x-custom": {"keep": [1]}}
    registry_dir = write_registry(tmp_path / "reg", [cosh_entry(kb.name, kb.db_dir), other], active=["other"])
    dbs_before, kb_before = (registry_dir / "rag_dbs.json").read_bytes(), snapshot_tree(kb.db_dir)
    return TwoDatabases(open_window(registry_dir), kb, registry_dir, dbs_before, kb_before)


def test_unregister_from_the_list_then_undo_restores_the_exact_entry(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb, registry_dir = two_databases.window, two_databases.kb, two_databases.registry_dir
    assert listed(window) == [kb.name, "other"]
    menu = window.description.context_menu_at(1)
    assert menu is not None
    assert [a.text() for a in menu.actions()] == ["&Activate", "&Deactivate", "&Unregister"]
    assert not action_named(menu, "&Activate").isEnabled()  # "other" is active already

    trigger(loop, window, action_named(menu, "&Unregister"))
    saved = json.loads((registry_dir / "rag_dbs.json").read_text())
    assert [raw["name"] for raw in saved["dbs"]] == [kb.name]
    assert json.loads((registry_dir / "rag_active.json").read_text()) == []
    assert listed(window) == [kb.name]
    assert window.knowledge.database_bar.names() == [kb.name]
    assert banner(window)[0] == "Unregistered other: agents no longer see it. Its files were not touched."

    click_undo(loop, window)
    assert (registry_dir / "rag_dbs.json").read_bytes() == two_databases.dbs_before
    assert json.loads((registry_dir / "rag_active.json").read_text()) == ["other"]
    assert listed(window) == [kb.name, "other"]
    assert banner(window)[0] == "Undone: other is registered again, as it was."
    assert snapshot_tree(kb.db_dir) == two_databases.kb_before


def test_the_database_menu_deactivates_the_shown_database_and_undo_puts_it_back_in_its_place(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    entries = [cosh_entry(name, kb.db_dir) for name in ("first", kb.name, "third")]
    entries[0]["table"] = entries[2]["table"] = kb.name
    registry_dir = write_registry(tmp_path / "reg", entries, active=["third", kb.name, "first"])
    window = open_window(registry_dir)
    run(loop, window.knowledge.choose_database(kb.name))
    window.menus.database_menu.aboutToShow.emit()
    actions = window.database_actions
    assert not actions.activate_action.isEnabled() and actions.unregister_action.isEnabled()

    trigger(loop, window, actions.deactivate_action)
    assert json.loads((registry_dir / "rag_active.json").read_text()) == ["third", "first"]
    assert f"{kb.name} (inactive)" in window.knowledge.database_bar.combo.currentText()
    assert banner(window)[0] == f"Deactivated {kb.name}: agents no longer search it."
    window.menus.database_menu.aboutToShow.emit()
    assert actions.activate_action.isEnabled() and not actions.deactivate_action.isEnabled()

    click_undo(loop, window)
    assert json.loads((registry_dir / "rag_active.json").read_text()) == ["third", kb.name, "first"]
    assert banner(window)[0] == f"Undone: {kb.name} is active again."


def test_activate_from_the_context_menu_then_undo(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb, registry_dir = two_databases.window, two_databases.kb, two_databases.registry_dir
    menu = window.description.context_menu_at(0)
    assert menu is not None and not action_named(menu, "&Deactivate").isEnabled()
    trigger(loop, window, action_named(menu, "&Activate"))
    assert json.loads((registry_dir / "rag_active.json").read_text()) == ["other", kb.name]
    table = window.description.active_table
    assert check_state(table, 0) == Qt.CheckState.Checked
    assert banner(window)[0] == f"Activated {kb.name}: agents can search it."
    click_undo(loop, window)
    assert json.loads((registry_dir / "rag_active.json").read_text()) == ["other"]
    assert check_state(table, 0) == Qt.CheckState.Unchecked
    assert (registry_dir / "rag_dbs.json").read_bytes() == two_databases.dbs_before


def test_a_database_another_program_removed_is_refused_with_the_file_named(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb, registry_dir = two_databases.window, two_databases.kb, two_databases.registry_dir
    menu = window.description.context_menu_at(1)
    assert menu is not None
    with waiting_for(loop, window.registryReloaded):  # "other" is gone: the window has seen it
        write_registry(registry_dir, [cosh_entry(kb.name, kb.db_dir)], active=[kb.name])
    before = snapshot_tree(registry_dir)
    trigger(loop, window, action_named(menu, "&Unregister"))
    text, hint = banner(window)
    assert text.startswith('No database called "other" in') and str(registry_dir / "rag_dbs.json") in text
    assert "Nothing was changed" in hint
    assert window.banner.findChild(QPushButton, "bannerAction").isHidden()
    assert snapshot_tree(registry_dir) == before


def test_activating_a_database_another_program_activated_says_so_and_offers_no_undo(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb, registry_dir = two_databases.window, two_databases.kb, two_databases.registry_dir
    menu = window.description.context_menu_at(0)  # built while kb.name is inactive
    assert menu is not None
    with waiting_for(loop, window.registryReloaded):
        (registry_dir / "rag_active.json").write_text(json.dumps(["other", kb.name]), encoding="utf-8")
    before = snapshot_tree(registry_dir)
    trigger(loop, window, action_named(menu, "&Activate"))
    assert banner(window)[0] == f"{kb.name} was already active."
    assert window.banner.findChild(QPushButton, "bannerAction").isHidden()
    assert snapshot_tree(registry_dir) == before


def described(window: MainWindow) -> tuple[list[str], str]:
    """The names of the rows selected in the description page's list, and the label of the editor."""
    table = window.description.active_table
    rows = [index.row() for index in table.selectionModel().selectedRows()]
    return [listed(window)[row] for row in rows], window.description.databases.description_label.text()


def test_undoing_an_unregister_from_the_list_describes_that_database_again(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb = two_databases.window, two_databases.kb
    window.description.active_table.selectRow(1)
    assert described(window) == (["other"], "Description of other:")
    menu = window.description.context_menu_at(1)
    assert menu is not None
    trigger(loop, window, action_named(menu, "&Unregister"))
    assert described(window) == ([kb.name], f"Description of {kb.name}:")
    click_undo(loop, window)
    assert described(window) == (["other"], "Description of other:")


def test_a_change_from_the_list_undone_by_another_program_withdraws_its_message(
    two_databases: TwoDatabases, loop: asyncio.AbstractEventLoop
) -> None:
    window, kb, registry_dir = two_databases.window, two_databases.kb, two_databases.registry_dir
    menu = window.description.context_menu_at(0)
    assert menu is not None
    trigger(loop, window, action_named(menu, "&Activate"))
    claim = f"Activated {kb.name}: agents can search it."
    assert window.status_activity.text() == claim and banner(window)[0] == claim
    (registry_dir / "rag_active.json").write_text(json.dumps(["other"]), encoding="utf-8")
    with waiting_for(loop, window.registryReloaded):
        window.reread_registry(external=True)
    run(loop, window.operations.wait_idle())
    assert window.status_activity.text() != claim
    assert window.banner.message is None or window.banner.message.text != claim
