"""The database dropdown and the facts about the chosen database.

Active databases (the ones agents can search) come first, inactive ones after a separator, then, under
"Opened", tables opened by their folder (not in the registry). Each item shows its health as a coloured dot
and, when a check failed, what failed — no dialog needed. The dropdown shows one list model
(:class:`~recall_gui.qt.models.database_choices.DatabaseChoicesModel`): no widget item per database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QListView, QSizePolicy, QWidget

from recall_gui.core.base import METRIC_NAMES, masked
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.qt.icons import status_dot
from recall_gui.qt.models.database_choices import (
    NAME_ROLE,
    OPENED_HEADER,
    OPENED_ROLE,
    DatabaseChoicesModel,
    item_text,
    short_place,
)

__all__ = ["NAME_ROLE", "OPENED_HEADER", "OPENED_ROLE", "DatabaseBar", "item_text", "short_place"]

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo
    from recall_gui.core.search import DatabaseHealth


def model_text(entry: DatabaseEntry, model: ModelInfo | None) -> str:
    """The database's model, and whether the one embedding here is the agent's own."""
    if model is None:
        return entry.embedder.label
    return f"{entry.embedder.label}, {'exact' if model.exact else 'STAND-IN here'}"


def info_text(
    entry: DatabaseEntry,
    health: DatabaseHealth | None,
    newer: int | None = None,
    reading: int | None = None,
    model: ModelInfo | None = None,
) -> str:
    """One line of facts: rows, dimension, model (exact or a stand-in, once loaded), index, version (what
    is known so far); ``newer``: a later version the table has than the one the facts (and the rows
    shown) are of; ``reading``: the version the rows shown come from, while its facts are read (the facts
    known are of another)."""
    parts: list[str] = []
    info = health.info if health else None
    if info is not None and reading is not None and reading != info.version:
        return " · ".join((model_text(entry, model), f"version {reading}", "reading its facts…"))
    if info is not None:
        parts.append(f"{info.row_count:,} rows")
        parts.append(f"{info.columns.vector_dim}-d vectors")
    parts.append(model_text(entry, model))
    if info is not None:
        vector_indexes = [ix for ix in info.indexes if info.columns.vector in ix.columns]
        if vector_indexes:
            index = vector_indexes[0]
            parts.append(f"index {index.index_type}" + (f" ({index.metric})" if index.metric else ""))
        else:
            metric = METRIC_NAMES.get(info.default_metric, info.default_metric)
            parts.append(f"no index (all rows compared, {metric})")
        version = f"version {info.version}"
        if newer is not None and newer > info.version:
            version += f" (version {newer} is newer: search or browse again to see it)"
        parts.append(version)
    elif health is None:
        parts.append("checking…")
    if entry.origin == "opened":
        parts.append("opened, not registered: agents cannot search it")
    elif not entry.active:
        parts.append("inactive: agents cannot search it")
    return " · ".join(parts)


class DatabaseCombo(QComboBox):
    """The dropdown: as wide as its longest item (up to :data:`WIDEST_CHARS` characters) where there is
    room, narrower where there is not (down to :data:`NARROWEST_CHARS`, the rest elided); its list always
    shows whole names. A long database name used to make the window wider than an 800-pixel screen."""

    NARROWEST_CHARS = 16
    WIDEST_CHARS = 48

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(self.NARROWEST_CHARS)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.choices = DatabaseChoicesModel(self._dot, self)
        self.setModel(self.choices)
        view = self.view()
        if isinstance(view, QListView):
            view.setUniformItemSizes(True)  # lays out 50,000 rows without asking each its size
        #: One dot per state, drawn once: drawing one per item cost most of listing a large registry.
        self._dots: dict[str, QIcon] = {}

    def _dot(self, state: str) -> QIcon:
        dot = self._dots.get(state)
        if dot is None:
            dot = self._dots[state] = status_dot(state)
        return dot

    def _widest(self, metrics: Any) -> int:
        texts = self.choices.longest_texts()
        return max((metrics.horizontalAdvance(text) for text in texts), default=0)

    def _width_for(self, text_width: int) -> int:
        """The combo's width when its text takes ``text_width`` pixels (frame, icon and arrow added)."""
        return super().minimumSizeHint().width() + text_width - self._chars(self.NARROWEST_CHARS)

    def _chars(self, count: int) -> int:
        return self.fontMetrics().horizontalAdvance("x") * count

    def sizeHint(self) -> QSize:
        widest = self._widest(self.fontMetrics())
        text = min(max(widest, self._chars(self.NARROWEST_CHARS)), self._chars(self.WIDEST_CHARS))
        return QSize(self._width_for(text), super().sizeHint().height())

    def showPopup(self) -> None:
        widest = self._widest(self.view().fontMetrics())
        self.view().setMinimumWidth(min(widest + self.iconSize().width() + 48, self.screen().size().width()))
        super().showPopup()


