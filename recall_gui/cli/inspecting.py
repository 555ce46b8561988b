"""What the inspection commands (``versions``, ``diff``) share: the database a ``--db`` names."""

from __future__ import annotations

import argparse

from recall_gui.cli.common import location, warn_problems
from recall_gui.core.errors import DatabaseNotFoundError
from recall_gui.core.registry import DatabaseEntry, load_registry


def database(args: argparse.Namespace) -> DatabaseEntry:
    """The registered database ``--db`` names (active or not: inspecting one is not an agent's search)."""
    where = location(args)
    warn_problems(where)
    registry = load_registry(where.directory)
    entry = registry.get(args.db)
    if entry is None:
        names = ", ".join(db.name for db in registry.databases) or "(none)"
        raise DatabaseNotFoundError(
            f"Database '{args.db}' not found. Registered databases: {names}",
            hint="Run `recall-gui list` to see them.",
        )
    return entry
