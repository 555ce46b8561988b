"""Finding a database by name for the commands that inspect one (active or not): ``similar``,
``duplicates`` and ``rank``."""

from __future__ import annotations

from recall_gui.core.errors import DatabaseNotFoundError
from recall_gui.core.registry import DatabaseEntry, Registry


def registered(registry: Registry, name: str) -> DatabaseEntry:
    """The database called ``name``, active or not; the error lists the registered ones."""
    entry = registry.get(name)
    if entry is None:
        names = ", ".join(db.name for db in registry.databases) or "(none)"
        raise DatabaseNotFoundError(
            f"Database '{name}' not found. Registered databases: {names}",
            hint="Check the name with `recall-gui list`.",
        )
    return entry