class DatabaseBar(QWidget):
    """``dbCombo`` and ``dbInfo``; emits :attr:`databaseChosen` when the user picks a database."""

    databaseChosen = Signal(str)
    #: The user picked a table of the "Opened" group (its key).
    openedChosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = DatabaseCombo()
        self.combo.setObjectName("dbCombo")
        self.combo.setToolTip("The database to search or browse (F5 reloads the registry)")
        # The facts wrap onto a second line in a narrow window rather than losing their end (the index,
        # the version, whether agents can search it); the width they get never widens the window.
        self.info = QLabel()
        self.info.setObjectName("dbInfo")
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.TextFormat.PlainText)
        self.info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        label = QLabel("&Database:")
        label.setBuddy(self.combo)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(label)
        layout.addWidget(self.combo)
        layout.addSpacing(6)
        layout.addWidget(self.info, 1)
        self.choices = self.combo.choices
        #: A later version of the chosen table than the one its facts are of (another program wrote it),
        #: with the choice it was found for: (name, opened key, version).
        self._newer: tuple[str | None, str | None, int] | None = None
        #: The version the rows shown come from while its facts are read, with the choice it is of.
        self._reading: tuple[str | None, str | None, int] | None = None
        #: What serves a database's queries here, once known (the page hands in its session's answer).
        self.model_of: Callable[[DatabaseEntry], ModelInfo | None] = lambda _entry: None
        self.combo.activated.connect(self._on_activated)

    def current_name(self) -> str | None:
        name = self.combo.currentData(NAME_ROLE)
        return name if isinstance(name, str) else None

    def names(self) -> list[str]:
        return self.choices.names()

    def set_registry(self, registry: Registry) -> None:
        """List the registry's databases, keeping the current choice when it is still there."""
        current, current_opened = self.current_name(), self.current_opened()
        self.choices.show(registry)
        self._after_refill(current, current_opened)

    def set_opened(self, opened: Mapping[str, DatabaseEntry]) -> None:
        """List the opened tables (by key) in their own group, keeping the current choice."""
        current, current_opened = self.current_name(), self.current_opened()
        self.choices.show_opened(opened)
        self._after_refill(current, current_opened)

    def _after_refill(self, current: str | None, current_opened: str | None) -> None:
        self.combo.setEnabled(not self.choices.is_empty())
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(0)
        self.combo.blockSignals(False)
        if current_opened is not None:
            self.select_opened(current_opened)
        else:
            self.select(current)
        self.combo.updateGeometry()  # its width follows its longest name
        self._show_info()

    def current_opened(self) -> str | None:
        """The key of the opened table chosen, if one is."""
        key = self.combo.currentData(OPENED_ROLE)
        return key if isinstance(key, str) else None

    def select_opened(self, key: str) -> bool:
        """Show the opened table ``key`` as chosen, without emitting :attr:`openedChosen`."""
        return self._select_row(self.choices.row_of(opened=key))

    def set_opened_health(self, key: str, health: DatabaseHealth) -> None:
        self.choices.set_opened_health(key, health)
        self._show_info()

    def set_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        self.choices.set_health(healths)
        self.combo.updateGeometry()
        self._show_info()

    def health(self, name: str) -> DatabaseHealth | None:
        return self.choices.health(name)

    def select(self, name: str | None) -> bool:
        """Show ``name`` as chosen, without emitting :attr:`databaseChosen`."""
        return self._select_row(self.choices.row_of(name))

    def _select_row(self, row: int) -> bool:
        if row < 0:
            return False
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(row)
        self.combo.blockSignals(False)
        self._show_info()
        return True

    def show_newer(self, version: int | None) -> None:
        """Say that the chosen table has ``version``, later than the one its facts are of (``None``: it
        has none)."""
        self._newer = self._for_choice(version)
        self._show_info()

    def show_reading(self, version: int | None) -> None:
        """Say that the rows shown come from ``version``, whose facts are being read (``None``: the facts
        shown are theirs)."""
        self._reading = self._for_choice(version)
        self._show_info()

    def _for_choice(self, version: int | None) -> tuple[str | None, str | None, int] | None:
        return (self.current_name(), self.current_opened(), version) if version is not None else None

    def _show_info(self) -> None:
        name, key = self.current_name(), self.current_opened()
        if key is not None:
            entry, health = self.choices.opened_entry(key), self.choices.opened_health(key)
        else:
            entry = self.choices.entry(name) if name else None
            health = self.choices.health(name) if name else None
        if entry is None:
            self.info.setText("")
            self.info.setToolTip("")
            return
        newer, reading = (
            found[2] if found is not None and found[:2] == (name, key) else None
            for found in (self._newer, self._reading)
        )
        model = self.model_of(entry)
        self.info.setText(info_text(entry, health, newer, reading, model))
        note = model.note() if model is not None else None
        self.info.setToolTip(f"{masked(entry.uri)}\n{entry.description}" + (f"\n\n{note}" if note else ""))

    def show_model(self) -> None:
        """Say again which model serves the database shown (it has just been loaded)."""
        self._show_info()

    def _on_activated(self, index: int) -> None:
        name, key = self.combo.itemData(index, NAME_ROLE), self.combo.itemData(index, OPENED_ROLE)
        if isinstance(name, str):
            self._show_info()
            self.databaseChosen.emit(name)
        elif isinstance(key, str):
            self._show_info()
            self.openedChosen.emit(key)
