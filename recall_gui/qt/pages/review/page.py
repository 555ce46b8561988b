"""The Review page: verify a database's entries by hand, one at a time, from the keyboard.

Each entry is shown whole (its text, how much of it the model reads, its vector's health, its other columns,
its near-copies; an entry changed since it was reviewed, old and new side by side) in the order the user
picks, and takes one key per verdict — 1 correct, 2 outdated, 3 wrong, 4 duplicate, 5 skip (or C, O, W, D,
S) — with a note; Ctrl+Z takes the last one back. The verdicts go to the database's review file
(:mod:`recall_gui.core.review`), never to the knowledge base, and what agents are given never changes
with them. The page remembers the database, the order, the file and the entry it showed, and goes on from
there at the next start. The walk itself is :mod:`.walking`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from recall_gui.core.review import ORDER_LABELS, Order
from recall_gui.qt.pages.review.ordering import ORDERS
from recall_gui.qt.pages.review.showing import EntryShowing
from recall_gui.qt.pages.review.walking import Walker
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.panels.review_entry import ReviewEntryView
from recall_gui.qt.panels.review_facts import ReviewFacts
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.panels.verdict_bar import VerdictBar
from recall_gui.qt.services import WindowServices
from recall_gui.qt.widgets import ElidedLabel, push_button

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry

#: What the window remembers of the page (its memory's keys).
DATABASE_KEY, ORDER_KEY, WHERE_KEY = "review/database", "review/order", "review/where"
SKIP_KEY, PLACES_KEY, FILES_KEY = "review/skip_reviewed", "review/places", "review/files"
NO_DATABASE = "No registered database to review: register one, or press F5 if another program did."


class ReviewPage(QWidget):
    """``reviewDatabase``, ``reviewOrder``, ``reviewWhere``, ``reviewSkipReviewed``, ``reviewFile``,
    ``reviewChooseFileButton``, ``reviewDefaultFileButton``, ``reviewProgress``, ``reviewCounter`` and
    ``reviewNote``; the entry
    (:class:`ReviewEntryView`), its facts (:class:`ReviewFacts`) and the verdicts (:class:`VerdictBar`)."""

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewPage")
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the verdict keys need the focus on the page
        self.services = services
        self.memory = services.memory
        self._build_widgets()
        self._lay_out()
        self.showing = EntryShowing(services, self.entry_view, self.facts)
        self.walker = walker = Walker(
            services,
            showing=self.showing,
            bar=self.bar,
            labels=(self.progress_label, self.counter_label),
            note=self.note,
            remember=self._remember_place,
        )
        self.shortcuts = self.bar.install_keys(self)
        self.bar.verdictChosen.connect(lambda verdict: walker.give(verdict, self.bar.take_note()))
        self.bar.nextRequested.connect(lambda: walker.step(forward=True))
        self.bar.previousRequested.connect(lambda: walker.step(forward=False))
        self.bar.undoRequested.connect(walker.undo)
        walker.orderInUse.connect(lambda value: self._set_order(_order(value)))
        walker.entryShown.connect(self._focus_entry)
        #: Whether the page opened a review yet (it opens the remembered one when first shown).
        self._started = False
        self._restore()
        self.database_combo.currentIndexChanged.connect(lambda _index: self.request_open())
        self.order_combo.activated.connect(self._on_order)  # chosen again: made again (a new report)
        self.where_edit.returnPressed.connect(self._on_where)
        self.skip_check.toggled.connect(self._on_skip)
        self.choose_file_button.clicked.connect(self.ask_file)
        self.default_file_button.clicked.connect(lambda: self.choose_file(None))
        services.navigation.reviewRequested.connect(self.review_from)

    def _build_widgets(self) -> None:
        self.database_combo = DatabasePicker()
        self.database_combo.setObjectName("reviewDatabase")
        self.order_combo = QComboBox()
        self.order_combo.setObjectName("reviewOrder")
        for order in ORDERS:
            self.order_combo.addItem(ORDER_LABELS[order], order.value)
        self.order_combo.setToolTip(
            "The order the entries are walked in; unreachable and near-copies take the last report made on "
            "the Reach or Duplicates page"
        )
        self.where_edit = QLineEdit()
        self.where_edit.setObjectName("reviewWhere")
        self.where_edit.setPlaceholderText("a filter, as the browse filter: meta.lang = 'en'  (Enter)")
        self.skip_check = QCheckBox("&Skip entries with a verdict")
        self.skip_check.setObjectName("reviewSkipReviewed")
        self.skip_check.setToolTip("Walking on (a verdict, J) passes over entries that have one already")
        self.file_label = ElidedLabel()
        self.file_label.setObjectName("reviewFile")
        self.choose_file_button = push_button(
            "Choose &File…",
            "reviewChooseFileButton",
            "Keep this database's verdicts in a file of your own, e.g. one your team keeps in git",
        )
        self.default_file_button = push_button(
            "Default", "reviewDefaultFileButton", "Keep the verdicts in the app's data folder"
        )
        self.progress_label = QLabel()
        self.progress_label.setObjectName("reviewProgress")
        self.progress_label.setWordWrap(True)
        font = self.progress_label.font()
        font.setBold(True)
        self.progress_label.setFont(font)
        self.counter_label = QLabel()
        self.counter_label.setObjectName("reviewCounter")
        self.note = StatusNote("reviewNote")
        self.note.hide()
        self.entry_view = ReviewEntryView()
        self.facts = ReviewFacts()
        self.bar = VerdictBar()

    def _lay_out(self) -> None:
        choose = QHBoxLayout()
        for widget, stretch in (
            (QLabel("Database:"), 0),
            (self.database_combo, 0),
            (QLabel("Order:"), 0),
            (self.order_combo, 0),
            (self.where_edit, 3),
            (self.skip_check, 0),
        ):
            choose.addWidget(widget, stretch)
        choose.addStretch(1)
        file_row = QHBoxLayout()
        file_row.addWidget(QLabel("Review file:"))
        file_row.addWidget(self.file_label, 1)
        file_row.addWidget(self.choose_file_button)
        file_row.addWidget(self.default_file_button)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress_label, 1)
        progress_row.addWidget(self.counter_label, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        facts = QScrollArea()
        facts.setObjectName("reviewFactsScroller")
        facts.setWidgetResizable(True)
        facts.setFrameShape(QFrame.Shape.NoFrame)
        facts.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        facts.setWidget(self.facts)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("reviewSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.entry_view)
        self.splitter.addWidget(facts)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([600, 420])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.setSpacing(6)
        layout.addLayout(choose)
        layout.addLayout(file_row)
        layout.addLayout(progress_row)
        layout.addWidget(self.note)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.bar)

    def heightForWidth(self, _width: int) -> int:
        """None of its own (its labels wrap): the scroll area a page sits in would make it as tall as it
        would like, taller than an 800x500 window; it fills the window and scrolls only below its minimum."""
        return -1

    # --- what the page remembers ---------------------------------------------------------------------------

    def _memory_json(self, key: str) -> dict[str, str]:
        try:
            found = json.loads(self.memory.text(key) or "{}")
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def _restore(self) -> None:
        self.services.reviews.restore_files(self._memory_json(FILES_KEY))
        self.skip_check.setChecked(bool(self.memory.integer(SKIP_KEY, 1)))
        self.walker.skip_reviewed = self.skip_check.isChecked()
        self.where_edit.setText(self.memory.text(WHERE_KEY) or "")
        self._set_order(_order(self.memory.text(ORDER_KEY)))
        self.follow_registry()
        self._show_file()

    def _remember_place(self, db_name: str, sha: str) -> None:
        places = self._memory_json(PLACES_KEY)
        places[db_name] = sha
        self.memory.set(PLACES_KEY, json.dumps(places))
        self.memory.set(DATABASE_KEY, db_name)

    def _set_order(self, order: Order) -> None:
        self.order_combo.blockSignals(True)
        self.order_combo.setCurrentIndex(ORDERS.index(order))
        self.order_combo.blockSignals(False)
        self.where_edit.setVisible(order == Order.FILTER)
        self.memory.set(ORDER_KEY, order.value)

    def order(self) -> Order:
        return _order(self.order_combo.currentData())

    # --- slots (thin: they read the widgets and start an operation) ---------------------------------------

    def follow_registry(self) -> None:
        """List the registry's databases; before the first review, choose the one remembered, and open it
        if the page is shown (the window may start on it)."""
        combo = self.database_combo
        combo.blockSignals(True)
        combo.show_registry(self.services.registry)
        remembered = self.memory.text(DATABASE_KEY)
        if not self._started and remembered is not None and combo.databases.row_of(remembered) >= 0:
            combo.choose(remembered)
        combo.blockSignals(False)
        if combo.count() == 0:
            self.entry_view.clear(NO_DATABASE)
        elif not self._started and self.isVisible():
            self.request_open()

    def chosen_entry(self) -> DatabaseEntry | None:
        name = self.database_combo.chosen()
        return self.services.registry.get(name) if name is not None else None

    def request_open(
        self, *, at_row: int | None = None, at_sha: str | None = None, from_start: bool = False
    ) -> None:
        """Open the chosen database's review in the chosen order: at the entry asked for, else from the
        order's start (``from_start``), else where the page was on that database the last time."""
        entry = self.chosen_entry()
        self._show_file()
        if entry is None:
            return
        self._started = True
        self.memory.set(WHERE_KEY, self.where_edit.text())
        asked = at_sha is not None or at_row is not None
        if not asked and not from_start:
            at_sha = self._memory_json(PLACES_KEY).get(entry.name)
        self.walker.open(
            entry, self.order(), self.where_edit.text(), at_row=at_row, at_sha=at_sha, asked=asked
        )

    def review_from(self, entry: object, row_id: int, sha: str) -> None:
        """Review ``entry`` (a registered database) from its row ``row_id`` holding the text ``sha``."""
        name = getattr(entry, "name", None)
        if not isinstance(name, str) or self.database_combo.databases.row_of(name) < 0:
            return
        self.database_combo.blockSignals(True)
        self.database_combo.choose(name)
        self.database_combo.blockSignals(False)
        self.request_open(at_row=row_id if row_id >= 0 else None, at_sha=sha)

    def _on_order(self, _index: int = -1) -> None:
        order = self.order()
        self._set_order(order)
        if order == Order.FILTER and not self.where_edit.text().strip():
            self.where_edit.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        self.request_open(from_start=True)

    def _on_where(self) -> None:
        """Enter in the filter: walk the rows it keeps; the keys are the verdicts' again."""
        self.request_open(from_start=True)
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_skip(self, on: bool) -> None:
        self.walker.skip_reviewed = on
        self.memory.set(SKIP_KEY, int(on))

    def ask_file(self) -> None:
        entry = self.chosen_entry()
        if entry is None:
            return
        current = self.services.reviews.file_of(entry.name)
        path, _kind = QFileDialog.getSaveFileName(
            self,
            f"The review file of {entry.name} (new or existing; verdicts are appended)",
            str(current),
            "Review files (*.jsonl);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if path:
            self.choose_file(Path(path))

    def choose_file(self, path: Path | None) -> None:
        """Keep the chosen database's verdicts in ``path`` (``None``: the app's data folder) and walk on."""
        entry = self.chosen_entry()
        if entry is None:
            return
        self.services.reviews.choose_file(entry.name, path)
        self.memory.set(FILES_KEY, json.dumps(self.services.reviews.chosen_files()))
        self.request_open()

    def _show_file(self) -> None:
        entry = self.chosen_entry()
        if entry is None:
            self.file_label.setText("–")
            return
        book = self.services.reviews
        path = book.file_of(entry.name)
        chosen = entry.name in book.chosen_files()
        where = "chosen" if chosen else "the app’s data folder"
        self.file_label.setText(f"{path.name}  —  {path.parent}  ({where})")
        self.file_label.setToolTip(str(path))
        self.default_file_button.setEnabled(chosen)

    def _focus_entry(self) -> None:
        """The keys are the verdicts' once an entry is shown, unless a note or a filter is being typed."""
        if self.isVisible() and not (self.bar.note.hasFocus() or self.where_edit.hasFocus()):
            self.setFocus(Qt.FocusReason.OtherFocusReason)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._started:
            self.request_open()
        self.setFocus(Qt.FocusReason.OtherFocusReason)


def _order(value: object) -> Order:
    try:
        return Order(str(value))
    except ValueError:
        return Order.NOT_REVIEWED
