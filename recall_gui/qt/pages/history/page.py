"""The history of the current database's table: its versions, and what changed between two of them.

The versions are listed with their time, row count and tags; one opens on the knowledge page read-only.
Two versions are compared by id (rows added, removed, changed in content or vector), and a changed row
opens side by side: its old and new content, with the app's text diff below. Nothing is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.core.inspect import diff_lines
from recall_gui.qt.panels.diff_view import DiffView
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.scope.table_scope import TableScope
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import group_box, push_button, text_view

if TYPE_CHECKING:
    from recall_gui.core.base import SearchHit
    from recall_gui.core.inspect import RowChange, VersionDiff
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.tables import TableVersion

CHANGE_MARKS = {"added": "+ added", "removed": "− removed", "changed": "~ "}
#: Changes listed at most (the counts above the list are always complete).
MAX_LISTED = 20_000


def _item(text: str, data: object = None) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setToolTip(text)
    if data is not None:
        item.setData(Qt.ItemDataRole.UserRole, data)
    return item


def _table(name: str, headers: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(headers)
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setWordWrap(False)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)
    header = table.horizontalHeader()
    for column in range(len(headers) - 1):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    header.setSectionResizeMode(len(headers) - 1, QHeaderView.ResizeMode.Stretch)
    return table


def vector_change(old: SearchHit | None, new: SearchHit | None) -> str:
    """What happened to the vector, in words (with the cosine similarity of the two when both exist)."""
    if old is None or new is None or old.vector is None or new.vector is None:
        return ""
    import numpy as np

    a, b = np.asarray(old.vector, np.float64), np.asarray(new.vector, np.float64)
    if a.shape == b.shape and np.array_equal(a, b):
        return "The vector is the same."
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    similarity = f": cosine similarity {float(a @ b) / norms:.4f}" if a.shape == b.shape and norms else ""
    return f"The vector changed{similarity}."


class HistoryPage(QWidget):
    """``versionsTable``, ``fromCombo``/``toCombo``/``compareButton``, ``changesTable`` and the side by
    side (``oldContent``, ``newContent``, ``contentDiff``)."""

    #: The versions of the current table are listed.
    versionsListed = Signal()
    #: A comparison finished (or failed): its counts and list are shown.
    diffFinished = Signal()
    #: A changed row is shown side by side.
    changeShown = Signal()
    #: The knowledge page should be shown (a version was opened there).
    showKnowledge = Signal()

    def __init__(
        self, services: WindowServices, knowledge: TableScope, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("historyPage")
        self.services = services
        self.knowledge = knowledge
        #: Reading the versions or comparing two, and reading one changed row: a newer one cancels it.
        self.comparing = services.operations.lane("history")
        self.showing_change = services.operations.lane("history-change")
        self._entry: DatabaseEntry | None = None
        self._versions: tuple[TableVersion, ...] = ()
        self._diff: VersionDiff | None = None
        self._stale = True

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("historySplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self._lists())
        splitter.addWidget(self._side_by_side())
        splitter.setSizes([520, 760])
        self.title = QLabel("Choose a database on the knowledge page.")
        self.title.setObjectName("historyTitle")
        self.refresh_button = push_button("Ref&resh", "historyRefreshButton", "List the versions again")
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

        self.refresh_button.clicked.connect(self.request_refresh)
        self.open_button.clicked.connect(self._on_open)
        self.compare_button.clicked.connect(self.request_compare)
        self.versions_table.itemSelectionChanged.connect(self._on_version_selected)
        self.changes_table.itemSelectionChanged.connect(self._on_change_selected)
        knowledge.scopeChanged.connect(self._on_scope_changed)

    # --- layout ---------------------------------------------------------------------------------------

    def _lists(self) -> QWidget:
        self.versions_table = _table("versionsTable", ("Version", "Time", "Rows", "Tags"))
        self.open_button = push_button(
            "&Open Read-Only", "openVersionButton", "Show this version on the knowledge page, read-only"
        )
        self.from_combo = QComboBox()
        self.from_combo.setObjectName("fromCombo")
        self.to_combo = QComboBox()
        self.to_combo.setObjectName("toCombo")
        self.compare_button = push_button("&Show Changes", "compareButton", "Compare the two versions by id")
        compare_row = QWidget()
        compare = QHBoxLayout(compare_row)
        compare.setContentsMargins(0, 0, 0, 0)
        compare.addWidget(QLabel("From"))
        compare.addWidget(self.from_combo, 1)
        compare.addWidget(QLabel("to"))
        compare.addWidget(self.to_combo, 1)
        compare.addWidget(self.compare_button)
        self.diff_summary = StatusNote("diffSummary")
        self.diff_summary.hide()
        self.changes_table = _table("changesTable", ("Id", "Change"))
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(group_box("Versions", [(self.versions_table, 1)], [self.open_button]), 2)
        changes = group_box(
            "What changed", [(compare_row, 0), (self.diff_summary, 0), (self.changes_table, 1)]
        )
        layout.addWidget(changes, 3)
        return box

    def _side_by_side(self) -> QWidget:
        self.old_title = QLabel("Older version")
        self.old_title.setObjectName("oldTitle")
        self.new_title = QLabel("Newer version")
        self.new_title.setObjectName("newTitle")
        self.old_content = text_view("oldContent", read_only=True)
        self.new_content = text_view("newContent", read_only=True)
        self.vector_note = QLabel()
        self.vector_note.setObjectName("vectorNote")
        self.content_diff = DiffView("contentDiff")
        pair = QSplitter(Qt.Orientation.Horizontal)
        pair.setChildrenCollapsible(False)
        for title, view in ((self.old_title, self.old_content), (self.new_title, self.new_content)):
            side = QWidget()
            column = QVBoxLayout(side)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(title)
            column.addWidget(view, 1)
            pair.addWidget(side)
        legend = QLabel("<b>−</b> older version &nbsp;&nbsp; <b>+</b> newer version")
        legend.setEnabled(False)
        return group_box(
            "Side by side",
            [(pair, 3), (self.vector_note, 0), (self.content_diff, 2), (legend, 0)],
        )

    # --- operations -----------------------------------------------------------------------------------

    def refresh(self) -> asyncio.Task[bool] | None:
        """List the versions of the knowledge page's current table (``None``: no table to list)."""
        entry = self.knowledge.current
        self._entry, self._stale = entry, False
        self._clear_diff()
        if entry is None:
            self.comparing.cancel()
            self.title.setText("Choose a database on the knowledge page.")
            self._show_versions(())
            return None
        self.title.setText(f"Reading the versions of {entry.name}…")

        def progress(count: int | None, seconds: float) -> None:
            if seconds >= 1:  # a long history: say what it waits for
                many = f"{count:,} versions" if count is not None else "versions"
                self.title.setText(
                    f"Reading the {many} of {entry.name}: {seconds:.0f} s (LanceDB reads each one)…"
                )

        async def read(on_progress: Callable[[int | None, float], None]) -> tuple[TableVersion, ...]:
            session = await self.services.session()
            return await core.tables.list_versions(session, entry.target, progress=on_progress)

        def show(versions: tuple[TableVersion, ...]) -> None:
            count = len(versions)
            self.title.setText(
                f"{entry.name}: {count} version{'' if count == 1 else 's'} kept by LanceDB. Opening or "
                "comparing them writes nothing."
            )
            self._show_versions(versions)
            self.versionsListed.emit()

        def failed(_error: RecallError) -> None:
            self.title.setText(f"The versions of {entry.name} could not be read.")
            self._show_versions(())

        return self.comparing.run(
            read,
            progress=progress,
            busy=f"Reading the versions of {entry.name}…",
            success=show,
            failure=failed,
        )

    def _show_versions(self, versions: tuple[TableVersion, ...]) -> None:
        self._versions = versions
        self.versions_table.setRowCount(len(versions))
        for row, version in enumerate(reversed(versions)):
            tags = ", ".join(version.tags) + (" (latest)" if version.latest else "")
            cells = (
                str(version.version),
                version.time_text,
                "?" if version.rows is None else f"{version.rows:,}",
            )
            for column, text in enumerate((*cells, tags.strip())):
                self.versions_table.setItem(row, column, _item(text, version.version))
        for combo in (self.from_combo, self.to_combo):
            combo.clear()
            for version in reversed(versions):
                combo.addItem(f"{version.version}" + (" (latest)" if version.latest else ""), version.version)
        if len(versions) >= 2:
            self.from_combo.setCurrentIndex(1)  # the one before the latest
        self.compare_button.setEnabled(len(versions) >= 2)
        self.open_button.setEnabled(bool(versions))

    def compare(self, from_version: int, to_version: int) -> asyncio.Task[bool] | None:
        """Compare two versions and list what changed (``None``: no table to compare)."""
        entry = self._entry
        if entry is None:
            return None
        older, newer = sorted((from_version, to_version))
        self.from_combo.setCurrentIndex(max(self.from_combo.findData(older), 0))
        self.to_combo.setCurrentIndex(max(self.to_combo.findData(newer), 0))
        self._clear_diff()
        self.diff_summary.show_note(f"Comparing version {older} with version {newer}…", "neutral")
        self.diff_summary.show()

        def progress(read: int, total: int) -> None:
            self.diff_summary.show_note(
                f"Comparing version {older} with version {newer}: {read:,} of {total:,} rows read…", "neutral"
            )

        async def diff(on_progress: Callable[[int, int], None]) -> VersionDiff:
            session = await self.services.session()
            return await core.inspect.diff_versions(session, entry.target, older, newer, progress=on_progress)

        def show(found: VersionDiff) -> None:
            self._show_diff(found)
            self.diffFinished.emit()

        def failed(error: RecallError) -> None:
            self.diff_summary.show_note(f"The versions could not be compared: {error.message}", "bad")
            self.diffFinished.emit()

        return self.comparing.run(
            diff,
            progress=progress,
            busy=f"Comparing version {older} with version {newer}…",
            success=show,
            failure=failed,
        )

    def _show_diff(self, diff: VersionDiff) -> None:
        self._diff = diff
        how = (
            "by id"
            if diff.by == "id"
            else "by content (the table has no id column; rows are named by row id)"
        )
        text = f"From version {diff.from_version} to {diff.to_version}, matched {how}: {diff.summary()}."
        if diff.duplicate_ids:
            text += f" {len(diff.duplicate_ids):,} ids are held by several rows and were compared as groups."
        if len(diff.changes) > MAX_LISTED:
            text += f" The first {MAX_LISTED:,} are listed."
        self.diff_summary.show_note(text, "good")
        listed = diff.changes[:MAX_LISTED]
        self.changes_table.setRowCount(len(listed))
        for row, change in enumerate(listed):
            what = CHANGE_MARKS[change.kind] + (change.what if change.kind == "changed" else "")
            self.changes_table.setItem(row, 0, _item(change.id, row))
            self.changes_table.setItem(row, 1, _item(what, row))
        if listed:
            self.changes_table.selectRow(0)

    def show_change(self, change: RowChange) -> asyncio.Task[bool] | None:
        """The row as it was and as it is, side by side, with the text diff below."""
        diff, entry = self._diff, self._entry
        if diff is None or entry is None:
            return None

        async def sides() -> tuple[SearchHit | None, SearchHit | None]:
            return await core.inspect.fetch_sides(await self.services.session(), entry.target, diff, change)

        def show(found: tuple[SearchHit | None, SearchHit | None]) -> None:
            old, new = found
            self.old_title.setText(f"Version {diff.from_version}" + ("" if old else " — not there"))
            self.new_title.setText(f"Version {diff.to_version}" + ("" if new else " — not there"))
            self.old_content.setPlainText(old.content if old else "")
            self.new_content.setPlainText(new.content if new else "")
            self.vector_note.setText(vector_change(old, new))
            lines = diff_lines(old.content if old else "", new.content if new else "")
            self.content_diff.show_diff(lines, "The content is the same in both versions.")
            self.changeShown.emit()

        return self.showing_change.run(sides, busy=f"Reading {change.id} in both versions…", success=show)

    def _clear_diff(self) -> None:
        self._diff = None
        self.diff_summary.hide()
        self.changes_table.setRowCount(0)
        for view in (self.old_content, self.new_content):
            view.clear()
        self.vector_note.clear()
        self.content_diff.show_diff((), "Compare two versions, then choose a row.")

    @property
    def diff(self) -> VersionDiff | None:
        return self._diff

    # --- slots ----------------------------------------------------------------------------------------

    def request_refresh(self) -> None:
        self.refresh()

    def request_compare(self) -> None:
        older, newer = self.from_combo.currentData(), self.to_combo.currentData()
        if isinstance(older, int) and isinstance(newer, int):
            self.compare(older, newer)

    def _selected_version(self) -> int | None:
        rows = self.versions_table.selectionModel().selectedRows()
        item = self.versions_table.item(rows[0].row(), 0) if rows else None
        number = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return number if isinstance(number, int) else None

    def _on_version_selected(self) -> None:
        number = self._selected_version()
        if number is not None:
            self.from_combo.setCurrentIndex(max(self.from_combo.findData(number), 0))

    def _on_open(self) -> None:
        number = self._selected_version()
        if number is None:
            return
        self.knowledge.request_version(number)
        self.showKnowledge.emit()

    def _on_change_selected(self) -> None:
        rows = self.changes_table.selectionModel().selectedRows()
        if not rows or self._diff is None:
            return
        change = self._diff.changes[rows[0].row()]
        self.show_change(change)

    def _on_scope_changed(self) -> None:
        current = self.knowledge.current
        if current is None or self._entry is None or current.name != self._entry.name:
            self._stale = True
            if self.isVisible():
                self.request_refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale:
            self.request_refresh()
