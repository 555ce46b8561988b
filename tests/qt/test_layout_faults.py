"""What the window shows at 1280x800 and 800x500, measured as drawn: the distance column's title whole and
the ids not cut while the content takes the room, every page's tab in sight, no page-wide scroll bar on
the Agent view, the Checks verdict that keeps its height, a ring (not a green dot) for an inactive
database, and the versions chart's legend off its lines."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import lancedb
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage
from PySide6.QtWidgets import QApplication

from recall_gui.core.golden.golden import GoldenCheck, GoldenFile, write_golden
from recall_gui.qt.main_window import MainWindow
from recall_gui.qt.models.results_model import DISTANCE, ID
from recall_gui.qt.scope.inputs import Inputs
from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry
from tests.qt.conftest import WindowFactory, run
from tests.qt.test_checks_page import default_golden

LONG = "a-rather-long-entry-id-"


def settle(window: MainWindow, loop: asyncio.AbstractEventLoop, size: tuple[int, int]) -> None:
    window.resize(*size)
    for _ in range(3):
        QApplication.processEvents()
    run(loop, window.operations.wait_idle())


def long_ids_window(tmp_path: Path, passage_vectors: Any, open_window: WindowFactory) -> MainWindow:
    write_lance_table(
        tmp_path / "db", "notes", [LONG + key for key in PASSAGES], list(PASSAGES.values()), passage_vectors
    )
    registry = write_registry(
        tmp_path / "registry",
        [cosh_entry("notes", tmp_path / "db"), {**cosh_entry("idle", tmp_path / "db"), "table": "notes"}],
        active=["notes"],
    )
    return open_window(registry)


def test_the_results_columns_the_tabs_and_the_agent_view_fit_at_both_sizes(
    tmp_path: Path, passage_vectors: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = long_ids_window(tmp_path, passage_vectors, open_window)
    knowledge = window.knowledge
    run(loop, knowledge.searching.search(Inputs("capital of France", 5)))
    table = knowledge.results.results_table
    header = table.horizontalHeader()
    for size in ((1280, 800), (800, 500)):
        settle(window, loop, size)
        title = str(table.model().headerData(DISTANCE, Qt.Orientation.Horizontal))
        assert title == "Distance (squared L2)"
        # The title and a margin on each side of it (the header's style draws 3 pixels or more).
        assert header.sectionSize(DISTANCE) >= QFontMetrics(header.font()).horizontalAdvance(title) + 8, size
        ids = [table.model().index(row, ID).data() for row in range(table.model().rowCount())]
        widest = max(table.fontMetrics().horizontalAdvance(text) for text in ids)
        if size == (1280, 800):  # room enough: no id is cut while the content takes the rest
            assert header.sectionSize(ID) > widest, size
        assert header.sectionSize(ID) <= max(140, table.viewport().width() // 3)  # the content keeps room
        bar = window.pages.tabBar()
        assert not bar.usesScrollButtons()
        assert all(bar.tabRect(i).right() <= bar.width() for i in range(bar.count())), size  # all in sight
        assert bar.tabToolTip(window.pages.indexOf(window.description)) == "Agent's tool description"
    settle(window, loop, (1280, 800))
    window.pages.setCurrentWidget(window.agent)
    settle(window, loop, (1280, 800))
    area = window.pages.currentWidget().parentWidget().parentWidget()
    assert not area.verticalScrollBar().isVisible()


def centre_and_rim(icon: Any) -> tuple[QColor, QColor]:
    image: QImage = icon.pixmap(16, 16).toImage()
    return image.pixelColor(QPoint(8, 8)), image.pixelColor(QPoint(4, 8))


def test_an_inactive_database_has_a_ring_not_the_green_dot_of_one_agents_search(
    tmp_path: Path, passage_vectors: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = long_ids_window(tmp_path, passage_vectors, open_window)
    run(loop, window.operations.wait_idle())
    combo = window.knowledge.database_bar.combo
    icons = {
        combo.itemText(i).split()[0]: combo.itemIcon(i) for i in range(combo.count()) if combo.itemText(i)
    }
    assert any(combo.itemText(i) == "idle (inactive)" for i in range(combo.count()))
    active_centre, _rim = centre_and_rim(icons["notes"])
    idle_centre, idle_rim = centre_and_rim(icons["idle"])
    assert active_centre.green() > active_centre.red() and active_centre.alpha() == 255  # a green dot
    assert idle_centre.alpha() == 0 and idle_rim.alpha() > 0  # a ring: nothing in its middle
    assert abs(idle_rim.red() - idle_rim.green()) < 16  # grey, not green


def test_the_checks_verdict_keeps_its_height_and_the_versions_legend_stays_off_the_chart(
    tmp_path: Path, passage_vectors: Any, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> None:
    window = long_ids_window(tmp_path, passage_vectors, open_window)
    write_golden(
        default_golden(),
        GoldenFile(
            (
                GoldenCheck("notes", "capital of France", (LONG + "paris",)),
                GoldenCheck("notes", "How do I change my password?", (LONG + "asyncio",), 3),  # fails
            )
        ),
    )
    page = window.checks
    window.pages.setCurrentWidget(page)
    run(loop, page.load_file())
    settle(window, loop, (800, 500))
    before = (page.note.height(), page.table.mapTo(page, QPoint(0, 0)).y())
    run(loop, page.run_checks())
    settle(window, loop, (800, 500))
    assert (
        page.note.tone == "bad"
        and page.note.heightForWidth(page.note.width()) > page.note.fontMetrics().height()
    )
    assert (page.note.height(), page.table.mapTo(page, QPoint(0, 0)).y()) == before  # the rows stay put

    lancedb.connect(str(tmp_path / "db")).open_table("notes").delete(f"id = '{LONG}coffee'")
    run(loop, page.run_on_versions())
    view = page.versions_view
    assert view.chart is not None and view.chart.getPlotItem().legend is None  # nothing drawn on the lines
    assert view.legend is not None and view.legend.isVisibleTo(view)
    assert [word in view.legend.text() for word in ("recall", "MRR", "nDCG")] == [True] * 3
