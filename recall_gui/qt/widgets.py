"""Small widgets the panels share."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QSize,
    Qt,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import (
    QFocusEvent,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QValidator,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTableView,
    QTabWidget,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)


class PlaceholderTableView(QTableView):
    """A table that says what to do (or why it is empty) instead of showing a blank grid.

    Rows appended below a full viewport (the next page of a browsed table) change nothing on screen, yet
    Qt lays the view out again and repaints all of it: while paging through a table, every page arrival
    cost one full repaint besides the one its scrolling costs. Such a layout only updates the scroll bars.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placeholder = ""
        #: Since the last layout: ``True`` if rows were only appended below a full viewport, ``False``
        #: once anything else changed, ``None`` if nothing did.
        self._only_appended_below: bool | None = None
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().setVisible(False)
        # Fixed row heights: Qt then never measures rows, which keeps a million rows cheap.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        header = self.horizontalHeader()
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)

    def setModel(self, model: QAbstractItemModel | None) -> None:
        previous = self.model()
        if previous is not None:
            for signal, slot in self._watched(previous):
                signal.disconnect(slot)
        super().setModel(model)
        self._only_appended_below = False
        if model is not None:
            for signal, slot in self._watched(model):
                signal.connect(slot)

    def _watched(self, model: QAbstractItemModel) -> Iterator[tuple[SignalInstance, Callable[..., None]]]:
        """The model's signals this view follows to tell an append below the view from other changes."""
        yield model.rowsAboutToBeInserted, self._on_rows_about_to_be_inserted
        for name in _RELAYOUT_SIGNALS:
            yield getattr(model, name), self._on_other_change

    def doItemsLayout(self) -> None:
        if self._only_appended_below:
            self._only_appended_below = None
            self.updateGeometries()
            return
        self._only_appended_below = None
        super().doItemsLayout()

    def _on_rows_about_to_be_inserted(
        self, parent: QModelIndex | QPersistentModelIndex, first: int, _last: int
    ) -> None:
        model = self.model()
        below = (
            not parent.isValid()
            and first == model.rowCount()
            and self.isVisible()
            and self.rowAt(self.viewport().height() - 1) != -1  # the viewport is full of rows
        )
        self._only_appended_below = below and self._only_appended_below is not False

    def _on_other_change(self, *_args: object) -> None:
        self._only_appended_below = False

    def placeholder(self) -> str:
        return self._placeholder

    def setPlaceholder(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        paint_placeholder(self, self._placeholder)


def paint_placeholder(view: QAbstractItemView, text: str) -> None:
    """Draw ``text`` on ``view`` while its model has no rows (what to do, or why it is empty)."""
    model = view.model()
    if text and (model is None or model.rowCount() == 0):
        painter = QPainter(view.viewport())
        painter.setPen(view.palette().color(QPalette.ColorRole.PlaceholderText))
        rect = view.viewport().rect().adjusted(24, 24, -24, -24)
        flags = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
        painter.drawText(rect, int(flags), text)
        painter.end()


class PlaceholderTree(QTreeWidget):
    """A tree that says what to do (or why it is empty) instead of showing a blank area."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._placeholder = ""

    def placeholder(self) -> str:
        return self._placeholder

    def setPlaceholder(self, text: str) -> None:
        self._placeholder = text
        self.viewport().update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        paint_placeholder(self, self._placeholder)


#: Model signals after which the view must be laid out and repainted in full.
_RELAYOUT_SIGNALS = (
    "modelAboutToBeReset",
    "layoutAboutToBeChanged",
    "rowsAboutToBeRemoved",
    "rowsAboutToBeMoved",
    "columnsAboutToBeInserted",
    "columnsAboutToBeRemoved",
    "columnsAboutToBeMoved",
)


class ElidedLabel(QLabel):
    """A one-line label that shows as much of its text as fits, ending in "…", and never makes its window
    wider: a caption quoting a long query or a long database name used to push an 800-pixel window wider
    than the screen. :meth:`text` is the whole text; so is the tooltip when it is cut (unless a tooltip of
    its own was set)."""

    #: Characters it keeps room for at the least.
    MIN_CHARS = 4

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self._own_tip = ""
        #: What the label shows for (text, room, own tooltip): a status label set to the same text on every
        #: search is not elided and relaid out again.
        self._shown_for: tuple[str, int, str] | None = None
        #: The whole text's width in pixels, for the text it was measured for.
        self._hint_for: tuple[str, int] | None = None
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:  # the whole text, not what fits
        return self._full

    def setText(self, text: str) -> None:
        if text == self._full and self._shown_for is not None:
            return
        self._full = text
        self.updateGeometry()
        self._elide()

    def clear(self) -> None:
        self.setText("")

    def setToolTip(self, tip: str) -> None:
        self._own_tip = tip
        self._elide()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def _around_text(self) -> int:
        """Pixels of the label's width that are not text (margins, frame)."""
        return self.width() - self.contentsRect().width() + 2 * self.margin()

    def sizeHint(self) -> QSize:
        if self._hint_for is None or self._hint_for[0] != self._full:  # asked at every layout
            line = " ".join(self._full.splitlines())
            self._hint_for = (self._full, self.fontMetrics().horizontalAdvance(line))
        width = self._hint_for[1] + self._around_text() + 2
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        width = self.fontMetrics().averageCharWidth() * self.MIN_CHARS + self._around_text()
        return QSize(width, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # the widths measured no longer hold
            self._hint_for = self._shown_for = None
            self._elide()

    def _elide(self) -> None:
        room = max(0, self.contentsRect().width() - 2 * self.margin())
        if self._shown_for == (self._full, room, self._own_tip):
            return
        self._shown_for = (self._full, room, self._own_tip)
        line = " ".join(self._full.splitlines())
        shown = self.fontMetrics().elidedText(line, Qt.TextElideMode.ElideRight, room)
        super().setText(shown)
        super().setToolTip(self._own_tip or (self._full if shown != self._full else ""))


class PageTabs(QTabWidget):
    """Tabs whose pages scroll when the window is smaller than a page needs. A tab widget is as tall as
    its tallest page's minimum: one page kept the whole window from fitting 800x500. Pages are added,
    found and shown as themselves (:meth:`page`, :meth:`indexOf`, :meth:`setCurrentWidget`).

    A page added with :meth:`add_later` is built when its tab is first shown or it is first asked for
    (:meth:`page`, :meth:`named`); :meth:`built` finds it only once it is.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._builders: dict[str, Callable[[], QWidget]] = {}
        self._names: list[str] = []
        self.currentChanged.connect(self.page)  # a tab shown is built first (connected before others)
        # Every tab stays in sight in a narrow window: labels are cut to fit (the tooltip says them
        # whole), never hidden behind scroll arrows.
        self.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.tabBar().setUsesScrollButtons(False)

    def addTab(self, page: QWidget, label: str) -> int:  # type: ignore[override]
        area = self._area(page.objectName() or "page")
        area.setWidget(page)
        index = super().addTab(area, label)
        self.setTabToolTip(index, label.replace("&", ""))
        return index

    def add_later(self, name: str, label: str, build: Callable[[], QWidget]) -> int:
        """A tab for the page called ``name`` (its object name) that ``build`` makes when first needed."""
        self._builders[name] = build
        index = super().addTab(self._area(name), label)
        self.setTabToolTip(index, label.replace("&", ""))
        return index

    def _area(self, name: str) -> QScrollArea:
        area = QScrollArea()
        area.setObjectName(f"{name}Scroll")
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        self._names.append(name)
        return area

    def pending(self) -> list[str]:
        """The pages not built yet, in their tabs' order."""
        return [name for name in self._names if name in self._builders]

    def index_named(self, name: str) -> int:
        return self._names.index(name)

    def named(self, name: str) -> QWidget:
        """The page called ``name``, built now if it was not yet."""
        page = self.page(self.index_named(name))
        assert page is not None
        return page

    def built(self, name: str) -> QWidget | None:
        """The page called ``name`` if it is built, else ``None`` (nothing is built)."""
        area = self.widget(self.index_named(name))
        return area.widget() if isinstance(area, QScrollArea) else None

    def page(self, index: int) -> QWidget | None:
        area = self.widget(index)
        if not isinstance(area, QScrollArea):
            return area
        build = self._builders.pop(self._names[index], None)
        if build is not None:
            area.setWidget(build())
        return area.widget()

    def indexOf(self, page: QWidget) -> int:
        return next((i for i in range(self.count()) if self._shown_in(i) is page), -1)

    def _shown_in(self, index: int) -> QWidget | None:
        area = self.widget(index)
        return area.widget() if isinstance(area, QScrollArea) else area

    def setCurrentWidget(self, page: QWidget) -> None:
        self.setCurrentIndex(self.indexOf(page))

    def currentWidget(self) -> QWidget | None:  # type: ignore[override]
        return self.page(self.currentIndex())


class LimitSpin(QSpinBox):
    """The result limit; Enter in it searches, as in the query box.

    What it cannot hold is refused out loud, never changed silently: a number beyond its range (Qt drops
    the keystroke that makes 500 into 5000), text that is no number, and a box left empty or at 0 (Qt puts
    the previous value back when the box loses focus) each emit :attr:`refused` with a sentence to show.
    """

    returnPressed = Signal()
    #: A sentence saying what was refused and what the limit stays at.
    refused = Signal(str)

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        answer = super().validate(text, pos)
        if answer[0] == QValidator.State.Invalid and text != self.text():
            self.refused.emit(self._refusal(text))
        return answer

    def problem(self) -> str | None:
        """Why what the box shows is not a limit it can search with, or ``None``."""
        return None if self.hasAcceptableInput() else self._refusal(self.text())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            problem = self.problem()
            if problem is not None:
                self.refused.emit(problem)
                return
            self.interpretText()
            self.returnPressed.emit()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        problem = self.problem()
        if problem is not None:
            self.refused.emit(problem)  # Qt is about to put the previous value back
        super().focusOutEvent(event)

    def _refusal(self, text: str) -> str:
        typed = text.strip()
        holds = f"The limit holds {self.minimum():,} to {self.maximum():,}"
        stays = f"it stays {self.value():,}"
        if typed.isdigit() and int(typed) > self.maximum():
            return f"{holds}: {int(typed):,} is more; {stays}."
        if not typed:
            return f"{holds}: the box is empty; {stays}."
        shown = typed if len(typed) <= 20 else typed[:19] + "…"
        return f"{holds}: “{shown}” is not one of them; {stays}."


#: Families tried after the system's fixed font, in order.
_MONOSPACE_FALLBACKS = ("monospace", "DejaVu Sans Mono", "Noto Mono", "Liberation Mono", "Courier New")


def renders_monospace(family: str) -> bool:
    """Whether ``family`` draws narrow and wide letters at one width, as the user sees it (a font's
    fixed-pitch flag is not reliable: Noto Sans Mono reports False)."""
    metrics = QFontMetrics(QFont(family))
    return metrics.horizontalAdvance("iiii") == metrics.horizontalAdvance("WWWW")


def monospace_font_family() -> str:
    """The system's fixed font, or the first family that renders monospace."""
    system = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
    return next((family for family in (system, *_MONOSPACE_FALLBACKS) if renders_monospace(family)), system)


def selectable_label(name: str, *, wrap: bool = False) -> QLabel:
    """A label of plain text the user can select and copy (a path, a state, a call's arguments)."""
    label = QLabel()
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setWordWrap(wrap)
    return label


def push_button(text: str, name: str, tip: str = "") -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    if tip:
        button.setToolTip(tip)
    return button


def text_view(name: str, *, read_only: bool = False, monospace: bool = False) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setObjectName(name)
    view.setReadOnly(read_only)
    if monospace:
        view.setFont(QFont(monospace_font_family()))
    return view


def group_box(title: str, items: Sequence[tuple[QWidget, int]], buttons: Sequence[QWidget] = ()) -> QGroupBox:
    """A titled box holding ``items`` (widget, stretch) top to bottom, with ``buttons`` right-aligned
    below them."""
    box = QGroupBox(title)
    layout = QVBoxLayout(box)
    for widget, stretch in items:
        layout.addWidget(widget, stretch)
    if buttons:
        row = QHBoxLayout()
        row.addStretch(1)
        for button in buttons:
            row.addWidget(button)
        layout.addLayout(row)
    return box


def engine_combo(name: str) -> QComboBox:
    """ "Engine: local / Ray" for a whole-table job: this process, or Ray (the cluster named by
    RAY_ADDRESS, else a Ray of this machine's cores started for the job)."""
    combo = QComboBox()
    combo.setObjectName(name)
    combo.addItem("local", "local")
    combo.addItem("Ray", "ray")
    combo.setToolTip(
        "Where the job runs: here, or on Ray (the cluster named by RAY_ADDRESS, else a Ray of this "
        "machine's cores, started for the job; needs pip install 'recall-gui[scale]')"
    )
    return combo
