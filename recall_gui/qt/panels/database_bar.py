"""The database dropdown and the facts about the chosen database.

Active databases (the ones agents can search) come first, inactive ones after a separator, then, under
"Opened", tables opened by their folder (not in the registry). Each item shows its health as a coloured dot
and, when a check failed, what failed — no dialog needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QWidget

from recall_gui.core.credentials import masked
from recall_gui.core.messages import health_label
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.core.types import METRIC_NAMES
from recall_gui.qt.icons import status_dot
from recall_gui.qt.widgets import ElidedLabel

if TYPE_CHECKING:
    from recall_gui.core.health import DatabaseHealth

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
#: An opened table's key (its place), on the items of the "Opened" group.
OPENED_ROLE = Qt.ItemDataRole.UserRole + 2
OPENED_HEADER = "Opened — not in the registry"


def short_place(uri: str) -> str:
    """A folder as the dropdown names it: its last two parts (the whole place is in the tooltip)."""
    uri = masked(uri)
    scheme, sep, rest = uri.rpartition("://")
    parts = [part for part in rest.replace("\\", "/").split("/") if part]
    if len(parts) <= 2:
        return uri
    return f"{scheme}{sep}{parts[0]}/…/{parts[-1]}" if sep else f"…/{parts[-2]}/{parts[-1]}"


def item_text(entry: DatabaseEntry, health: DatabaseHealth | None) -> str:
    if entry.origin == "opened":
        text = f"{entry.table_name} — {short_place(entry.uri)}"
    else:
        text = entry.name if entry.active else f"{entry.name} (inactive)"
    if health is not None and health.problems:
        text += " — " + ", ".join(dict.fromkeys(health_label(p.kind) for p in health.problems))
    return text


def info_text(entry: DatabaseEntry, health: DatabaseHealth | None) -> str:
    """One line of facts: rows, dimension, model, index, version (what is known so far)."""
    parts: list[str] = []
    info = health.info if health else None
    if info is not None:
        parts.append(f"{info.row_count:,} rows")
        parts.append(f"{info.columns.vector_dim}-d vectors")
    parts.append(entry.embedder.label)
    if info is not None:
        vector_indexes = [ix for ix in info.indexes if info.columns.vector in ix.columns]
        if vector_indexes:
            index = vector_indexes[0]
            parts.append(f"index {index.index_type}" + (f" ({index.metric})" if index.metric else ""))
        else:
            metric = METRIC_NAMES.get(info.default_metric, info.default_metric)
            parts.append(f"no index (searched exactly, {metric})")
        parts.append(f"version {info.version}")
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

    def _width_for(self, text_width: int) -> int:
        """The combo's width when its text takes ``text_width`` pixels (frame, icon and arrow added)."""
        return super().minimumSizeHint().width() + text_width - self._chars(self.NARROWEST_CHARS)

    def _chars(self, count: int) -> int:
        return self.fontMetrics().horizontalAdvance("x") * count

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        widest = max((metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        text = min(max(widest, self._chars(self.NARROWEST_CHARS)), self._chars(self.WIDEST_CHARS))
        return QSize(self._width_for(text), super().sizeHint().height())

    def showPopup(self) -> None:
        metrics = self.view().fontMetrics()
        widest = max((metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
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
        self.info = ElidedLabel()
        self.info.setObjectName("dbInfo")
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
        self._entries: dict[str, DatabaseEntry] = {}
        self._healths: dict[str, DatabaseHealth] = {}
        #: One dot per state, drawn once: drawing one per item cost most of listing a large registry.
        self._dots: dict[str, QIcon] = {}
        self._opened: dict[str, DatabaseEntry] = {}
        self._opened_healths: dict[str, DatabaseHealth] = {}
        self.combo.activated.connect(self._on_activated)

    def current_name(self) -> str | None:
        name = self.combo.currentData(NAME_ROLE)
        return name if isinstance(name, str) else None

    def names(self) -> list[str]:
        return [
            n for i in range(self.combo.count()) if isinstance(n := self.combo.itemData(i, NAME_ROLE), str)
        ]

    def set_registry(self, registry: Registry) -> None:
        """List the registry's databases, keeping the current choice when it is still there."""
        self._entries = {entry.name: entry for entry in registry.databases}
        self._healths = {name: h for name, h in self._healths.items() if name in self._entries}
        self._fill()

    def set_opened(self, opened: Mapping[str, DatabaseEntry]) -> None:
        """List the opened tables (by key) in their own group, keeping the current choice."""
        self._opened = dict(opened)
        self._opened_healths = {k: h for k, h in self._opened_healths.items() if k in self._opened}
        self._fill()

    def _fill(self) -> None:
        current, current_opened = self.current_name(), self.current_opened()
        databases = list(self._entries.values())
        self.combo.blockSignals(True)
        self.combo.clear()
        active = [e for e in databases if e.active]
        inactive = [e for e in databases if not e.active]
        for entry in active:
            self._add(entry)
        if active and inactive:
            self.combo.insertSeparator(self.combo.count())
        for entry in inactive:
            self._add(entry)
        if not databases and not self._opened:
            self.combo.addItem("(no databases registered)")
            self.combo.setEnabled(False)
        else:
            self.combo.setEnabled(True)
        if self._opened:
            self._add_opened_group()
        if current_opened is not None:
            self.select_opened(current_opened)
        else:
            self.select(current)
        self.combo.blockSignals(False)
        self.combo.updateGeometry()  # its width follows its longest name
        self._show_info()

    def _add_opened_group(self) -> None:
        if self.combo.count():
            self.combo.insertSeparator(self.combo.count())
        self.combo.addItem(OPENED_HEADER)
        header = self.combo.model().item(self.combo.count() - 1)  # type: ignore[attr-defined]
        header.setEnabled(False)
        font = header.font()
        font.setBold(True)
        header.setFont(font)
        for key, entry in self._opened.items():
            self.combo.addItem(entry.table_name)
            index = self.combo.count() - 1
            self.combo.setItemData(index, key, OPENED_ROLE)
            self._decorate(index, entry, self._opened_healths.get(key))

    def current_opened(self) -> str | None:
        """The key of the opened table chosen, if one is."""
        key = self.combo.currentData(OPENED_ROLE)
        return key if isinstance(key, str) else None

    def select_opened(self, key: str) -> bool:
        """Show the opened table ``key`` as chosen, without emitting :attr:`openedChosen`."""
        index = self.combo.findData(key, OPENED_ROLE)
        if index < 0:
            return False
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)
        self._show_info()
        return True

    def set_opened_health(self, key: str, health: DatabaseHealth) -> None:
        if key not in self._opened:
            return
        self._opened_healths[key] = health
        index = self.combo.findData(key, OPENED_ROLE)
        if index >= 0:
            self._decorate(index, self._opened[key], health)
        self._show_info()

    def set_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        self._healths.update({name: h for name, h in healths.items() if name in self._entries})
        for index in range(self.combo.count()):
            name = self.combo.itemData(index, NAME_ROLE)
            if isinstance(name, str) and name in healths:
                self._decorate(index, self._entries[name], self._healths.get(name))
        self.combo.updateGeometry()
        self._show_info()

    def health(self, name: str) -> DatabaseHealth | None:
        return self._healths.get(name)

    def select(self, name: str | None) -> bool:
        """Show ``name`` as chosen, without emitting :attr:`databaseChosen`."""
        index = self.combo.findData(name, NAME_ROLE) if name is not None else -1
        if index < 0:
            return False
        self.combo.blockSignals(True)
        self.combo.setCurrentIndex(index)
        self.combo.blockSignals(False)
        self._show_info()
        return True

    def _add(self, entry: DatabaseEntry) -> None:
        self.combo.addItem(entry.name)
        index = self.combo.count() - 1
        self.combo.setItemData(index, entry.name, NAME_ROLE)
        self._decorate(index, entry, self._healths.get(entry.name))

    def _decorate(self, index: int, entry: DatabaseEntry, health: DatabaseHealth | None) -> None:
        state = "checking" if health is None else ("ok" if health.ok else "failed")
        self.combo.setItemText(index, item_text(entry, health))
        dot = self._dots.get(state)
        if dot is None:
            dot = self._dots[state] = status_dot(state)
        self.combo.setItemIcon(index, dot)
        if health is None:
            tip = "Checking…"
        elif health.ok:
            tip = "Ready to search"
        else:
            tip = "\n".join(p.message + (f"\n  → {p.hint}" if p.hint else "") for p in health.problems)
        self.combo.setItemData(index, f"{masked(entry.uri)}\n{tip}", Qt.ItemDataRole.ToolTipRole)

    def _show_info(self) -> None:
        name, key = self.current_name(), self.current_opened()
        if key is not None:
            entry, health = self._opened.get(key), self._opened_healths.get(key)
        else:
            entry = self._entries.get(name) if name else None
            health = self._healths.get(name) if name else None
        if entry is None:
            self.info.setText("")
            self.info.setToolTip("")
            return
        self.info.setText(info_text(entry, health))
        self.info.setToolTip(f"{masked(entry.uri)}\n{entry.description}")

    def _on_activated(self, index: int) -> None:
        name, key = self.combo.itemData(index, NAME_ROLE), self.combo.itemData(index, OPENED_ROLE)
        if isinstance(name, str):
            self._show_info()
            self.databaseChosen.emit(name)
        elif isinstance(key, str):
            self._show_info()
            self.openedChosen.emit(key)
