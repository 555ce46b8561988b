"""Failures show inside the window with what to do; nothing typed is lost; broken files stay untouched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QLabel, QLineEdit, QTableView
from pytestqt.qtbot import QtBot

from recall_gui.core.base.errors import ConnectError, DemoBuildCancelled
from recall_gui.core.messages import user_message
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for


def registry_with_problems(kb: KnowledgeBase, root: Path) -> Path:
    """The working knowledge base plus one database for each health check that can fail."""
    return write_registry(
        root / "registry",
        [
            cosh_entry(kb.name, kb.db_dir),
            cosh_entry("gone", root / "no-such-folder"),
            {**cosh_entry("wrong-table", kb.db_dir), "table": "nope"},
            view_entry(kb, "old-model", model="AllMiniLML12V2"),
            view_entry(kb, "wide-model", model="BGEBaseENV15"),
        ],
    )


def combo_texts(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]


def test_each_database_shows_its_health_in_the_dropdown(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path
) -> None:
    window = open_window(registry_with_problems(kb, tmp_path))
    texts = combo_texts(window.findChild(QComboBox, "dbCombo"))
    assert texts == [
        kb.name,
        "gone — missing folder",
        "wrong-table — missing table",
        "old-model — model unavailable",
        "wide-model — dimension mismatch",
    ]
    assert not window.banner.isVisible()  # health is shown, not shouted


def test_choosing_a_failing_database_shows_its_error_and_what_to_do(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    tmp_path: Path,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    window = open_window(registry_with_problems(kb, tmp_path))
    combo = window.findChild(QComboBox, "dbCombo")
    query = window.findChild(QLineEdit, "queryEdit")
    query.setText("where is Paris")
    combo.setCurrentIndex(combo.findText("gone — missing folder"))
    combo.activated.emit(combo.currentIndex())
    run(loop, window.operations.wait_idle())
    assert window.banner.isVisible()
    text = window.banner.findChild(QLabel, "bannerText").text()
    hint = window.banner.findChild(QLabel, "bannerHint").text()
    assert text.startswith("gone: database folder ") and text.endswith("no-such-folder does not exist")
    assert "registry" in hint
    caption = window.knowledge.results.caption.text()
    assert caption == f"gone cannot be read: {text.removeprefix('gone: ')}"  # true once the banner goes
    window.banner.dismiss()
    assert window.knowledge.results.caption.text() == caption

    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)  # searching it anyway says the same, as cosh would
    text = window.banner.findChild(QLabel, "bannerText").text()
    assert text.startswith("Failed to connect to vector db: database folder ")
    assert query.text() == "where is Paris"
    assert window.knowledge.results.results_model.rowCount() == 0
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]
    assert not (tmp_path / "no-such-folder").exists()


def test_a_search_that_fails_keeps_the_query_and_clears_when_the_next_one_works(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    tmp_path: Path,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
) -> None:
    window = open_window(registry_with_problems(kb, tmp_path))
    run(loop, window.knowledge.choose_database("wide-model"))
    query = window.findChild(QLineEdit, "queryEdit")
    qtbot.keyClicks(query, "capital of France")
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)
    assert "Vector dimension mismatch" in window.banner.findChild(QLabel, "bannerText").text()
    assert query.text() == "capital of France"
    run(loop, window.knowledge.choose_database(kb.name, window.knowledge.read_inputs()))
    assert not window.banner.isVisible()
    assert window.findChild(QTableView, "resultsTable").model().index(0, 1).data() == "paris"


def test_a_registry_file_that_does_not_parse_is_reported_and_never_written(
    kb: KnowledgeBase, open_window: WindowFactory
) -> None:
    active = kb.registry_dir / "rag_active.json"
    active.write_text('["notes",', encoding="utf-8")
    before = active.read_bytes()
    window = open_window(kb.registry_dir)
    assert window.banner.isVisible()
    assert "rag_active.json" in window.banner.findChild(QLabel, "bannerText").text()
    assert "not valid JSON" in window.banner.findChild(QLabel, "bannerText").text()
    assert not window.description.set_database_active(kb.name, True)
    assert "Not saved" in window.banner.findChild(QLabel, "bannerText").text()
    assert "left untouched" in window.banner.findChild(QLabel, "bannerHint").text()
    assert active.read_bytes() == before


def test_core_errors_read_as_sentences_with_their_hint_and_bugs_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    message = user_message(ConnectError("database folder /x does not exist", hint="Check the uri."))
    assert (message.text, message.hint, message.level) == (
        "Failed to connect to vector db: database folder /x does not exist",
        "Check the uri.",
        "error",
    )
    assert user_message(DemoBuildCancelled("cancelled")).level == "info"
    bug = user_message(KeyError("oops"))
    assert bug.text == "Unexpected error: KeyError: 'oops'"
    assert bug.hint is not None and "bug" in bug.hint
    assert "unexpected error" in caplog.text


def test_an_unexpected_failure_in_an_operation_reaches_the_banner(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)

    async def broken() -> None:
        raise ValueError("something nobody expected")

    with pytest.raises(ValueError):
        run(loop, window.operations.lane().start(broken()))
    assert window.banner.findChild(QLabel, "bannerText").text() == (
        "Unexpected error: ValueError: something nobody expected"
    )


def test_escape_closes_the_banner_when_nothing_runs(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, make_kb: Callable[..., KnowledgeBase]
) -> None:
    window = open_window(kb.registry_dir)
    window.show_message(user_message(ConnectError("x")))
    assert window.banner.isVisible()
    window.activateWindow()
    window.menus.cancel_action.trigger()
    assert not window.banner.isVisible()


def test_nothing_is_written_into_the_registry_when_it_only_is_read(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    before = {p.name: p.read_bytes() for p in kb.registry_dir.iterdir()}
    window = open_window(kb.registry_dir)
    run(loop, window.knowledge.searching.search(Inputs("tides", 5)))
    run(loop, window.reload_registry())
    assert {p.name: p.read_bytes() for p in kb.registry_dir.iterdir()} == before
    assert json.loads((kb.registry_dir / "rag_active.json").read_text()) == [kb.name]
