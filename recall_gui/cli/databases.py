"""Finding a database by name for the commands that inspect one (active or not): ``similar``,
``duplicates``, ``rank``, ``versions`` and ``diff``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from recall_gui.core.errors import DatabaseNotFoundError
from recall_gui.core.registry import DatabaseEntry, Registry
from recall_gui.core.types import DEFAULT_LIMIT

if TYPE_CHECKING:
    from recall_gui.core.harness import Harness
    from recall_gui.core.similar import FoundEntry


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


def database(args: argparse.Namespace) -> DatabaseEntry:
    """The registered database ``--db`` names in the registry the options give, after warning of the
    registry's problems (``versions``, ``diff``)."""
    from recall_gui.cli.common import location, warn_problems
    from recall_gui.core.registry import load_registry

    where = location(args)
    warn_problems(where)
    return registered(load_registry(where.directory), args.db)


def entry_options(parser: argparse.ArgumentParser, limit_help: str) -> None:
    """``--db``, ``--id`` and ``--limit``: one entry of a registered database (``similar``, ``rank``)."""
    parser.add_argument("--db", required=True, metavar="NAME", help="name of a registered database")
    parser.add_argument("--id", required=True, metavar="ID", help="the entry's id")
    parser.add_argument("--limit", default=str(DEFAULT_LIMIT), metavar="N", help=limit_help)


async def entry_named(
    harness: Harness, args: argparse.Namespace, using: str, version: int | None = None
) -> tuple[DatabaseEntry, FoundEntry]:
    """The database and the row that ``--db`` and ``--id`` name (in ``version`` of its table, ``None``:
    the latest); when several rows share the id, the first is taken and stderr says so (``using``: what
    is done with it, e.g. "ranking")."""
    from recall_gui.core.similar import find_entry

    entry = registered(harness.registry, args.db)
    found = await find_entry(harness.session, entry.target.at(version), args.id)
    if found.sharing_id > 1:
        print(
            f"warning: {found.sharing_id} entries have the id {args.id!r}; {using} the first "
            f"(row {found.hit.row_id})",
            file=sys.stderr,
        )
    return entry, found
