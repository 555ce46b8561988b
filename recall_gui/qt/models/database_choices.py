"""The knowledge page's database dropdown as one list model, however many databases there are.

Rows are the active databases, a separator, the inactive ones, then the "Opened" group (a separator, its
bold header, one row per opened table). A row's text, dot and tooltip are worked out when a view asks for
them (only the rows on screen), so listing 50,000 databases or learning their health costs a model signal,
never one widget item (or one Python object) per database.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QIcon

from recall_gui.core.base import masked
from recall_gui.core.messages import health_label
from recall_gui.core.registry import DatabaseEntry, Registry

if TYPE_CHECKING:
    from recall_gui.core.search import DatabaseHealth

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
#: An opened table's key (its place), on the rows of the "Opened" group.
OPENED_ROLE = Qt.ItemDataRole.UserRole + 2
OPENED_HEADER = "Opened — not in the registry"
EMPTY_TEXT = "(no databases registered)"
#: What QComboBox's delegate draws as a separator line.
SEPARATOR = "separator"

RowKind = Literal["database", "opened", "separator", "header", "empty"]
Index = QModelIndex | QPersistentModelIndex


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


def health_tip(entry: DatabaseEntry, health: DatabaseHealth | None) -> str:
    if health is None:
        tip = "Checking…"
    elif health.ok:
        tip = "Ready to search"
    else:
        tip = "\n".join(p.message + (f"\n  → {p.hint}" if p.hint else "") for p in health.problems)
    return f"{masked(entry.uri)}\n{tip}"


def dot_state(entry: DatabaseEntry, health: DatabaseHealth | None) -> str:
    """The dot beside a database: being checked, failed, healthy, or healthy but searched by no agent
    (a registered database that is not active)."""
    if health is None:
        return "checking"
    if not health.ok:
        return "failed"
    return "inactive" if entry.origin == "registry" and not entry.active else "ok"


class DatabaseChoicesModel(QAbstractListModel):
    """The registered databases (active first) and the opened tables, with their health.

    Rows are not stored: a row number maps onto the snapshot's own ``active`` and ``inactive`` tuples and
    the opened keys, so a new snapshot of 50,000 databases costs a model reset, not 50,000 objects.
    """

    def __init__(self, dot: Callable[[str], QIcon], parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: The dot of a state ("checking", "ok", "failed"); drawn once per state by its owner.
        self._dot = dot
        self._registry: Registry | None = None
        self._active: tuple[DatabaseEntry, ...] = ()
        self._inactive: tuple[DatabaseEntry, ...] = ()
        #: Health by database name: kept across snapshots (the next check replaces it), shown for listed ones.
        self._healths: dict[str, DatabaseHealth] = {}
        self._opened: dict[str, DatabaseEntry] = {}
        self._opened_keys: list[str] = []
        self._opened_healths: dict[str, DatabaseHealth] = {}
        #: The texts the dropdown measures for its width, worked out when first asked after a change.
        self._long_texts: list[str] | None = None

    # --- what is listed ---------------------------------------------------------------------------------

    def show(self, registry: Registry) -> None:
        """List the snapshot's databases."""
        self.beginResetModel()
        self._registry = registry
        self._active, self._inactive = registry.active, registry.inactive
        self._long_texts = None
        self.endResetModel()

    def show_opened(self, opened: Mapping[str, DatabaseEntry]) -> None:
        self.beginResetModel()
        self._opened = dict(opened)
        self._opened_keys = list(self._opened)
        self._opened_healths = {k: h for k, h in self._opened_healths.items() if k in self._opened}
        self._long_texts = None
        self.endResetModel()

    # The rows: the active databases, a separator (when both groups have some), the inactive ones; then,
    # with opened tables, a separator (after any database), the header and one row per opened table.

    def _separated(self) -> int:
        return 1 if self._active and self._inactive else 0

    def _databases_end(self) -> int:
        return len(self._active) + self._separated() + len(self._inactive)

    def _opened_start(self) -> int:
        """The row of the first opened table."""
        end = self._databases_end()
        return end + (1 if end else 0) + 1

    def _row(self, row: int) -> tuple[RowKind, str]:
        """What is in ``row``: its kind, and the database's name or the opened table's key."""
        active, end = len(self._active), self._databases_end()
        if row < active:
            return "database", self._active[row].name
        if row < end:
            if self._separated() and row == active:
                return "separator", ""
            return "database", self._inactive[row - active - self._separated()].name
        if not self._opened_keys:
            return "empty", ""
        start = self._opened_start()
        if row >= start:
            return "opened", self._opened_keys[row - start]
        return ("header", "") if row == start - 1 else ("separator", "")

    def is_empty(self) -> bool:
        return self._databases_end() == 0 and not self._opened_keys

    def names(self) -> list[str]:
        return [entry.name for entry in self._active + self._inactive]

    def entry(self, name: str) -> DatabaseEntry | None:
        return self._registry.get(name) if self._registry is not None else None

    def opened_entry(self, key: str) -> DatabaseEntry | None:
        return self._opened.get(key)

    def row_of(self, name: str | None = None, *, opened: str | None = None) -> int:
        """The row of database ``name`` (or of opened table ``opened``); -1 when it is not listed."""
        if opened is not None:
            return self._opened_start() + self._opened_keys.index(opened) if opened in self._opened else -1
        entry = self.entry(name) if name is not None else None
        if entry is None or self._registry is None:
            return -1
        in_group = self._registry.index_in_group[entry.name]
        return in_group if entry.active else len(self._active) + self._separated() + in_group

    def longest_texts(self) -> list[str]:
        """The texts of the rows with the longest names (and the opened group): what the dropdown
        measures for its width, never every row of a large registry."""
        if self._long_texts is None:
            longest = self._registry.longest_names if self._registry is not None else ()
            texts = [
                item_text(entry, self._healths.get(name)) for name in longest if (entry := self.entry(name))
            ]
            texts += [item_text(self._opened[key], None) for key in self._opened_keys]
            self._long_texts = texts + ([OPENED_HEADER] if self._opened else [])
        return self._long_texts

    # --- health -----------------------------------------------------------------------------------------

    def set_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        rows = [row for row in (self.row_of(name) for name in healths) if row >= 0]
        self._healths.update(healths)
        if rows:  # one signal for the span changed: views repaint what is on screen
            self._long_texts = None
            self.dataChanged.emit(self.index(min(rows)), self.index(max(rows)))

    def set_opened_health(self, key: str, health: DatabaseHealth) -> None:
        if key not in self._opened:
            return
        self._opened_healths[key] = health
        row = self.row_of(opened=key)
        self.dataChanged.emit(self.index(row), self.index(row))

    def health(self, name: str) -> DatabaseHealth | None:
        return self._healths.get(name) if self.entry(name) is not None else None

    def opened_health(self, key: str) -> DatabaseHealth | None:
        return self._opened_healths.get(key)

    # --- the model --------------------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        if parent.isValid():
            return 0
        if self._opened_keys:
            return self._opened_start() + len(self._opened_keys)
        return self._databases_end() or 1  # the "(no databases registered)" row

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        kind, _key = self._row(index.row())
        if kind in ("database", "opened"):
            return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if kind == "empty":
            return Qt.ItemFlag.ItemIsSelectable
        return Qt.ItemFlag.NoItemFlags

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self.rowCount():
            return None
        kind, key = self._row(index.row())
        if role == NAME_ROLE:
            return key if kind == "database" else None
        if role == OPENED_ROLE:
            return key if kind == "opened" else None
        if role == Qt.ItemDataRole.AccessibleDescriptionRole and kind == "separator":
            return SEPARATOR
        if role == Qt.ItemDataRole.FontRole and kind == "header":
            font = QFont()
            font.setBold(True)
            return font
        if kind == "header":
            return OPENED_HEADER if role == Qt.ItemDataRole.DisplayRole else None
        if kind == "empty":
            return EMPTY_TEXT if role == Qt.ItemDataRole.DisplayRole else None
        found = self._entry_and_health(kind, key)
        if found is None:
            return None
        entry, health = found
        if role == Qt.ItemDataRole.DisplayRole:
            return item_text(entry, health)
        if role == Qt.ItemDataRole.DecorationRole:
            return self._dot(dot_state(entry, health))
        if role == Qt.ItemDataRole.ToolTipRole:
            return health_tip(entry, health)
        return None

    def _entry_and_health(
        self, kind: RowKind, key: str
    ) -> tuple[DatabaseEntry, DatabaseHealth | None] | None:
        if kind == "database":
            entry = self.entry(key)
            return None if entry is None else (entry, self._healths.get(key))
        if kind == "opened":
            return self._opened[key], self._opened_healths.get(key)
        return None
