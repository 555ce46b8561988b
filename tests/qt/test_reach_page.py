"""The Reach page: the planted unreachable entries listed as the user reads them (sortable by rank), one
double-click from their entry, a row kept as a golden check, the Lorenz curve of retrievability drawn,
Ctrl+0 to reach it, Cancel stopping a run; nothing written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QPushButton

from recall_gui.qt.models.reach_model import CAUSE, ENTRY, RANK
from tests.kbtools import snapshot_tree
from tests.qt.conftest import WindowFactory, run, waiting_for
from tests.reachtools import NAME, Planted, write_planted


@pytest.fixture
def planted(tmp_path: Path, embedder: Any) -> Planted:
    return write_planted(tmp_path / "kb", embedder)


def column(page: Any, number: int) -> list[str]:
    model = page.table.model()
    return [model.index(row, number).data() for row in range(model.rowCount())]


def test_the_report_lists_the_unreachable_and_opens_and_keeps_them(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    before = snapshot_tree(planted.db_dir)
    window = open_window(planted.registry_dir)
    page = window.reach
    next(a for a in window.menus.page_actions if a.shortcut() == QKeySequence("Ctrl+0")).trigger()
    assert window.pages.currentIndex() == window.pages.indexOf(page)
    assert page.database_combo.currentData() == NAME
    page.limit_spin.setValue(1)
    with waiting_for(loop, page.reportFinished):
        page.findChild(QPushButton, "reachRunButton").click()
    report = page.report
    assert report is not None and report.limit == 1
    causes = dict(zip(column(page, ENTRY), column(page, CAUSE), strict=True))
    assert causes["tides-copy"] == "near-copy" and causes["zero"] == "zero-vector"
    assert causes["victim-0"] == "hub" and causes["empty-1"] == "empty"
    assert len(causes) == len(report.unreachable)
    ranks = column(page, RANK)  # sorted by rank: numbers first, then "> depth", then "—" (no query)
    known = [int(rank) for rank in ranks if rank.isdigit()]
    assert known == sorted(known) and ranks.index("—") > len(known) - 1
    page.table.sortByColumn(ENTRY, Qt.SortOrder.DescendingOrder)
    assert column(page, ENTRY) == sorted(causes, reverse=True)
    assert f"{report.reachable:,} of {report.searched:,}" in page.note.message
    xs, ys = page.chart.curve_points()
    counts = sorted(entry.returned_for for entry in report.retrievability)
    assert xs == pytest.approx([n / len(counts) for n in range(len(counts) + 1)])
    assert ys == pytest.approx([sum(counts[:n]) / sum(counts) for n in range(len(counts) + 1)])

    requested: list[tuple[str, str]] = []
    window.services.navigation.entryRequested.connect(lambda db, entry: requested.append((db, entry)))
    row = column(page, ENTRY).index("tides-copy")
    page.table.doubleClicked.emit(page.table.model().index(row, 0))
    assert requested == [(NAME, "tides-copy")]

    window.services.golden.new(tmp_path / "golden.json")
    page.table.selectRow(row)
    assert page.golden_button.isEnabled()
    page.golden_button.click()
    (check,) = window.services.golden.checks
    assert (check.db_name, check.query, check.expect, check.limit) == (
        NAME,
        "Ocean tides are caused mainly by the gravitational pull of the Moon.",
        ("tides-copy",),
        1,
    )
    page.table.selectRow(column(page, ENTRY).index("empty-0"))
    assert not page.golden_button.isEnabled()  # no query to keep
    assert snapshot_tree(planted.db_dir) == before


def test_cancel_stops_a_report_and_a_bad_rule_is_named(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(planted.registry_dir)
    page = window.reach
    page.rule_combo.setEditText("column:nope")
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.note.tone == "bad" and "no column 'nope'" in page.note.message
    page.rule_combo.setCurrentIndex(0)
    shown = page._on_progress
    stages: list[str] = []

    def click_cancel_once_embedded(stage: str, done: int, total: int) -> None:
        shown(stage, done, total)
        stages.append(stage)
        if stage == "embedding queries":
            assert page.cancel_button.isEnabled() and not page.run_button.isEnabled()
            page.cancel_button.click()

    page._on_progress = click_cancel_once_embedded  # type: ignore[method-assign]
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert "searching" not in stages
    assert "Cancelled" in page.note.message and page.report is None
    assert page.run_button.isEnabled() and not page.cancel_button.isEnabled()
    run(loop, window.operations.wait_idle())


def test_a_failed_run_leaves_no_earlier_report_on_screen(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(planted.registry_dir)
    page = window.reach
    page.limit_spin.setValue(1)
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.report is not None and page.table.model().rowCount() > 0
    page.rule_combo.setEditText("column:nope")
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.note.tone == "bad" and "no column 'nope'" in page.note.message
    assert page.report is None and page.table.model().rowCount() == 0
    assert page.chart is not None and page.chart.curve_points() == ([], [])
    assert page.run_button.isEnabled()
