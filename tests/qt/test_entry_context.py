"""The entry detail shows the selected chunk's document and the chunks before and after it (the table's
`source` and `chunk_index` columns, written here, are the oracle)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QLineEdit, QTableView, QTableWidget
from pytestqt.qtbot import QtBot

from tests.kbtools import cosh_entry, write_lance_table, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for

QUESTION = "Where do I choose Account to change the password?"
CHUNKS = {
    "guide-0": ("To reset your password, first open the Settings window.", "guide.md", 0),
    "guide-1": ("In Settings, choose Account and then Change password.", "guide.md", 1),
    "guide-2": ("Type the new password twice and press Save.", "guide.md", 2),
    "tides-0": ("Ocean tides are caused mainly by the pull of the Moon.", "sea.md", 0),
}


def write_notes(tmp_path: Path, embedder: Any, extra: dict[str, list[Any]]) -> None:
    """The chunks, embedded with the real model, as the table "notes" with the ``extra`` columns."""
    texts = [text for text, _, _ in CHUNKS.values()]
    embedded = [embedder.embed_sync(text) for text in texts]
    write_lance_table(tmp_path / "db", "notes", list(CHUNKS), texts, embedded, extra=extra)


def notes_registry(tmp_path: Path) -> Path:
    return write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])


def ask(window: Any, qtbot: QtBot, loop: asyncio.AbstractEventLoop, question: str) -> None:
    """Type ``question`` into the query box and press Enter, as a user does; return once it is answered."""
    query = window.findChild(QLineEdit, "queryEdit")
    query.clear()
    qtbot.keyClicks(query, question)
    with waiting_for(loop, window.knowledge.searchFinished):
        qtbot.keyClick(query, Qt.Key.Key_Return)


def test_selecting_a_result_shows_its_document_and_neighbours(
    tmp_path: Path, embedder: Any, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    sources, positions = [s for _, s, _ in CHUNKS.values()], [n for _, _, n in CHUNKS.values()]
    write_notes(tmp_path, embedder, {"source": sources, "chunk_index": positions})
    window = open_window(notes_registry(tmp_path))
    ask(window, qtbot, loop, QUESTION)
    table = window.findChild(QTableView, "resultsTable")
    ids = [table.model().index(row, 1).data() for row in range(table.model().rowCount())]
    table.selectRow(ids.index("guide-1"))
    label = window.findChild(QLabel, "detailContext")
    loop.run_until_complete(window.operations.wait_idle())  # the document is read by a task of the window
    assert label.text().splitlines() == [
        "guide.md · chunk 2 of 3",
        "previous: guide-0 “To reset your password, first open the Settings window.”",
        "next: guide-2 “Type the new password twice and press Save.”",
    ]
    assert label.toolTip() == "documents by source, chunks ordered by chunk_index"


def test_the_documents_tab_counts_the_results_of_each_document(
    tmp_path: Path, embedder: Any, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    sources = [s for _, s, _ in CHUNKS.values()]
    write_notes(tmp_path, embedder, {"source": sources, "chunk_index": [n for _, _, n in CHUNKS.values()]})
    window = open_window(notes_registry(tmp_path))
    ask(window, qtbot, loop, QUESTION)
    loop.run_until_complete(window.operations.wait_idle())
    results = window.findChild(QTableView, "resultsTable").model()
    ids = [results.index(row, 1).data() for row in range(results.rowCount())]
    source_of = dict(zip(CHUNKS, sources, strict=True))
    expected = []
    for rank, entry_id in enumerate(ids, start=1):
        key = source_of[entry_id]
        if key not in [row[0] for row in expected]:
            count = sum(source_of[i] == key for i in ids)
            expected.append([key, str(rank), f"{count} ({count / len(ids):.0%})"])
    table = window.findChild(QTableWidget, "documentsTable")
    shown = [[table.item(r, c).text() for c in range(3)] for r in range(table.rowCount())]
    assert shown == expected
    note = window.findChild(QLabel, "documentsNote").text()
    assert note.startswith(f"{len(ids)} results from {len(expected)} documents (documents by source,")


def test_after_a_browse_the_documents_tab_no_longer_counts_the_last_searchs_results(
    tmp_path: Path, embedder: Any, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    sources = [s for _, s, _ in CHUNKS.values()]
    write_notes(tmp_path, embedder, {"source": sources, "chunk_index": [n for _, _, n in CHUNKS.values()]})
    window = open_window(notes_registry(tmp_path))
    ask(window, qtbot, loop, QUESTION)
    loop.run_until_complete(window.operations.wait_idle())
    table = window.findChild(QTableWidget, "documentsTable")
    assert table.rowCount() > 0
    with waiting_for(loop, window.knowledge.browseReady):
        QTest.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)  # browse every row
    loop.run_until_complete(window.operations.wait_idle())
    assert table.rowCount() == 0
    assert window.findChild(QLabel, "documentsNote").text() == (
        "The rows shown are browsed, not a search's results: search to see the results by document."
    )


def _choose(qtbot: QtBot, box: Any, typed: str) -> None:
    """Choose an item of a closed box by typing its first letters, as a user does with the keyboard."""
    box.setFocus()
    qtbot.keyClicks(box, typed)


def _neighbour_lines(rows: list[dict[str, Any]], entry_id: str, document: str) -> list[str]:
    ids = [row["id"] for row in rows]
    at = ids.index(entry_id)
    lines = [f"{document} · chunk {at + 1} of {len(rows)}"]
    if at > 0:
        lines.append(f"previous: {rows[at - 1]['id']} “{rows[at - 1]['content']}”")
    if at + 1 < len(rows):
        lines.append(f"next: {rows[at + 1]['id']} “{rows[at + 1]['content']}”")
    return lines


def test_the_documents_tab_and_the_entry_follow_the_order_column_the_user_chooses_for_that_table(
    tmp_path: Path, embedder: Any, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    import lancedb
    from PySide6.QtWidgets import QComboBox

    extra = {
        "source": ["export.csv"] * len(CHUNKS),  # detected, but names the export, not the documents
        "doc_id": ["guide", "guide", "guide", "sea"],
        "chunk_index": [n for _, _, n in CHUNKS.values()],  # detected
        "written": [2, 1, 0, 0],  # the order the guide was written in: never detected
    }
    write_notes(tmp_path, embedder, extra)
    registry = write_registry(
        tmp_path / "registry",
        [cosh_entry("notes", tmp_path / "db"), {**cosh_entry("copy", tmp_path / "db"), "table": "notes"}],
    )
    window = open_window(registry)
    loop.run_until_complete(window.operations.wait_idle())
    document_box = window.findChild(QComboBox, "documentColumn")
    position_box = window.findChild(QComboBox, "positionColumn")
    # The boxes offer the table's columns as soon as it is open, before any search.
    assert [position_box.itemText(row) for row in range(position_box.count())] == [
        "the number in the id",
        "source",
        "doc_id",
        "chunk_index (detected)",
        "written",
    ]
    assert (document_box.currentText(), position_box.currentText()) == (
        "source (detected)",
        "chunk_index (detected)",
    )

    ask(window, qtbot, loop, QUESTION)
    results = window.findChild(QTableView, "resultsTable")
    ids = [results.model().index(row, 1).data() for row in range(results.model().rowCount())]
    results.selectRow(ids.index("guide-1"))
    loop.run_until_complete(window.operations.wait_idle())
    label = window.findChild(QLabel, "detailContext")

    # The oracle: the table as LanceDB reads it, grouped and ordered here by plain Python.
    table = lancedb.connect(str(tmp_path / "db")).open_table("notes")
    rows = table.to_arrow().select(["id", "content", "doc_id", "chunk_index", "written"]).to_pylist()
    by_detection = sorted(rows, key=lambda row: (row["chunk_index"], row["id"]))
    assert label.text().splitlines() == _neighbour_lines(by_detection, "guide-1", "export.csv")

    _choose(qtbot, document_box, "do")
    _choose(qtbot, position_box, "w")
    loop.run_until_complete(window.operations.wait_idle())
    assert (document_box.currentText(), position_box.currentText()) == ("doc_id", "written")
    guide = sorted((row for row in rows if row["doc_id"] == "guide"), key=lambda row: row["written"])
    assert label.text().splitlines() == _neighbour_lines(guide, "guide-1", "guide")
    assert label.toolTip() == "documents by doc_id, chunks ordered by written"

    found = table.search(embedder.embed_sync(QUESTION)).distance_type("l2").limit(5).to_list()
    expected: list[list[str]] = []
    for rank, row in enumerate(found, start=1):
        if row["doc_id"] not in [item[0] for item in expected]:
            count = sum(other["doc_id"] == row["doc_id"] for other in found)
            expected.append([row["doc_id"], str(rank), f"{count} ({count / len(found):.0%})"])
    documents = window.findChild(QTableWidget, "documentsTable")
    shown = [[documents.item(r, c).text() for c in range(3)] for r in range(documents.rowCount())]
    assert shown == expected
    note = window.findChild(QLabel, "documentsNote")
    assert note.text().endswith("(documents by doc_id, chunks ordered by written, as you chose).")

    # Another search of the same table keeps the choice.
    ask(window, qtbot, loop, "What pulls the ocean tides?")
    loop.run_until_complete(window.operations.wait_idle())
    assert (document_box.currentText(), position_box.currentText()) == ("doc_id", "written")
    assert note.text().endswith("(documents by doc_id, chunks ordered by written, as you chose).")

    # Another database starts from what is detected again, without the previous table's results.
    run(loop, window.knowledge.choose_database("copy"))
    loop.run_until_complete(window.operations.wait_idle())
    assert (document_box.currentText(), position_box.currentText()) == (
        "source (detected)",
        "chunk_index (detected)",
    )
    assert documents.rowCount() == 0
    assert note.text() == "Search to see the results by document."


def test_a_choice_an_older_version_lacks_the_column_of_is_refused_in_the_note(
    tmp_path: Path, embedder: Any, open_window: WindowFactory, qtbot: QtBot, loop: asyncio.AbstractEventLoop
) -> None:
    import lancedb
    from PySide6.QtWidgets import QComboBox

    write_notes(
        tmp_path,
        embedder,
        {"source": ["export.csv"] * len(CHUNKS), "chunk_index": [n for _, _, n in CHUNKS.values()]},
    )
    # Later versions add the column that names the documents; version 1 has none.
    table = lancedb.connect(str(tmp_path / "db")).open_table("notes")
    table.add_columns({"doc_id": "'guide'"})
    table.update(where="id = 'tides-0'", values={"doc_id": "sea"})
    window = open_window(notes_registry(tmp_path))
    ask(window, qtbot, loop, QUESTION)
    loop.run_until_complete(window.operations.wait_idle())
    document_box = window.findChild(QComboBox, "documentColumn")
    _choose(qtbot, document_box, "do")
    loop.run_until_complete(window.operations.wait_idle())
    note = window.findChild(QLabel, "documentsNote")
    assert note.text().endswith("(documents by doc_id, chunks ordered by chunk_index, as you chose).")

    page = window.knowledge
    run(loop, page.open_version(1, page.read_inputs()))
    loop.run_until_complete(window.operations.wait_idle())
    assert note.text().startswith('The table has no column "doc_id", so the detected columns are used. ')
    assert note.text().endswith("(documents by source, chunks ordered by chunk_index, detected).")
    assert document_box.currentText() == "source (detected)"
    assert "doc_id" not in [document_box.itemText(row) for row in range(document_box.count())]
    documents = window.findChild(QTableWidget, "documentsTable")
    assert [documents.item(r, 0).text() for r in range(documents.rowCount())] == ["export.csv"]

    # The choice holds again for the latest version, which has the column.
    run(loop, page.open_version(None, page.read_inputs()))
    loop.run_until_complete(window.operations.wait_idle())
    assert note.text().endswith("(documents by doc_id, chunks ordered by chunk_index, as you chose).")
    assert document_box.currentText() == "doc_id"
