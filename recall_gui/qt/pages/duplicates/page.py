"""The Duplicates page: groups of near-duplicate entries of one database, side by side so the user can
judge them.

The search compares every pair of the table's vectors in memory (:mod:`recall_gui.core.inspect.duplicates`), a
tile at a time on the session's compute thread, with progress; Cancel (or Esc) stops it after the tile in
flight. A group holds the entries linked by pairs within the threshold, so a chain of close pairs can
hold two entries farther apart: the groups list on the left shows each group's size and widest pair's
distance (marked when beyond the threshold); the selected group's entries stand side by side on the
right, its widest pair named above them, with the words that differ from the first entry marked.
"""

from __future__ import annotations

import asyncio
import functools
import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtGui import QColor, QPalette, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from recall_gui import core
from recall_gui.core.base import METRIC_NAMES
from recall_gui.core.inspect import DEFAULT_THRESHOLDS, METRICS, changed_ranges
from recall_gui.core.ray import window_address
from recall_gui.qt.models.roles import one_line
from recall_gui.qt.panels.report_run import ReportRun
from recall_gui.qt.panels.status_note import tint
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import engine_combo, selectable_label, text_view

if TYPE_CHECKING:
    from recall_gui.core.inspect import DuplicateGroup, DuplicateReport, GroupEntry

METRIC_LABELS = {"cosine": "cosine distance", "l2": "squared L2 distance"}
INTRODUCTION = (
    "Find groups of entries whose vectors are nearly the same: copies, and entries re-ingested after a small "
    "edit. They crowd each other out of an agent's results."
)
SELECT_GROUP = "Select a group to see its entries side by side."


def press_to_find(name: str | None) -> str:
    """What the empty area says pressing Find will do."""
    if name is None:
        return "No registered database to look in: register one, or press F5 if another program did."
    return (
        f"Press “Find” to compare every pair of entries of {name} and group those within the distance "
        "above. The groups are listed on the left; the entries of the one selected stand here side by side."
    )


#: The width of one entry beside the others.
CARD_WIDTH = 300
MARK = QColor("#d08a10")


