"""Names, ids and texts from the registry or a table are shown as the characters they are, never as
markup: a database named ``h<b>NAME</b>`` with entries whose ids and contents hold tags is driven through
every page, and after each step every label of the window is read as the user sees it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel

from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.qt.main_window import MainWindow
from tests.kbtools import PASSAGES, write_lance_table
from tests.qt.conftest import WindowFactory, run, waiting_for

#: What each piece of text looks like in the registry or the table, and the word inside its tags.
NAME = "h<b>NAME</b>"
ID = "i<i>IDWORD</i>"
TEXT = "The <u>TEXTWORD</u> of an entry about ocean tides and the Moon."
WORDS = {"NAME": "<b>NAME", "IDWORD": "<i>IDWORD", "TEXTWORD": "<u>TEXTWORD"}


def shown(label: QLabel) -> str:
    """The text ``label`` draws: its markup rendered when Qt takes it as rich text."""
    text = QLabel.text(label)  # an elided label's shown text, not its whole one
    rich = label.textFormat() == Qt.TextFormat.RichText or (
        label.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)
    )
    if not rich:
        return text
    document = QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def rendered_as_markup(window: MainWindow) -> list[str]:
    """Labels that show one of :data:`WORDS` without the tag before it: its tags were taken as markup."""
    found = []
    for label in window.findChildren(QLabel):
        drawn = shown(label)
        if drawn == QLabel.text(label):  # drawn as written (plain text): no tag can have been taken as markup
            continue
        for word, literal in WORDS.items():
            if word in drawn and literal not in drawn:
                found.append(f"{label.objectName() or type(label.parent()).__name__}: {drawn!r}")
    return found


@pytest.fixture
def tagged_registry(tmp_path: Path, passage_vectors: Any) -> Path:
    ids = [ID if key == "tides" else key for key in PASSAGES]
    contents = [TEXT if key == "tides" else text for key, text in PASSAGES.items()]
    write_lance_table(tmp_path / "db", "notes", ids, contents, passage_vectors)
    registry = tmp_path / "registry"
    registry.mkdir()
    entry = {
        "name": NAME,
        "uri": str(tmp_path / "db"),
        "table": "notes",
        "description": f"Notes about {NAME}",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (registry / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}), encoding="utf-8")
    (registry / "rag_active.json").write_text(json.dumps([NAME]), encoding="utf-8")
    return registry


def test_no_label_of_any_page_renders_a_name_id_or_text_as_markup(
    tagged_registry: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(tagged_registry)
    knowledge = window.knowledge
    assert knowledge.current is not None and knowledge.current.name == NAME
    problems: list[str] = []

    def look(step: str) -> None:
        run(loop, window.operations.wait_idle())
        problems.extend(f"{step}: {found}" for found in rendered_as_markup(window))

    look("opened")
    knowledge.query_bar.query_edit.setText("ocean tides and the Moon")
    with waiting_for(loop, knowledge.searchFinished):
        knowledge.request_search()
    knowledge.results.results_table.selectRow(0)
    assert knowledge.results.results_model.hit(0).id == ID
    look("searched")
    for index in range(window.pages.count()):
        window.pages.setCurrentIndex(index)
        look(f"page {window.pages.tabText(index)!r}")
    window.pages.setCurrentWidget(window.duplicates)
    with waiting_for(loop, window.duplicates.searchFinished):
        window.duplicates.request_find()
    look("duplicates found")
    window.pages.setCurrentWidget(window.health)
    with waiting_for(loop, window.health.reportFinished):
        window.health.request_check()
    look("health checked")
    window.pages.setCurrentWidget(window.reach)
    with waiting_for(loop, window.reach.reportFinished):
        window.reach.request_report()
    look("reach checked")
    window.services.golden.new(tmp_path / "golden.json")
    window.services.golden.add(GoldenCheck(NAME, "ocean tides and the Moon", (ID, "paris"), 2))
    window.pages.setCurrentWidget(window.checks)
    with waiting_for(loop, window.checks.runFinished):
        window.checks.request_run()
    window.checks.table.selectRow(0)
    look("checks run")
    assert not problems, "\n".join(dict.fromkeys(problems))
