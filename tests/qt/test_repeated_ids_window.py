"""The window on a knowledge base written as cosh writes one (whole documents, every id "content"): results
named by their content and the table's repeated ids said once, *Add as golden check* naming entries by
content, and, for a long entry, where the model stopped reading it (the entry view and the query box)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QPushButton

from recall_gui.core.golden.golden import read_golden
from recall_gui.qt.models.roles import VALUE_ROLE
from recall_gui.qt.panels.detail_panel import MARKER_TEXT, UNREAD
from tests.coshtools import MANUAL, long_text, whole_documents
from tests.kbtools import KnowledgeBase
from tests.qt.conftest import WindowFactory, run, until
from tests.qt.test_search import select_rows

QUERY = "How do I change my password?"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def search(window: Any, loop: asyncio.AbstractEventLoop, query: str, limit: int) -> None:
    knowledge = window.knowledge
    knowledge.query_bar.query_edit.setText(query)
    knowledge.query_bar.limit_spin.setValue(limit)
    run(loop, knowledge.searching.search(knowledge.read_inputs()))


@pytest.fixture(scope="module")
def manuals(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> KnowledgeBase:
    """Whole documents as cosh writes them, three of them longer than the model reads (built once: the
    window only reads them)."""
    return whole_documents(tmp_path_factory.mktemp("manuals"), embedder)


def shown_rows(window: Any) -> list[tuple[str, str]]:
    """The results table as the user sees it: each row's ID cell and its full content."""
    model = window.knowledge.results.results_table.model()
    return [
        (model.index(row, 1).data(), model.index(row, 2).data(VALUE_ROLE)) for row in range(model.rowCount())
    ]


