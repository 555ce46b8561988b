"""The window with registry text that is not Unicode (a lone surrogate escape, ``"\\ud800"``): it opens,
says what is wrong, and saving a description works and keeps the rest of the file as it was."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton
from pytestqt.qtbot import QtBot

from tests.kbtools import KnowledgeBase, cosh_entry
from tests.qt.conftest import WindowFactory, run, waiting_for

LONE = "\ud800"


def test_a_registry_with_text_that_is_not_unicode_opens_and_saves(
    make_kb: Callable[..., KnowledgeBase],
    open_window: WindowFactory,
    qtbot: QtBot,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    kb = make_kb()
    odd = cosh_entry(f"odd{LONE}", kb.db_dir, f"odd{LONE}")
    entries = [cosh_entry(kb.name, kb.db_dir, f"team{LONE} notes"), odd]
    registry_dir = tmp_path / "reg"
    registry_dir.mkdir()
    (registry_dir / "rag_dbs.json").write_text(json.dumps({"dbs": entries}), encoding="ascii")
    (registry_dir / "rag_active.json").write_text(json.dumps([kb.name]), encoding="ascii")

    window = open_window(registry_dir)
    banner = window.banner.findChild(QLabel, "bannerText").text()
    assert "not valid Unicode" in banner
    assert window.knowledge.database_bar.names() == [kb.name]
    editor = window.findChild(QPlainTextEdit, "dbDescriptionEdit")
    assert editor.toPlainText() == "team\ufffd notes"

    editor.setPlainText("Team notes")
    with waiting_for(loop, window.registryReloaded):
        qtbot.mouseClick(window.findChild(QPushButton, "saveDescriptionButton"), Qt.MouseButton.LeftButton)
    saved = json.loads((registry_dir / "rag_dbs.json").read_text(encoding="utf-8"))["dbs"]
    assert saved[0]["description"] == "Team notes"
    assert saved[1] == odd
    window.pages.setCurrentWidget(window.description)
    assert "Team notes" in window.findChild(QPlainTextEdit, "generatedSuffixView").toPlainText()
    run(loop, window.operations.wait_idle())
