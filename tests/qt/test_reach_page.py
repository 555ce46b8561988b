"""The Reach page: the planted unreachable entries listed as the user reads them (sortable by rank), one
double-click from their entry, a row kept as a golden check, the Lorenz curve of retrievability drawn,
Ctrl+0 to reach it, Cancel stopping a run; nothing written."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton

from recall_gui.core.reach import reach as reach_module
from recall_gui.qt.models.reach_model import CAUSE, ENTRY, RANK
from tests.kbtools import cosh_entry, snapshot_tree, write_registry
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
    assert "All rows compared in memory, " in page.note.message and "Exact search" not in page.note.message
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


def test_the_page_follows_the_knowledge_pages_database_and_drops_a_report_of_another(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    other = {**cosh_entry("other", planted.db_dir, "The same table again"), "table": NAME}
    registry = write_registry(tmp_path / "registry", [cosh_entry("archive", planted.db_dir), other])
    (registry / "rag_active.json").write_text('["archive"]', encoding="utf-8")
    window = open_window(registry)
    page = window.reach
    run(loop, window.knowledge.choose_database("other"))
    assert page.database_combo.chosen() == "other"  # not the first listed: the one looked at
    page.limit_spin.setValue(1)
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.report is not None and page.report.db_name == "other" and page.model.rowCount() > 0
    run(loop, window.knowledge.choose_database("archive"))
    assert page.database_combo.chosen() == "archive"
    assert page.report is None and page.model.rowCount() == 0  # other's entries are not shown as archive's
    assert not page.note.message.startswith("other")


def test_entries_are_listed_as_found_and_a_cancel_says_the_list_is_of_the_stopped_run(
    planted: Planted,
    open_window: WindowFactory,
    loop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reach_module, "PART_QUERIES", 4)
    window = open_window(planted.registry_dir)
    page = window.reach
    page.limit_spin.setValue(1)
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.chart is not None and page.chart.curve_points() != ([], [])
    earlier = {item.id for item in page.report.unreachable} if page.report is not None else set()

    seen: list[tuple[int, bool]] = []  # rows listed, and whether the run was still going
    listed = page._on_found

    def found_then_cancel(found: tuple[Any, ...]) -> None:
        listed(found)
        seen.append((page.model.rowCount(), page.report_run.running))
        if sum(1 for item in found if item.query) and len(seen) >= 2:
            page.cancel_button.click()

    page._on_found = found_then_cancel  # type: ignore[method-assign]
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    # The list grew while the run went on, part by part, with no report yet.
    assert len(seen) >= 2 and all(running for _rows, running in seen)
    assert [rows for rows, _running in seen] == sorted({rows for rows, _running in seen})
    rows = page.model.rowCount()
    ids = {column(page, ENTRY)[row] for row in range(rows)}
    assert 0 < rows < len(earlier) and ids < earlier
    assert set(column(page, CAUSE)) == {"…"}  # found before the stop: no cause yet
    ranks = {rank for rank in column(page, RANK) if not rank.isdigit()}
    assert ranks <= {"> 100", "—"}  # beyond the depth the report looks to, or no query
    assert page.report is None and page.chart.curve_points() == ([], [])  # no curve of the earlier run
    assert re.fullmatch(
        rf"Cancelled after asking for \d+ of \d+ entries of {NAME}: the {rows} listed were found out of "
        r"reach before the stop, without their causes; the spread of results needs a finished report\.",
        page.note.message,
    )


def test_a_report_of_an_older_version_says_so_after_f5(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, embedder: Any
) -> None:
    import lancedb
    import numpy as np
    import pyarrow as pa

    window = open_window(planted.registry_dir)
    page = window.reach
    window.pages.setCurrentWidget(page)
    with waiting_for(loop, page.reportFinished):
        page.request_report()
    assert page.report is not None
    version = page.report.version
    QTest.keyClick(window, Qt.Key.Key_F5)
    run(loop, window.operations.wait_idle())
    assert not page.note.message.startswith("This report is of version")  # nothing has changed yet

    vector = np.asarray(embedder.embed_sync("Volcanoes erupt molten rock."), np.float32)
    lancedb.connect(str(planted.db_dir)).open_table(NAME).add(
        pa.table(
            {
                "id": ["volcano"],
                "content": ["Volcanoes erupt molten rock."],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), len(vector)),
            }
        )
    )
    with waiting_for(loop, window.registryReloaded):
        QTest.keyClick(window, Qt.Key.Key_F5)
    run(loop, window.operations.wait_idle())
    assert page.note.message.startswith(
        f"This report is of version {version} of {NAME}; the table is at version {version + 1} now, so it "
        "may no longer hold: check reach again."
    )
    assert page.note.tone == "warning"


def test_the_status_bar_says_the_reports_outcome_on_the_reach_page_only(
    planted: Planted, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = open_window(planted.registry_dir)
    page, status = window.reach, window.status_activity
    page.limit_spin.setValue(1)
    with waiting_for(loop, page.reportFinished):
        page.request_report()  # made while the knowledge page is shown
    assert page.report is not None
    said = f"Reach of {NAME}: {len(page.report.unreachable):,} entries unreached"
    assert status.text() != said and "Reach" not in status.text()
    window.pages.setCurrentWidget(page)
    assert status.text() == said
    window.pages.setCurrentWidget(window.knowledge)
    assert status.text() != said and "Reach" not in status.text()
    window.pages.setCurrentWidget(page)
    assert status.text() == said