class EntryCard(QFrame):
    """One entry of a group: its id and place in the group, and its content with the words that differ
    marked."""

    def __init__(self, title: str, subtitle: str, content: str, marked: tuple[tuple[int, int], ...]) -> None:
        super().__init__()
        self.setObjectName("duplicateEntry")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setMinimumWidth(CARD_WIDTH)
        self.title = QLabel(f"<b>{_escape(title)}</b><br><small>{_escape(subtitle)}</small>")
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setWordWrap(True)
        self.content: QPlainTextEdit = text_view("duplicateContent", read_only=True)
        self.content.setPlainText(content)
        self._mark(content, marked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.content, 1)

    def _mark(self, content: str, marked: tuple[tuple[int, int], ...]) -> None:
        if not marked:
            return
        base = self.content.palette().color(QPalette.ColorRole.Base)
        highlight = QTextCharFormat()
        highlight.setBackground(tint(base, MARK, 0.45))
        cursor = QTextCursor(self.content.document())
        for start, end in marked:
            cursor.setPosition(start)
            cursor.setPosition(min(end, len(content)), QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(highlight)


def _escape(text: str) -> str:
    return html.escape(text)


def card_texts(
    group: DuplicateGroup, named: Callable[[GroupEntry], str] = lambda entry: entry.id
) -> list[tuple[str, str, str, tuple[tuple[int, int], ...]]]:
    """Title (the entry's id), subtitle (its place in the group, how it differs), content and marked
    ranges of each entry of ``group``: the words of each entry that differ from the first entry (for the
    first: from the second)."""
    entries = group.entries
    first = entries[0].content
    cards = []
    for number, entry in enumerate(entries):
        if number == 0:
            other = entries[1].content if len(entries) > 1 else first
            marked = changed_ranges(first, other)[0] if other != first else ()
            same = "the first entry"
        else:
            marked = changed_ranges(first, entry.content)[1] if entry.content != first else ()
            places = f"{len(marked)} place{'s' if len(marked) != 1 else ''}"
            same = (
                "same text as the first" if entry.content == first else f"differs from the first in {places}"
            )
            if entry.content != first and not marked:
                same = "rewritten (too unlike the first to mark words)"
        if len(entries) > 2 and entry in group.widest_pair:
            same += " · of the widest pair"
        # Its place in the group: LanceDB's row id (fragment << 32 | offset) is no number a user knows.
        cards.append((named(entry), f"{number + 1} of {len(entries)} · {same}", entry.content, marked))
    return cards


def widest_pair_text(
    group: DuplicateGroup, threshold: float, named: Callable[[GroupEntry], str] = lambda entry: entry.id
) -> str:
    """What the widest pair of ``group`` is (its entries ``named``: ids, or names by content where ids
    repeat), and whether it lies beyond ``threshold``."""
    first, second = group.widest_pair
    text = f"Widest pair: {named(first)} and {named(second)}, {group.max_distance:.4f} apart"
    if group.chained(threshold):
        return f"{text}: beyond {threshold:g}, linked through the others by pairs within it."
    return f"{text}: every pair of these {len(group.entries)} entries lies within {threshold:g}."


class DuplicatesPage(QWidget):
    """``duplicatesDatabase``, ``duplicatesThreshold``, ``duplicatesMetric``, ``duplicatesEngine``,
    ``duplicatesFindButton``,
    ``duplicatesCancelButton``, ``duplicatesProgress``, ``duplicatesNote``, ``duplicatesGroups`` and
    ``duplicatesMembers`` (one ``duplicateEntry`` per entry of the selected group)."""

    #: A search finished (or was cancelled, or failed): the note says how.
    searchFinished = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("duplicatesPage")
        self.services = services
        self.report: DuplicateReport | None = None
        #: The database whose report is shown.
        self.shown_database: str | None = None
        self._cards: list[EntryCard] = []
        self._build_widgets()
        self._lay_out()
        self.metric_combo.currentIndexChanged.connect(self._on_metric)
        self.find_button.clicked.connect(self.request_find)
        self.groups.selectionModel().selectionChanged.connect(self._on_group_selected)
        self.database_combo.currentIndexChanged.connect(self._on_database_changed)
        self.database_combo.follow(self.services.drafts)
        self.report_run.finished.connect(self.searchFinished)
        self.follow_registry()
        self.note.show_note(INTRODUCTION, "neutral")

    def _build_widgets(self) -> None:
        #: The controls and the search for near-duplicates running (a newer one cancels it).
        self.report_run = report_run = ReportRun(
            self.services.operations,
            "duplicates",
            run=(
                "Find",
                "duplicatesFindButton",
                "Compare every pair of entries and group the near-duplicates",
            ),
            cancel_tip="Stop the search (Esc)",
            set_activity=self.services.page_activity(self),
            parent=self,
        )
        self.database_combo, self.find_button, self.cancel_button, self.progress, self.note = (
            report_run.widgets()
        )
        self.database_combo.setMinimumWidth(120)
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("duplicatesMetric")
        self.metric_combo.setToolTip("The distance the entries are compared by")
        for metric in METRICS:  # short names: the row of controls fits an 800-pixel window
            self.metric_combo.addItem(METRIC_NAMES.get(metric, metric), metric)
        self.threshold_spin = QDoubleSpinBox()
        self.threshold_spin.setObjectName("duplicatesThreshold")
        self.threshold_spin.setDecimals(4)
        self.threshold_spin.setSingleStep(0.005)
        self.threshold_spin.setToolTip("Entries this close (or closer) count as near-duplicates")
        self.engine_combo = engine_combo("duplicatesEngine")
        report_run.inputs += [self.threshold_spin, self.metric_combo, self.engine_combo]
        self.progress.setRange(0, 1000)
        self.progress.setFormat("comparing entries: %p%")
        self._build_groups()

    def _build_groups(self) -> None:
        """The table of groups, and the area that shows one group's entries side by side."""
        self.groups = QTableWidget(0, 3)
        self.groups.setObjectName("duplicatesGroups")
        self.groups.setHorizontalHeaderLabels(["Entries", "Distance", "First entry"])
        distance_header = QTableWidgetItem("Distance")
        distance_header.setToolTip(
            "The largest distance between two entries of the group (its widest pair); entries are linked "
            "by pairs within the threshold, so it can lie beyond it"
        )
        self.groups.setHorizontalHeaderItem(1, distance_header)
        self.groups.horizontalHeader().setDefaultAlignment(
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        )
        self.groups.verticalHeader().setVisible(False)
        self.groups.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.groups.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.groups.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.groups.setWordWrap(False)
        self.groups.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.groups.horizontalHeader().setStretchLastSection(True)
        self.groups.setColumnWidth(0, 60)
        self.groups.setColumnWidth(1, 80)
        self.members = QWidget()
        self.members.setObjectName("duplicatesMembers")
        self.members_layout = QHBoxLayout(self.members)
        self.members_layout.setContentsMargins(0, 0, 0, 0)
        self.members_scroll = QScrollArea()
        self.members_scroll.setWidgetResizable(True)
        self.members_scroll.setWidget(self.members)
        self.group_note = selectable_label("duplicatesGroupNote", wrap=True)
        self.members_hint = QLabel()
        self.members_hint.setObjectName("duplicatesHint")
        self.members_hint.setTextFormat(Qt.TextFormat.PlainText)  # it names the database
        self.members_hint.setEnabled(False)
        self.members_hint.setWordWrap(True)
        self.members_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.members_layout.addWidget(self.members_hint, 1, Qt.AlignmentFlag.AlignCenter)

    def _lay_out(self) -> None:
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel("Database:"))
        controls.addWidget(self.database_combo)
        controls.addSpacing(12)
        controls.addWidget(QLabel("Within"))
        controls.addWidget(self.threshold_spin)
        controls.addWidget(self.metric_combo)
        controls.addSpacing(12)
        controls.addWidget(QLabel("Engine:"))
        controls.addWidget(self.engine_combo)
        controls.addStretch(1)
        controls.addWidget(self.find_button)
        controls.addWidget(self.cancel_button)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setObjectName("duplicatesSplitter")
        splitter.setChildrenCollapsible(False)
        splitter.addWidget(self.groups)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.group_note)
        self.group_note.hide()
        right_layout.addWidget(self.members_scroll, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        splitter.setSizes([330, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(8)
        layout.addLayout(controls)
        layout.addWidget(self.note)
        layout.addWidget(self.progress)
        layout.addWidget(splitter, 1)

    # --- the registry and the controls ----------------------------------------------------------------

    def follow_registry(self) -> None:
        """List the registry's databases (active ones first), keeping the one chosen while it is listed."""
        self.report_run.follow_registry(self.services.registry)
        self._on_metric()
        self._on_database_changed()

    def _on_database_changed(self) -> None:
        """Another database chosen: the groups of the one before are no longer shown as if they were its."""
        chosen = self.database_combo.chosen()
        if self.shown_database is not None and chosen != self.shown_database:
            self.report, self.shown_database = None, None
            self.groups.setRowCount(0)
            self.show_group(None)
            self.note.show_note(INTRODUCTION, "neutral")
        if self.report is None:
            self.members_hint.setText(press_to_find(chosen))

    def choose_database(self, name: str) -> None:
        self.database_combo.choose(name)

    def _on_metric(self) -> None:
        metric = self.chosen_metric()
        self.threshold_spin.setRange(0.0, 0.9999 if metric == "cosine" else 1000.0)
        self.threshold_spin.setValue(DEFAULT_THRESHOLDS[metric])

    def chosen_metric(self) -> str:
        return str(self.metric_combo.currentData() or "cosine")

    # --- operations -----------------------------------------------------------------------------------

    def look_for(self, name: str, threshold: float, metric: str) -> asyncio.Task[bool] | None:
        """Look for near-duplicates in the database ``name`` and show them, largest group first (``None``:
        no such database)."""
        entry, services = self.services.registry.get(name), self.services
        if entry is None:
            return None
        ray = self.engine_combo.currentData() == "ray"

        async def find(on_progress: Callable[[float], None]) -> DuplicateReport:
            session = await services.session()
            found = core.inspect.find_duplicates
            if ray:
                found = functools.partial(core.ray.find_duplicates_in_ray, address=window_address())
            return await found(
                session, entry.target, threshold=threshold, metric=metric, on_progress=on_progress
            )

        def show(report: DuplicateReport) -> str:
            self.show_report(name, report)
            return f"Near-duplicates of {name}: {len(report.groups)} groups"

        self.progress.setValue(0)
        return self.report_run.run(
            find,
            progress=lambda share: self.progress.setValue(round(share * 1000)),
            busy=f"Comparing every pair of entries of {name}…",
            show=show,
            cancelled=lambda: f"Cancelled at {self.progress.value() / 10:.0f}%.",
            activity=(f"Looking for near-duplicates in {name}…", "Search for near-duplicates cancelled"),
        )

    def show_report(self, name: str, report: DuplicateReport) -> None:
        self.report, self.shown_database = report, name
        self.services.last_reports.duplicates[name] = report  # the Review page's order "near-copies"
        self.members_hint.setText(SELECT_GROUP)
        grouped = sum(len(group.entries) for group in report.groups)
        label = METRIC_LABELS.get(report.metric, report.metric)
        text = (
            f"{len(report.groups):,} group{'s' if len(report.groups) != 1 else ''} in {name}: {grouped:,} of "
            f"{report.rows:,} entries lie within {label} {report.threshold:g} of another "
            f"({report.elapsed_ms / 1000:.1f} s). A group holds the entries linked by such pairs: a chain "
            "of them can hold two entries farther apart."
        )
        if not report.groups:
            text = (
                f"No near-duplicates in {name}: no two of its {report.rows:,} entries lie within {label} "
                f"{report.threshold:g}."
            )
        left_out = report.left_out_text("the squared L2 distance")
        if left_out is not None:
            text += " " + left_out
        said = report.repeats.sentence()
        if said is not None:
            text += f" {said[0].upper()}{said[1:]}."
        self.note.show_note(text, "neutral" if report.groups or left_out else "good")
        self.groups.setRowCount(len(report.groups))
        for row, group in enumerate(report.groups):
            first = group.entries[0]
            chained = group.chained(report.threshold)
            cells = (
                str(len(group.entries)),
                f"{group.max_distance:.4f}{' ⚠' if chained else ''}",
                f"{report.label(first)}: {one_line(first.content, 200)}",
            )
            for column, text_value in enumerate(cells):
                item = QTableWidgetItem(text_value)
                if column < 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if column == 1:
                    item.setToolTip(widest_pair_text(group, report.threshold, report.label))
                self.groups.setItem(row, column, item)
        if report.groups:
            self.groups.selectRow(0)
        else:
            self.show_group(None)

    def show_group(self, group: DuplicateGroup | None) -> None:
        """The entries of ``group`` side by side (or the hint to select one)."""
        for card in self._cards:
            self.members_layout.removeWidget(card)
            card.deleteLater()
        self._cards = []
        self.members_layout.removeWidget(self.members_hint)
        if group is None or self.report is None:
            self.group_note.hide()
            self.members_layout.addWidget(self.members_hint, 1, Qt.AlignmentFlag.AlignCenter)
            self.members_hint.show()
            return
        self.members_hint.hide()
        self.group_note.setText(widest_pair_text(group, self.report.threshold, self.report.label))
        self.group_note.show()
        for title, subtitle, content, marked in card_texts(group, self.report.label):
            card = EntryCard(title, subtitle, content, marked)
            self._cards.append(card)
            self.members_layout.addWidget(card, 1)

    def cards(self) -> list[EntryCard]:
        """The entries of the group shown, left to right."""
        return list(self._cards)

    def _on_group_selected(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.groups.selectionModel().selectedRows()
        if self.report is None or not rows:
            return
        self.show_group(self.report.groups[rows[0].row()])

    # --- slots (thin) ---------------------------------------------------------------------------------

    def request_find(self) -> None:
        name = self.database_combo.currentData()
        if name:
            self.look_for(str(name), self.threshold_spin.value(), self.chosen_metric())

    def cancel(self) -> bool:
        """Stop the running search (Cancel, Esc); ``False`` if none was running."""
        return self.report_run.cancel()
