"""The Duplicates page: planted copies found with progress, a group's entries side by side with the
differing words marked, a search that can be cancelled, and a table too big for memory refused."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QTableWidget

from tests.core.test_duplicates import (
    EDITS,
    numpy_cosine_distances,
    planted_rows,
    write_big_table,
    write_chained_table,
)
from tests.kbtools import (
    PASSAGES,
    KnowledgeBase,
    cosh_entry,
    snapshot_tree,
    write_lance_table,
    write_registry,
)
from tests.qt.conftest import WindowFactory, run, waiting_for


@pytest.fixture
def planted_kb(
    tmp_path: Path, passage_vectors: Any, embedder: Any
) -> tuple[KnowledgeBase, dict[str, set[str]]]:
    ids, texts, vectors, groups = planted_rows(
        list(PASSAGES), list(PASSAGES.values()), passage_vectors, embedder, np.random.default_rng(5)
    )
    write_lance_table(tmp_path / "db", "notes", ids, texts, vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    return KnowledgeBase("notes", tmp_path / "db", registry, tuple(ids), tuple(texts), vectors), groups


def test_groups_are_found_and_shown_side_by_side(
    planted_kb: tuple[KnowledgeBase, dict[str, set[str]]],
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
) -> None:
    kb, expected = planted_kb
    before = snapshot_tree(kb.db_dir)
    window = open_window(kb.registry_dir)
    page = window.duplicates
    window.pages.setCurrentWidget(page)
    assert page.database_combo.currentData() == kb.name
    assert page.threshold_spin.value() == 0.05
    shares: list[int] = []
    page.progress.valueChanged.connect(shares.append)
    with waiting_for(loop, page.searchFinished):
        page.findChild(QPushButton, "duplicatesFindButton").click()
    assert shares and shares[-1] == 1000
    groups = page.findChild(QTableWidget, "duplicatesGroups")
    assert groups.rowCount() == len(expected)
    assert page.report is not None
    assert {frozenset(group.ids) for group in page.report.groups} == {
        frozenset(ids) for ids in expected.values()
    }
    assert groups.item(0, 0).text() == "4"  # largest first: lancedb and its three copies
    assert page.note.message.startswith(f"{len(expected)} groups in {kb.name}: ")

    # The group of an entry edited and re-embedded: both side by side, the changed words marked.
    number = next(n for n, group in enumerate(page.report.groups) if "pw-reset" in group.ids)
    groups.selectRow(number)
    cards = page.cards()
    assert [card.title.text().split("<br>")[0] for card in cards] == [
        "<b>pw-reset</b>",
        "<b>pw-reset~edited</b>",
    ]
    # Each entry's place in its group, never LanceDB's internal row id (fragment << 32 | offset).
    assert [card.title.text().split("<br>")[1] for card in cards] == [
        "<small>1 of 2 · the first entry</small>",
        "<small>2 of 2 · differs from the first in 1 place</small>",
    ]
    old, new = EDITS["pw-reset"]
    assert cards[1].content.toPlainText() == PASSAGES["pw-reset"].replace(old, new)
    marked = _marked_text(cards[1])
    assert marked == "and "
    assert snapshot_tree(kb.db_dir) == before


def _marked_text(card: Any) -> str:
    """The characters of a card's content that carry a background (the words marked as different)."""
    document = card.content.document()
    block = document.begin()
    found = []
    while block.isValid():
        iterator = block.begin()
        while not iterator.atEnd():
            fragment = iterator.fragment()
            if fragment.charFormat().background().style() != Qt.BrushStyle.NoBrush:
                found.append(fragment.text())
            iterator += 1
        block = block.next()
    return "".join(found)


@pytest.mark.slow
def test_a_search_can_be_cancelled_and_a_table_too_big_is_refused(
    tmp_path: Path,
    passage_vectors: Any,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_big_table(tmp_path / "db", passage_vectors, 30_000)
    registry = write_registry(tmp_path / "registry", [cosh_entry("big", tmp_path / "db")])
    window = open_window(registry)
    page = window.duplicates
    started = asyncio.Event()
    page.progress.valueChanged.connect(lambda value: value > 0 and started.set())
    with waiting_for(loop, page.searchFinished):
        page.request_find()

        async def cancel_when_started() -> None:
            await started.wait()
            page.findChild(QPushButton, "duplicatesCancelButton").click()

        run(loop, cancel_when_started())
    assert page.note.message.startswith("Cancelled at ")
    assert page.findChild(QPushButton, "duplicatesFindButton").isEnabled()
    assert page.report is None

    monkeypatch.setenv("RECALL_GUI_EXACT_CACHE_MB", "10")  # read at each search: no restart needed
    run(loop, page.look_for("big", 0.05, "cosine"))
    assert page.note.tone == "bad"
    assert page.note.message.startswith(
        'Cannot look for near-duplicates in "big": its vectors need 44 MB in memory, more than the 10 MB '
        "allowed"
    )


def test_zero_vectors_left_out_of_cosine_are_counted_in_the_note(
    tmp_path: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    vectors = np.zeros((10, 8), np.float32)
    ids = [f"zero-{i}" for i in range(10)]
    write_lance_table(tmp_path / "db", "notes", ids, ids, vectors)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    window = open_window(registry)
    page = window.duplicates
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.searchFinished):
        page.findChild(QPushButton, "duplicatesFindButton").click()
    assert page.note.message == (
        "No near-duplicates in notes: no two of its 0 entries lie within cosine distance 0.05. 10 entries "
        "have a zero vector (all components 0): cosine distance is undefined for it, so they were left out; "
        "the squared L2 distance compares them."
    )
    assert page.note.tone == "neutral"


def test_a_chained_group_names_its_widest_pair_beyond_the_threshold(
    tmp_path: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    ids, vectors = write_chained_table(tmp_path / "db")
    distances = numpy_cosine_distances(vectors)
    a, c, d, e = (ids.index(name) for name in "acde")
    window = open_window(write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")]))
    page = window.duplicates
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.searchFinished):
        page.findChild(QPushButton, "duplicatesFindButton").click()
    assert "a chain of them can hold two entries farther apart" in page.note.message
    groups = page.findChild(QTableWidget, "duplicatesGroups")
    assert [groups.item(row, 1).text() for row in range(groups.rowCount())] == [
        f"{distances[a, c]:.4f} ⚠",
        f"{distances[d, e]:.4f}",
    ]
    note = page.findChild(QLabel, "duplicatesGroupNote")
    groups.selectRow(0)
    assert note.isVisible()
    assert note.text() == (
        f"Widest pair: a and c, {distances[a, c]:.4f} apart: beyond 0.05, linked through the others by "
        "pairs within it."
    )
    assert groups.item(0, 1).toolTip() == note.text()
    subtitles = [card.title.text().split("<br>")[1] for card in page.cards()]
    assert ["of the widest pair" in subtitle for subtitle in subtitles] == [True, False, True]
    groups.selectRow(1)
    assert note.text() == (
        f"Widest pair: d and e, {distances[d, e]:.4f} apart: every pair of these 2 entries lies within 0.05."
    )
