"""The Help menu's About names the registry's folder as it is, whatever characters its path holds."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QMessageBox, QWidget

from tests.kbtools import KnowledgeBase, cosh_entry, write_registry
from tests.qt.conftest import WindowFactory


def test_about_shows_a_registry_path_with_markup_characters_as_written(
    kb: KnowledgeBase, open_window: WindowFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry_dir = write_registry(tmp_path / "R&D <notes> &amp;", [cosh_entry(kb.name, kb.db_dir)])
    shown: list[str] = []

    def about(_parent: QWidget, _title: str, text: str) -> None:
        shown.append(text)

    monkeypatch.setattr(QMessageBox, "about", about)
    window = open_window(registry_dir)
    window.menus.about_action.trigger()
    document = QTextDocument()
    document.setHtml(shown[0])
    assert f"Registry: {registry_dir} (" in document.toPlainText()
