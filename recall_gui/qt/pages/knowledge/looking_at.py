"""What the knowledge page looks at: the database, its table's facts, the version shown, the filter of
the rows shown and the rows chosen on the map. The page owns one; the parts that choose a database or a
version, search or browse write it, every other part reads it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall_gui.core.base import quoted
from recall_gui.core.search import ViewScope
from recall_gui.core.storage import IdRepeats, content_sha256, entry_label

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.search import DocumentLayout
    from recall_gui.core.storage import TableTarget
    from recall_gui.core.tables import TableInfo, TableVersion
    from recall_gui.qt.scope.inputs import Inputs


class LookingAt:
    """The current database and the part of its table shown."""

    def __init__(self) -> None:
        self.current: DatabaseEntry | None = None
        #: The "Opened" group's key of the current database, when it is an opened table.
        self.opened_key: str | None = None
        #: The current table as last checked (``None`` until read, or if it cannot be).
        self.info: TableInfo | None = None
        #: The version of the table shown (``None``: the latest) and the versions it has.
        self.version: int | None = None
        self.versions: tuple[TableVersion, ...] = ()
        #: The rows chosen on the map that browsing shows (row ids, and what to call them), if any.
        self.selection: tuple[npt.NDArray[np.uint64], str] | None = None
        #: The metadata filter of the rows shown (searched or browsed), ``None`` for none.
        self.where: str | None = None
        #: How chunks make documents, as the user chose it for this table (``None``: as detected).
        self.document_layout: DocumentLayout | None = None
        #: The ids several rows of the table shown share (as of the last search or browse).
        self.repeats = IdRepeats()

    def forget_table(self) -> None:
        """Another database: nothing of the previous table's facts, version or rows applies."""
        self.info = None
        self.version, self.versions, self.selection, self.where = None, (), None, None
        self.document_layout = None
        self.repeats = IdRepeats()

    def name(self, entry_id: str, content: str) -> str:
        """An entry as the page names it: its id, or ``content·3f2a9c1e`` where other rows share it."""
        if not self.repeats.is_shared(entry_id):
            return entry_id
        return entry_label(entry_id, content_sha256(content))

    def view(self, limit: int) -> ViewScope | None:
        """What the user looks at, searched with ``limit``, as the core compares it with the agent's
        scope (``None`` while no database is chosen)."""
        if self.current is None:
            return None
        label = self.selection[1] if self.selection is not None else None
        return ViewScope(self.current, self.version, self.where, label, limit)

    def is_current(self, entry: DatabaseEntry) -> bool:
        """Whether ``entry`` is still the database chosen (a registered one by name, an opened one as is)."""
        current = self.current
        if current is None or current.origin != entry.origin:
            return False
        return current.name == entry.name if entry.origin == "registry" else current.target == entry.target

    def target(self) -> TableTarget:
        """The current database's table at the version shown."""
        if self.current is None:
            raise RuntimeError("no database is chosen")
        return self.current.target.at(self.version)

    def latest_number(self) -> int | None:
        return next((version.version for version in self.versions if version.latest), None)

    def metadata_columns(self) -> list[str]:
        return self.info.metadata_columns if self.info is not None else []

    def at(self) -> str:
        """What an entry's position adds when the version shown is not the latest."""
        return f" · version {self.version}, not the latest" if self.version is not None else ""

    def scope(self, inputs: Inputs) -> str:
        """What a caption adds about the version and the filter."""
        parts = []
        if self.version is not None:
            parts.append(f"version {self.version}, not the latest")
        if inputs.where:
            parts.append(f"where {quoted(inputs.where)}")
        return f" — {'; '.join(parts)}" if parts else ""
