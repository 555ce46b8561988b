"""The Health page: the report of a table with bad vectors and repeated contents, listed as the user reads
it, each listed id one double-click from its entry; nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from PySide6.QtWidgets import QPushButton, QTreeWidget

from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, snapshot_tree, write_registry
from tests.qt.conftest import WindowFactory, run, waiting_for


def odd_table(folder: Path, passage_vectors: Any) -> None:
    import lancedb

    ids = [*PASSAGES, "zero", "twin"]
    contents = [*PASSAGES.values(), "   ", next(iter(PASSAGES.values()))]
    matrix = np.vstack(
        [np.asarray(passage_vectors, np.float32), np.zeros((2, passage_vectors.shape[1]), np.float32)]
    )
    matrix[-1] = matrix[0]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1])
    lancedb.connect(str(folder)).create_table(
        "notes", pa.table({"id": ids, "content": contents, "vector": vectors})
    )


def tree_texts(tree: QTreeWidget) -> dict[str, list[str]]:
    sections = {}
    for number in range(tree.topLevelItemCount()):
        section = tree.topLevelItem(number)
        sections[section.text(0)] = [section.child(n).text(0) for n in range(section.childCount())]
    return sections


def test_the_report_lists_bad_entries_and_opens_one_on_double_click(
    tmp_path: Path, passage_vectors: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    odd_table(tmp_path / "db", passage_vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    before = snapshot_tree(tmp_path / "db")
    window = open_window(registry)
    page = window.health
    window.pages.setCurrentWidget(page)
    assert page.database_combo.currentData() == "notes"
    with waiting_for(loop, page.reportFinished):
        page.findChild(QPushButton, "healthCheckButton").click()
    sections = tree_texts(page.findChild(QTreeWidget, "healthReport"))
    first = next(iter(PASSAGES))
    assert sections["Vectors of zero length (1)"] == ["zero"]
    assert sections["Empty contents (1)"] == ["zero"]
    assert sections["The same content, group 1 (2 entries)"] == [first, "twin"]
    assert sections["Counts"][0] == f"{len(PASSAGES) + 2} rows in 1 version"
    assert "need a look" in page.note.message
    requested: list[tuple[str, str]] = []
    window.services.navigation.entryRequested.connect(lambda db, entry: requested.append((db, entry)))
    section = next(
        page.tree.topLevelItem(n)
        for n in range(page.tree.topLevelItemCount())
        if page.tree.topLevelItem(n).text(0).startswith("Vectors of zero")
    )
    page.tree.itemActivated.emit(section.child(0), 0)
    assert requested == [("notes", "zero")]
    assert snapshot_tree(tmp_path / "db") == before


def test_vectors_too_short_or_too_long_for_float32_are_listed_with_what_to_do(
    tmp_path: Path, passage_vectors: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    import lancedb

    width = passage_vectors.shape[1]
    rng = np.random.default_rng(7)
    matrix = np.vstack(
        [
            np.asarray(passage_vectors[:3], np.float32),
            rng.standard_normal((1, width)) * 1e-39,  # its float32 squared length is 0
            rng.standard_normal((1, width)) * 1e19,  # its float32 squared length overflows
        ]
    ).astype(np.float32)
    ids = [*list(PASSAGES)[:3], "faint", "huge"]
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), width)
    lancedb.connect(str(tmp_path / "db")).create_table(
        "notes", pa.table({"id": ids, "content": [f"text {n}" for n in range(5)], "vector": vectors})
    )
    window = open_window(write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")]))
    page = window.health
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.reportFinished):
        page.findChild(QPushButton, "healthCheckButton").click()
    sections = tree_texts(page.findChild(QTreeWidget, "healthReport"))
    assert sections["Vectors too short for float32 (1)"] == ["faint"]
    assert sections["Vectors too long for float32 (1)"] == ["huge"]
    short, long = sections["Warnings"]
    assert short.startswith("1 vector is too short for float32") and "embed their contents again" in short
    assert long.startswith("1 vector is too long for float32") and "delete those rows" in long
    warnings = next(
        page.tree.topLevelItem(n)
        for n in range(page.tree.topLevelItemCount())
        if page.tree.topLevelItem(n).text(0) == "Warnings"
    )
    assert warnings.child(0).toolTip(0) == short  # in full, where the page is too narrow for it


def test_escape_cancels_a_running_scan(
    kb: KnowledgeBase,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from recall_gui import core

    scanning = asyncio.Event()

    async def endless_scan(*_args: Any) -> Any:
        scanning.set()
        await asyncio.Event().wait()  # until cancelled

    monkeypatch.setattr(core.search, "health_report", endless_scan)
    window = open_window(kb.registry_dir)
    page = window.health
    window.pages.setCurrentWidget(page)
    page.check_button.click()
    run(loop, scanning.wait())
    assert page.cancel_button.isEnabled()
    with waiting_for(loop, page.reportFinished):
        window.menus.cancel_action.trigger()
    assert page.note.message == "Cancelled: the report was not finished."
    assert not page.cancel_button.isEnabled() and page.check_button.isEnabled()
