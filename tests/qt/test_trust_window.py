"""The knowledge page keeps its word: a limit it cannot hold is refused out loud, results found with another
limit say so, Ctrl+B shows every row, a caption never points at a message that is gone, the page holds at
800x500, and the entry detail shows preformatted text as it is and marks what the filter matched."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QPlainTextEdit, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from recall_gui.core.messages import UserMessage
from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, until, waiting_for
from tests.qt.trusttools import banner


def search(window: MainWindow, loop: asyncio.AbstractEventLoop, qtbot: QtBot, query: str) -> None:
    edit = window.knowledge.query_bar.query_edit
    edit.setText(query)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(edit, Qt.Key.Key_Return)


# --- the limit ----------------------------------------------------------------------------------------


def test_a_limit_beyond_the_range_is_refused_out_loud(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    spin = window.knowledge.query_bar.limit_spin
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "5000")  # the last 0 cannot be taken: 500 stays, and the window says so
    assert spin.value() == 500
    text, hint = banner(window)
    assert text == "The limit holds 1 to 1,000: 5,000 is more; it stays 500."
    assert "whole number in that range" in hint


def test_an_empty_limit_is_refused_not_searched_with_the_previous_one(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search(window, loop, qtbot, "capital of France")
    shown = window.knowledge.results.caption.text()
    spin = window.knowledge.query_bar.limit_spin
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClick(spin, Qt.Key.Key_Backspace)
    qtbot.keyClick(window.knowledge.query_bar.query_edit, Qt.Key.Key_Return)  # Enter in the query box
    run(loop, window.operations.wait_idle())
    assert banner(window)[0] == "The limit holds 1 to 1,000: the box is empty; it stays 5."
    assert window.knowledge.results.caption.text() == shown  # no search ran


def test_results_found_with_another_limit_say_so_until_searched_again(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search(window, loop, qtbot, "capital of France")
    caption = window.knowledge.results.caption
    assert caption.text() == f"5 results for “capital of France” in {kb.name}"
    spin = window.knowledge.query_bar.limit_spin
    spin.setValue(8)
    assert (
        caption.text()
        == f"5 results for “capital of France” in {kb.name} — the limit is now 8: press Enter to search again"
    )
    spin.setValue(5)
    assert caption.text() == f"5 results for “capital of France” in {kb.name}"
    spin.setValue(8)
    spin.setFocus()
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    assert caption.text() == f"8 results for “capital of France” in {kb.name}"


# --- Ctrl+B and captions -----------------------------------------------------------------------------


def test_browse_all_rows_clears_an_old_filter_and_keeps_the_typed_query(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.knowledge.results.filter_edit.setText("city")
    run(loop, window.knowledge.browser.browse(window.knowledge.read_inputs()))
    assert window.knowledge.browse_model.total == 2
    window.knowledge.query_bar.query_edit.setText("something")
    with waiting_for(loop, window.knowledge.browseReady):
        window.menus.browse_action.trigger()  # Ctrl+B
    assert window.knowledge.results.filter_edit.text() == ""
    assert window.knowledge.browse_model.total == 12
    assert window.knowledge.results.caption.text() == f"All 12 rows of {kb.name}"
    assert window.knowledge.query_bar.query_edit.text() == "something"  # what was typed is kept


def test_a_failed_search_says_why_in_the_caption_which_stays_true_when_the_message_goes(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    write_registry(kb.registry_dir, [{**cosh_entry(kb.name, kb.db_dir), "metric": "hamming"}])
    window = open_window(kb.registry_dir)
    search(window, loop, qtbot, "capital")
    caption = window.knowledge.results.caption.text()
    why = 'unknown distance metric "hamming" (expected one of l2, cosine, dot)'
    assert caption == f"The search in {kb.name} failed: {why}"
    window.banner.dismiss()
    assert window.knowledge.results.caption.text() == caption
    assert "message above" not in caption


# --- 800x500 -----------------------------------------------------------------------------------------


def inside(widget: QWidget, window: QWidget) -> bool:
    """The whole of ``widget`` lies within the window (nothing of it cut off at the window's edge)."""
    top_left = widget.mapTo(window, QPoint(0, 0))
    bottom_right = widget.mapTo(window, QPoint(widget.width() - 1, widget.height() - 1))
    return window.rect().contains(top_left) and window.rect().contains(bottom_right)


def test_the_page_holds_at_800_by_500_with_long_names_and_a_long_query(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    long_name = "engineering-handbook-and-onboarding-notes-of-the-platform-team-2024"
    write_registry(kb.registry_dir, [view_entry(kb, long_name)])
    window = open_window(kb.registry_dir)
    window.resize(800, 500)
    query = "how do generators work in python when iterating lazily over a very long sequence of values " * 2
    search(window, loop, qtbot, query)
    window.show_message(UserMessage("A message, as the banner often shows one", "With what to do.", "info"))
    run(loop, until(window.banner.isVisible, "the banner is shown"))
    assert (window.width(), window.height()) == (800, 500)
    knowledge = window.knowledge
    caption = knowledge.results.caption
    assert caption.text().startswith("5 results for “how do generators")
    assert caption.is_elided() and inside(caption, window) and caption.toolTip() == caption.text()
    combo = knowledge.database_bar.combo
    assert inside(combo, window) and inside(knowledge.database_bar.info, window)
    for label in knowledge.status_labels:
        assert inside(label, window), label.objectName()
    window.menus.browse_action.trigger()
    run(loop, window.operations.wait_idle())
    filter_edit = knowledge.results.filter_edit
    filter_edit.setText("x")
    clear = next(b for b in filter_edit.findChildren(QToolButton) if b.isVisible())
    assert inside(filter_edit, window) and inside(clear, window)
    window.grab().save(str(tmp_path / "window-800x500.png"))


# --- the entry detail --------------------------------------------------------------------------------


def test_the_detail_shows_preformatted_text_as_it_is_on_request_and_remembers(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(kb.registry_dir, config_dir=tmp_path / "cfg")
    detail = window.knowledge.detail
    content = window.findChild(QPlainTextEdit, "detailContent")
    assert content.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
    detail.monospace.click()
    assert content.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    metrics = QFontMetrics(content.font())  # what the user sees: narrow and wide letters equally wide
    assert metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("WWWW")
    assert metrics.horizontalAdvance("iiii") != QFontMetrics(window.font()).horizontalAdvance("iiii")
    window.close()
    again = open_window(kb.registry_dir, config_dir=tmp_path / "cfg")
    assert again.knowledge.detail.monospace.isChecked()
    assert (
        again.findChild(QPlainTextEdit, "detailContent").lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap
    )


def test_the_detail_marks_what_the_filter_matched(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    knowledge = window.knowledge
    knowledge.results.filter_edit.setText("CAPITAL")
    run(loop, knowledge.browser.browse(knowledge.read_inputs()))
    knowledge.results.browse_table.selectRow(0)
    run(loop, window.operations.wait_idle())
    assert knowledge.detail.id_edit.text() == "paris"
    assert knowledge.detail.highlighted() == ["capital"]
    search(window, loop, qtbot, "capital of France")  # a search matches by meaning: nothing to mark
    assert knowledge.detail.highlighted() == []
