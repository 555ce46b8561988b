"""Exporting while browsing writes the whole table, or every row the filter keeps — not only the rows
scrolled into view so far — behind a progress dialog whose Cancel leaves no file. A search's results export
as they are shown."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QProgressDialog, QPushButton

from recall_gui.qt.dialogs import export_progress
from recall_gui.qt.main_window import MainWindow
from tests.kbtools import KnowledgeBase, cosh_entry, write_lance_table, write_registry
from tests.qt.conftest import WindowFactory, run

ROWS = 3_000  # about three pages of the browse table


@pytest.fixture
def long_kb(kb: KnowledgeBase) -> KnowledgeBase:
    """``ROWS`` rows of the real passages and vectors, registered as "long"."""
    n = len(kb.ids)
    ids = [f"{kb.ids[i % n]}~{i}" for i in range(ROWS)]
    contents = [kb.contents[i % n] for i in range(ROWS)]
    vectors = np.asarray(kb.vectors)[np.arange(ROWS) % n]
    write_lance_table(kb.db_dir, "long", ids, contents, vectors, extra={"n": list(range(ROWS))})
    write_registry(kb.registry_dir, [cosh_entry("long", kb.db_dir)])
    return KnowledgeBase("long", kb.db_dir, kb.registry_dir, tuple(ids), tuple(contents), vectors)


def browse(window: MainWindow, loop: asyncio.AbstractEventLoop, filter_text: str = "") -> None:
    window.knowledge.results.filter_edit.setText(filter_text)
    run(loop, window.knowledge.browser.browse(window.knowledge.read_inputs()))


def test_exporting_while_browsing_writes_every_row_not_only_those_read(
    long_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(long_kb.registry_dir)
    browse(window, loop)
    model = window.knowledge.browse_model
    assert model.total == ROWS and model.rowCount() < ROWS  # only the first page has been read
    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "all.csv", "csv")) == ROWS
    with (tmp_path / "all.csv").open(encoding="utf-8", newline="") as written:
        rows = list(csv.reader(written))
    assert rows[0] == ["Row", "ID", "Content", "n"]
    assert [row[1] for row in rows[1:]] == list(long_kb.ids)
    assert [row[0] for row in rows[1:]] == [str(i) for i in range(1, ROWS + 1)]
    assert rows[-1][3] == str(ROWS - 1)
    assert window.status_activity.text() == f"Exported {ROWS:,} rows to {tmp_path / 'all.csv'}"
    assert model.rowCount() < ROWS  # the view did not have to read them all


def test_exporting_a_filtered_table_writes_every_row_the_filter_keeps(
    long_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    window = open_window(long_kb.registry_dir)
    browse(window, loop, "THE")
    kept = [i for i, text in enumerate(long_kb.contents) if "the" in text.lower()]
    model = window.knowledge.browse_model
    assert model.total == len(kept) > 1_000 and model.rowCount() < len(kept)
    assert run(loop, window.knowledge.exporter.export_to(tmp_path / "kept.json", "json")) == len(kept)
    records = json.loads((tmp_path / "kept.json").read_text(encoding="utf-8"))
    assert [record["ID"] for record in records] == [long_kb.ids[i] for i in kept]
    assert [record["Row"] for record in records] == list(range(1, len(kept) + 1))
    assert [record["n"] for record in records] == kept


def test_cancel_in_the_progress_dialog_leaves_no_file(
    long_kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window = open_window(long_kb.registry_dir)
    browse(window, loop)
    monkeypatch.setattr(
        "recall_gui.core.tables.table_export.BATCH_ROWS", 500
    )  # several batches to cancel between
    shown = []
    update = export_progress.ExportProgress.update

    def update_then_cancel(self: export_progress.ExportProgress, done: int, total: int) -> None:
        update(self, done, total)
        shown.append((self.dialog.labelText(), self.dialog.value(), self.dialog.maximum()))
        self.dialog.findChild(QPushButton).click()  # the dialog's Cancel, as a user clicks it

    monkeypatch.setattr(export_progress.ExportProgress, "update", update_then_cancel)
    exports = tmp_path / "exports"
    exports.mkdir()
    task = window.knowledge.exporter.exporting.start(
        window.knowledge.exporter.export_to(exports / "all.json", "json")
    )
    run(loop, window.operations.wait_idle())
    assert task.cancelled()
    assert shown == [(f"Writing all.json: 500 of {ROWS:,} rows", 500, ROWS)]
    assert list(exports.iterdir()) == []
    assert window.status_activity.text() == f"Export cancelled: {exports / 'all.json'} was not written"
    assert (
        window.findChild(QProgressDialog, "exportDialog") is None
        or not window.findChild(QProgressDialog, "exportDialog").isVisible()
    )
