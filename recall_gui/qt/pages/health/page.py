"""The Health page: one database's health report (:mod:`recall_gui.core.search.health_scan`) — LanceDB's own
statistics and what one streamed scan finds — with each listed id one double-click from its entry.

The scan runs in the page's lane with progress (:mod:`recall_gui.qt.panels.report_run`); Cancel (or a
newer request) stops it between batches. Nothing is written: the report only advises an optimize, a
re-index or deleting a legacy full-text index.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTreeWidgetItem, QVBoxLayout, QWidget

from recall_gui import core
from recall_gui.core.base import plural
from recall_gui.qt.panels.report_run import ReportRun
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import PlaceholderTree

if TYPE_CHECKING:
    from recall_gui.core.search import HealthReport

#: The role that holds a listed entry's id on its item.
ENTRY_ID_ROLE = Qt.ItemDataRole.UserRole + 1
INTRODUCTION = (
    "Check a database's health: its model and vector width, fragments, indexes and the rows they miss, a "
    "legacy full-text index, vectors missing, of zero length, not finite or too short or long for float32, "
    "empty contents and contents stored twice. Double-click an id to open it."
)


def press_to_check(name: str | None) -> str:
    """What the empty report area says pressing the button will do."""
    if name is None:
        return "No registered database to check: register one, or press F5 if another program did."
    return (
        f"Press “Check health” to read LanceDB's statistics of {name} and scan each of its rows, "
        "read-only. What needs a look is listed here."
    )


def report_sections(report: HealthReport) -> list[tuple[str, list[str]]]:
    """The sections of the report as the page lists them: a heading and its lines (ids for the lists)."""
    counts = [
        f"{plural(report.rows, 'row')} in {plural(report.versions, 'version')}",
        f"{plural(report.fragments, 'fragment')}, {report.small_fragments:,} of them small",
        f"vectors of width {report.width}",
    ]
    indexes = [
        f"{index.name}: {index.type} on {', '.join(index.columns)}"
        + ("" if index.unindexed_rows is None else f", {index.unindexed_rows:,} rows not covered")
        for index in report.indices
    ] or ["no index: every search scans the whole table"]
    sections = [("Counts", counts), ("Indexes", indexes), ("What the model reads", [report.reading_text])]
    said = report.repeats.sentence()
    if said is not None:
        sections.append(("Ids that repeat", [said[0].upper() + said[1:]]))
    for title, ids in (
        ("Vectors missing", report.missing),
        ("Vectors of zero length", report.zero_norm),
        ("Vectors not finite", report.not_finite),
        ("Vectors too short for float32", report.too_short),
        ("Vectors too long for float32", report.too_long),
        ("Empty contents", report.empty),
    ):
        if ids:
            sections.append((f"{title} ({len(ids):,})", ids))
    for number, group in enumerate(report.duplicate_groups, start=1):
        sections.append((f"The same content, group {number} ({len(group)} entries)", group))
    if report.warnings:
        sections.append(("Warnings", report.warnings))
    return sections


class HealthPage(QWidget):
    """``healthDatabase``, ``healthCheckButton``, ``healthCancelButton``, ``healthProgress``,
    ``healthNote`` and ``healthReport`` (a tree: one section per finding, ids under the lists)."""

    #: A report finished (or was cancelled, or failed): the note says how.
    reportFinished = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("healthPage")
        self.services = services
        self.report: HealthReport | None = None
        self.shown_database: str | None = None
        #: The controls and the report being made (a newer one cancels it).
        self.report_run = report_run = ReportRun(
            services.operations,
            "health",
            run=(
                "Check health",
                "healthCheckButton",
                "Read LanceDB's statistics and scan every row (read-only)",
            ),
            cancel_tip="Stop the scan (Esc)",
            set_activity=services.page_activity(self),
            parent=self,
        )
        self.database_combo, self.check_button, self.cancel_button, self.progress, self.note = (
            report_run.widgets()
        )
        self.database_combo.setMinimumWidth(150)
        self.progress.setFormat("scanning rows: %p%")
        self.tree = PlaceholderTree()
        self.tree.setObjectName("healthReport")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.itemActivated.connect(self._on_activated)
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel("Database:"))
        controls.addWidget(self.database_combo)
        controls.addStretch(1)
        controls.addWidget(self.check_button)
        controls.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        layout.addWidget(self.progress)
        layout.addWidget(self.tree, 1)
        report_run.finished.connect(self.reportFinished)
        self.check_button.clicked.connect(self.request_check)
        self.database_combo.currentIndexChanged.connect(self._on_database_changed)
        self.database_combo.follow(services.drafts)
        self.follow_registry()
        self.note.show_note(INTRODUCTION, "neutral")

    def follow_registry(self) -> None:
        """List the registry's databases (active ones first), keeping the one chosen while it is listed."""
        self.report_run.follow_registry(self.services.registry)
        self._on_database_changed()

    def _on_database_changed(self) -> None:
        """Another database chosen: a report of the one before is no longer shown as if it were its."""
        chosen = self.database_combo.chosen()
        self.tree.setPlaceholder(press_to_check(chosen))
        if self.shown_database is not None and chosen != self.shown_database:
            self.report, self.shown_database = None, None
            self.tree.clear()
            self.note.show_note(INTRODUCTION, "neutral")

    def choose_database(self, name: str) -> None:
        self.database_combo.choose(name)

    def _on_progress(self, read: int, rows: int) -> None:
        self.progress.setRange(0, max(rows, 1))
        self.progress.setValue(read)

    def check(self, name: str) -> asyncio.Task[bool] | None:
        """Make the report of the database ``name`` and show it section by section (``None``: no such
        database)."""
        entry, services = self.services.registry.get(name), self.services
        if entry is None:
            return None

        async def report(on_progress: Callable[[int, int], None]) -> HealthReport:
            return await core.search.health_report(await services.session(), entry, on_progress)

        def show(found: HealthReport) -> None:
            self.show_report(name, found)

        self.progress.setRange(0, 0)
        return self.report_run.run(
            report,
            progress=self._on_progress,
            busy=f"Checking {name}…",
            show=show,
            cancelled=lambda: "Cancelled: the report was not finished.",
        )

    def show_report(self, name: str, report: HealthReport) -> None:
        self.report, self.shown_database = report, name
        if report.healthy:
            self.note.show_note(f"{name} is healthy: nothing to list.", "good")
        else:
            self.note.show_note(f"{name}: some entries or settings need a look (below).", "warning")
        self.tree.clear()
        listed_ids = {*report.missing, *report.zero_norm, *report.not_finite, *report.empty}
        listed_ids.update(report.too_short, report.too_long)
        listed_ids.update(i for group in report.duplicate_groups for i in group)
        for title, lines in report_sections(report):
            section = QTreeWidgetItem([title])
            for line in lines:
                child = QTreeWidgetItem([line])
                if line in listed_ids and not title.startswith(("Counts", "Indexes", "Warnings")):
                    child.setData(0, ENTRY_ID_ROLE, line)
                    child.setToolTip(0, "Double-click to open this entry")
                else:
                    child.setToolTip(0, line)  # a warning wider than the page, in full
                section.addChild(child)
            self.tree.addTopLevelItem(section)
            section.setExpanded(True)

    def _on_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        entry_id = item.data(0, ENTRY_ID_ROLE)
        if entry_id is not None and self.shown_database is not None:
            self.services.navigation.open_entry(self.shown_database, str(entry_id))

    def request_check(self) -> None:
        name = self.database_combo.currentData()
        if name:
            self.check(str(name))

    def cancel(self) -> bool:
        return self.report_run.cancel()