def test_results_are_named_by_content_and_the_repeated_ids_said_once(
    cosh_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(cosh_kb.registry_dir)
    search(window, loop, QUERY, 4)
    rows = shown_rows(window)
    assert len(rows) == 4
    assert [name for name, _content in rows] == [f"content·{sha(content)[:8]}" for _name, content in rows]
    note = window.knowledge.results.findChild(QLabel, "idsRepeatNote")
    assert note.isVisible()
    assert note.text().startswith(
        f'Ids repeat in this table: all {len(cosh_kb.ids)} rows share the id "content"'
    )


def test_unique_ids_are_shown_as_they_are(
    kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(kb.registry_dir)
    search(window, loop, QUERY, 3)
    assert shown_rows(window)[0][0] == "pw-reset"
    assert not window.knowledge.results.findChild(QLabel, "idsRepeatNote").isVisible()


def test_add_as_golden_check_names_the_selected_entries_by_content(
    cosh_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(cosh_kb.registry_dir)
    search(window, loop, QUERY, 3)
    rows = shown_rows(window)
    select_rows(window.knowledge.results.results_table, 0, 2)
    window.knowledge.entry_tools.add_golden_action.trigger()
    golden = Path(os.environ["RECALL_GUI_DATA_DIR"]) / "checks" / "golden.json"
    written = json.loads(golden.read_text(encoding="utf-8"))["checks"]
    assert written == [
        {
            "db_name": "docs",
            "query": QUERY,
            "expect": [{"content_sha256": sha(rows[0][1])}, {"content_sha256": sha(rows[2][1])}],
            "limit": 3,
        }
    ]
    assert read_golden(golden).checks[0].expect_text == f"sha256:{sha(rows[0][1])}, sha256:{sha(rows[2][1])}"


def open_manual(window: Any, loop: asyncio.AbstractEventLoop) -> QPlainTextEdit:
    """Search for the manual page, open it in the entry view and wait until it marks the model's cut."""
    search(window, loop, "list directory contents ls", 3)
    rows = shown_rows(window)
    at = [content for _name, content in rows].index(MANUAL)
    select_rows(window.knowledge.results.results_table, at)
    reads = window.knowledge.detail.findChild(QLabel, "detailReads")
    run(loop, until(lambda: reads.text() not in ("", "reading…"), "the entry says what the model reads"))
    return window.knowledge.detail.findChild(QPlainTextEdit, "detailContent")


def test_the_entry_view_marks_where_the_model_stopped_reading(
    manuals: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(manuals.registry_dir)
    view = open_manual(window, loop)
    lines = view.toPlainText().split("\n")
    marker = next(n for n, line in enumerate(lines) if MARKER_TEXT in line)
    read, unread = "\n".join(lines[:marker]), "\n".join(lines[marker + 1 :])
    assert read + unread == MANUAL and unread
    # The oracle is the model itself: what the view shows as read gives the very vector of the whole text.
    assert np.array_equal(embedder.embed_sync(read), embedder.embed_sync(MANUAL))
    assert not np.array_equal(embedder.embed_sync(read[:-1]), embedder.embed_sync(MANUAL))
    limit = embedder.reading().limit
    assert lines[marker] == f"──── {MARKER_TEXT} ({limit:,} tokens) ────"
    reads = window.knowledge.detail.findChild(QLabel, "detailReads").text()
    assert reads.startswith(f"the first {len(read):,} of {len(MANUAL):,} characters ({limit:,} tokens)")
    # The text it does not read is greyed; the text it reads is not.
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.document().characterCount() - 2)
    assert cursor.charFormat().foreground().color() == UNREAD
    cursor.setPosition(5)
    assert cursor.charFormat().foreground().color() != UNREAD
    # Copy gives the entry's text as stored, without the marker.
    window.knowledge.detail.findChild(QPushButton, "copyContentButton").click()
    assert QGuiApplication.clipboard().text() == MANUAL
    # A click in the marker line, then another entry: its text takes none of the marker's look.
    inside = QTextCursor(view.document().find(MARKER_TEXT))
    view.setTextCursor(inside)
    select_rows(window.knowledge.results.results_table, 0 if shown_rows(window)[0][1] != MANUAL else 1)
    run(loop, until(lambda: MANUAL not in view.toPlainText() and bool(view.toPlainText()), "another entry"))
    start = QTextCursor(view.document())
    start.setPosition(1)
    assert start.charFormat().foreground().color() != UNREAD and not start.charFormat().fontItalic()


def test_the_query_box_says_where_a_long_query_was_cut(
    manuals: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(manuals.registry_dir)
    note = window.knowledge.query_bar.findChild(QLabel, "queryReadNote")
    search(window, loop, "list directory contents", 3)
    assert not note.isVisible()
    query = long_text(1500, seed=5)
    extent = embedder.reading().extent(query)
    search(window, loop, query, 3)
    assert note.isVisible()
    before = " ".join(query[extent.read_chars - 40 : extent.read_chars].split())
    assert note.text() == (
        f"The model reads this query only up to “…{before}” (its first {extent.limit:,} tokens): the "
        f"{len(query) - extent.read_chars:,} characters after that change nothing."
    )
    # The cut is the model's: the query up to it is embedded as the whole query is.
    assert np.array_equal(embedder.embed_sync(query[: extent.read_chars]), embedder.embed_sync(query))


def test_exports_carry_each_rows_content_sha256_where_ids_repeat(
    cosh_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    import csv

    window = open_window(cosh_kb.registry_dir)
    search(window, loop, QUERY, 3)
    path = tmp_path / "results.csv"
    assert run(loop, window.knowledge.exporter.export_to(path, "csv")) == 3
    with path.open(encoding="utf-8", newline="") as handle:
        assert handle.readline().startswith("# ")  # where the rows came from
        rows = list(csv.DictReader(handle))
    assert [row["ID"] for row in rows] == ["content"] * 3
    assert [row["content sha256"] for row in rows] == [sha(row["Content"]) for row in rows]


def test_the_health_page_says_what_the_model_reads_of_the_table(
    manuals: KnowledgeBase, embedder: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    from PySide6.QtWidgets import QTreeWidget

    from tests.qt.conftest import waiting_for
    from tests.qt.test_health_page import tree_texts

    window = open_window(manuals.registry_dir)
    page = window.health
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.reportFinished):
        page.findChild(QPushButton, "healthCheckButton").click()
    sections = tree_texts(page.findChild(QTreeWidget, "healthReport"))
    limit = embedder.reading().limit
    [said] = sections["What the model reads"]
    # The three long documents of 900 words and more; the six passages fit.
    assert said.startswith(
        f"AllMiniLML6V2 reads the first {limit:,} tokens of each entry: 3 of 9 rows are longer"
    )
    assert sections["Ids that repeat"][0].startswith(
        f"Ids repeat in this table: all {len(manuals.ids)} rows share"
    )
    assert "need a look" in page.note.message
