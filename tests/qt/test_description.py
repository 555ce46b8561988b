"""The description panel: what the agent reads, edited live, saved where the CLI and agents find it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton, QTableWidget
from pytestqt.qtbot import QtBot

from recall_gui.cli import main
from recall_gui.core.registry import load_registry
from recall_gui.core.suffix import SuffixStore, build_tool_suffix
from recall_gui.core.tool import DEFAULT_DESCRIPTION, compose_description
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for


def edit(view: QPlainTextEdit, qtbot: QtBot, text: str) -> None:
    view.setFocus()
    view.moveCursor(view.textCursor().MoveOperation.End)
    qtbot.keyClicks(view, text)


def test_editing_the_suffix_updates_the_description_and_tool_json_live(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot
) -> None:
    window = open_window(kb.registry_dir)
    suffix = window.findChild(QPlainTextEdit, "suffixEdit")
    preview = window.findChild(QPlainTextEdit, "descriptionPreview")
    tool_json = window.findChild(QPlainTextEdit, "toolJsonView")
    generated = build_tool_suffix(load_registry(kb.registry_dir))
    assert suffix.toPlainText() == generated
    assert preview.toPlainText() == compose_description(generated)

    edit(suffix, qtbot, "Prefer notes for account questions.")
    expected = generated + "Prefer notes for account questions."
    assert preview.toPlainText() == compose_description(expected)
    tool = json.loads(tool_json.toPlainText())
    assert tool["name"] == "recall_search"
    assert tool["description"] == f"{DEFAULT_DESCRIPTION}\n\n{expected}"
    assert tool["inputSchema"]["required"] == ["db_name", "query"]
    assert "not saved" in window.findChild(QLabel, "suffixState").text()


def test_save_persists_the_suffix_for_agents_and_the_cli_and_reset_forgets_it(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = tmp_path / "profile"
    window = open_window(kb.registry_dir, config_dir=config)
    suffix = window.findChild(QPlainTextEdit, "suffixEdit")
    suffix.setPlainText("Only the notes database exists. Ask it about passwords.\n")
    save = window.findChild(QPushButton, "saveSuffixButton")
    assert save.isEnabled()
    save.click()
    assert SuffixStore(config).load() == "Only the notes database exists. Ask it about passwords.\n"
    assert not save.isEnabled()
    assert "saved suffix" in window.findChild(QLabel, "suffixState").text()

    monkeypatch.setenv("RECALL_GUI_CONFIG_DIR", str(config))
    capsys.readouterr()
    assert main(["tool", "--registry", str(kb.registry_dir)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["description"] == compose_description(
        "Only the notes database exists. Ask it about passwords.\n"
    )

    window.findChild(QPushButton, "resetSuffixButton").click()
    assert SuffixStore(config).load() is None
    assert suffix.toPlainText() == build_tool_suffix(load_registry(kb.registry_dir))


def test_toggling_a_database_writes_only_its_active_state_and_the_suffix_follows(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    other = {**cosh_entry("other", kb.db_dir, "Another view"), "table": kb.name, "x-custom": {"keep": 1}}
    registry_dir = write_registry(tmp_path / "reg", [cosh_entry(kb.name, kb.db_dir), other])
    dbs_before = (registry_dir / "rag_dbs.json").read_bytes()
    window = open_window(registry_dir)
    table = window.findChild(QTableWidget, "activeTable")
    assert [table.item(r, 1).text() for r in range(table.rowCount())] == [kb.name, "other"]

    with waiting_for(loop, window.registryReloaded):
        table.item(1, 0).setCheckState(Qt.CheckState.Unchecked)
    assert json.loads((registry_dir / "rag_active.json").read_text()) == [kb.name]
    assert (registry_dir / "rag_dbs.json").read_bytes() == dbs_before
    suffix = window.findChild(QPlainTextEdit, "suffixEdit").toPlainText()
    assert "- Name: other" not in suffix and f"- Name: {kb.name}" in suffix
    assert (
        window.knowledge.database_bar.combo.itemText(window.knowledge.database_bar.combo.count() - 1)
        == "other (inactive)"
    )
    run(loop, window.tasks.wait_idle())

    with waiting_for(loop, window.registryReloaded):
        table.item(0, 0).setCheckState(Qt.CheckState.Unchecked)
    assert "(none active)" in window.findChild(QPlainTextEdit, "suffixEdit").toPlainText()
    run(loop, window.tasks.wait_idle())


def test_editing_a_description_saves_it_and_keeps_unknown_fields(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    entry = {**cosh_entry(kb.name, kb.db_dir, "Old words"), "x-custom": [1, 2], "created_at": 123}
    registry_dir = write_registry(tmp_path / "reg", [entry])
    window = open_window(registry_dir)
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    assert editor.toPlainText() == "Old words"
    editor.setPlainText("Team notes: passwords, cities, Python — what agents may ask about")
    with waiting_for(loop, window.registryReloaded):
        qtbot.mouseClick(window.findChild(QPushButton, "saveDescriptionButton"), Qt.MouseButton.LeftButton)
    saved = json.loads((registry_dir / "rag_dbs.json").read_text(encoding="utf-8"))["dbs"][0]
    assert saved == {
        **entry,
        "description": "Team notes: passwords, cities, Python — what agents may ask about",
    }
    assert "what agents may ask about" in window.findChild(QPlainTextEdit, "suffixEdit").toPlainText()
    run(loop, window.tasks.wait_idle())


def test_another_program_changing_the_registry_is_noticed_and_unsaved_edits_survive(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    suffix = window.findChild(QPlainTextEdit, "suffixEdit")
    suffix.setPlainText("my unsaved suffix")
    description = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    description.setPlainText("my unsaved description")

    dbs = kb.registry_dir / "rag_dbs.json"
    data = json.loads(dbs.read_text())
    data["dbs"].append(cosh_entry("added-by-cosh", kb.db_dir))
    dbs.write_text(json.dumps(data, indent=2))
    stat = dbs.stat()
    os.utime(dbs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a new stamp on any file system
    with waiting_for(loop, window.registryReloaded):
        pass  # the file watcher notices
    assert "changed by another program" in window.banner.findChild(QLabel, "bannerText").text()
    assert "added-by-cosh" in window.knowledge.database_bar.names()
    assert suffix.toPlainText() == "my unsaved suffix"
    assert description.toPlainText() == "my unsaved description"
    run(loop, window.tasks.wait_idle())


def test_space_toggles_the_selected_database_from_the_keyboard(
    kb: KnowledgeBase, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    window.pages.setCurrentIndex(1)
    table = window.findChild(QTableWidget, "activeTable")
    table.setFocus()
    table.setCurrentCell(0, 1)  # the name cell has the focus, not the checkbox
    with waiting_for(loop, window.registryReloaded):
        qtbot.keyClick(table, Qt.Key.Key_Space)
    assert json.loads((kb.registry_dir / "rag_active.json").read_text()) == []
    assert table.item(0, 0).checkState() == Qt.CheckState.Unchecked
    run(loop, window.tasks.wait_idle())
