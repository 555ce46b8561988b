"""Claims about the agent and messages follow the registry as soon as it changes, and the pages follow
the database the knowledge page shows: after Deactivate the entry's "would the agent see this?" says it
would not; after Unregister then Undo, no page and no message still speaks of the removal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for


def verdict(window: MainWindow) -> str:
    return window.knowledge.entry_tools.note.message


def trigger(window: MainWindow, loop: asyncio.AbstractEventLoop, action: str) -> None:
    """A Database menu action, as the menu offers it."""
    window.menus.database_menu.aboutToShow.emit()
    chosen = getattr(window.database_actions, f"{action}_action")
    assert chosen.isEnabled()
    chosen.trigger()
    run(loop, window.operations.wait_idle())


def search(window: MainWindow, loop: asyncio.AbstractEventLoop, query: str) -> None:
    page = window.knowledge
    page.query_bar.query_edit.setText(query)
    with waiting_for(loop, page.searchFinished):
        QTest.keyClick(page.query_bar.query_edit, Qt.Key.Key_Return)
    run(loop, window.operations.wait_idle())


def test_deactivating_the_shown_database_turns_the_would_see_answer_at_once(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search(window, loop, "capital of France")
    assert verdict(window).startswith("Would the agent see this? Yes: for “capital of France”")

    trigger(window, loop, "deactivate")
    run(loop, until(lambda: "? No" in verdict(window), "the verdict follows the registry"))
    assert verdict(window).startswith(
        f"Would the agent see this? No: no agent searches {kb.name}: it is not active."
    )
    assert window.knowledge.entry_tools.note.tone == "bad"

    trigger(window, loop, "activate")
    run(loop, until(lambda: "? Yes" in verdict(window), "the verdict follows the registry back"))


@pytest.fixture
def two_databases(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> tuple[KnowledgeBase, MainWindow]:
    """A window on two databases (the knowledge base and "other", the same table), showing the first."""
    kb = make_kb()
    other = {**cosh_entry("other", kb.db_dir, "Another view"), "table": kb.name}
    window = open_window(write_registry(tmp_path / "reg", [cosh_entry(kb.name, kb.db_dir), other]))
    run(loop, window.knowledge.choose_database(kb.name))
    return kb, window


def test_after_unregister_then_undo_every_page_shows_the_database_again_and_no_message_says_it_is_gone(
    two_databases: tuple[KnowledgeBase, MainWindow], loop: asyncio.AbstractEventLoop
) -> None:
    kb, window = two_databases
    shown = {
        "knowledge": lambda: window.knowledge.current.name if window.knowledge.current else None,
        "health": window.health.database_combo.chosen,
        "duplicates": window.duplicates.database_combo.chosen,
    }
    assert {page: name() for page, name in shown.items()} == dict.fromkeys(shown, kb.name)

    trigger(window, loop, "unregister")
    assert {page: name() for page, name in shown.items()} == dict.fromkeys(shown, "other")
    assert window.status_activity.text().startswith(f"Unregistered {kb.name}: agents no longer see it")

    undo = window.banner.findChild(QPushButton, "bannerAction")
    QTest.mouseClick(undo, Qt.MouseButton.LeftButton)
    run(loop, window.operations.wait_idle())
    assert {page: name() for page, name in shown.items()} == dict.fromkeys(shown, kb.name)
    window.pages.setCurrentWidget(window.history)  # it follows the knowledge page's table
    run(loop, until(lambda: window.history.title.text().startswith(f"{kb.name}: "), "History shows it"))
    for page in range(window.pages.count()):
        window.pages.setCurrentIndex(page)
        assert "Unregistered" not in window.status_activity.text()
    assert window.banner.message is not None
    assert window.banner.message.text == f"Undone: {kb.name} is registered again, as it was."


def test_a_deactivation_undone_by_another_program_withdraws_the_message(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    run(loop, window.operations.wait_idle())
    trigger(window, loop, "deactivate")
    claim = f"Deactivated {kb.name}: agents no longer search it."
    assert window.status_activity.text() == claim and window.banner.message.text == claim
    (kb.registry_dir / "rag_active.json").write_text(f'["{kb.name}"]', encoding="utf-8")
    with waiting_for(loop, window.registryReloaded):
        window.reread_registry(external=True)
    run(loop, window.operations.wait_idle())
    assert window.status_activity.text() != claim
    assert window.banner.message is None or window.banner.message.text != claim


def test_health_and_duplicates_say_what_their_button_does_and_follow_the_knowledge_pages_database(
    two_databases: tuple[KnowledgeBase, MainWindow], loop: asyncio.AbstractEventLoop
) -> None:
    kb, window = two_databases
    health, duplicates = window.health, window.duplicates
    assert health.tree.placeholder() == (
        f"Press “Check health” to read LanceDB's statistics of {kb.name} and scan each of its rows, "
        "read-only. What needs a look is listed here."
    )
    assert duplicates.members_hint.text().startswith(
        f"Press “Find” to compare every pair of entries of {kb.name} and group those within the distance"
    )
    run(loop, health.check(kb.name))
    run(loop, duplicates.look_for(kb.name, 0.05, "cosine"))
    assert health.tree.topLevelItemCount() > 0 and health.note.message.startswith(kb.name)
    assert duplicates.members_hint.text() == "Select a group to see its entries side by side."

    run(loop, window.knowledge.choose_database("other"))
    assert health.database_combo.chosen() == duplicates.database_combo.chosen() == "other"
    assert health.tree.topLevelItemCount() == 0  # notes' report is not shown as other's
    assert health.tree.placeholder().startswith("Press “Check health” to read LanceDB's statistics of other")
    assert duplicates.groups.rowCount() == 0
    assert duplicates.members_hint.text().startswith("Press “Find” to compare every pair of entries of other")
