"""Finding the database a command inspects (active or not): a registered one by ``--db``, or a table of an
unregistered folder by ``--path`` (``similar``, ``duplicates``, ``rank``, ``versions`` and ``diff``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.cli.common import say
from recall_gui.cli.folder_options import add_path_options, path_storage, refuse_without_path
from recall_gui.core.base import DEFAULT_LIMIT, DatabaseNotFoundError, InvalidInputError
from recall_gui.core.registry import DatabaseEntry, Registry, load_registry

if TYPE_CHECKING:
    from recall_gui.core.search import FoundEntry, Harness
    from recall_gui.core.session import Session


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


def database_options(parser: argparse.ArgumentParser) -> None:
    """``--db NAME``, or ``--path PATH`` with ``--table``, ``--model`` and ``--storage-option``."""
    parser.add_argument("--db", metavar="NAME", help="name of a registered database (active or not)")
    add_path_options(parser)


def refuse_unclear(args: argparse.Namespace, command: str, *, registry_used: bool = False) -> None:
    """One of ``--db`` and ``--path``, and no option that would be ignored; ``registry_used``: the
    command still reads the registry with ``--path`` (``rank`` asks which database agents search)."""
    refuse_without_path(args)
    if (args.db is None) == (args.path is None):
        raise InvalidInputError(
            "give one of --db NAME or --path PATH", hint=f"See `recall-gui {command} --help`."
        )
    from recall_gui.cli.common import chosen_registry

    if args.path is not None and not registry_used and chosen_registry(args) is not None:
        raise InvalidInputError(
            f"--registry has no use with --path: `{command}` reads a folder without the registry",
            hint="Leave --registry out, or name a registered database with --db.",
        )


async def chosen_database(
    session: Session, args: argparse.Namespace, registry: Registry | None
) -> DatabaseEntry:
    """The database ``--db`` names in ``registry``, or the table of the folder ``--path`` names (its
    model and columns detected as the window detects them, ``--table`` and ``--model`` honoured)."""
    if args.path is None:
        assert registry is not None
        return registered(registry, args.db)

    opened = await core.tables.open_table(
        session, args.path, table=args.table, model=args.model, storage_options=path_storage(args)
    )
    return opened.entry


async def database(session: Session, args: argparse.Namespace) -> DatabaseEntry:
    """:func:`chosen_database`, the registry's problems warned of first when ``--db`` is used
    (``versions``, ``diff``, ``duplicates``)."""
    if args.path is not None:
        return await chosen_database(session, args, None)
    from recall_gui.cli.common import location, warn_problems

    where = location(args)
    warn_problems(where)
    return await chosen_database(session, args, load_registry(where.directory))


def entry_options(parser: argparse.ArgumentParser, limit_help: str) -> None:
    """The database (``--db`` or ``--path``), ``--id`` and ``--limit``: one entry of it (``similar``,
    ``rank``)."""
    database_options(parser)
    parser.add_argument(
        "--id",
        required=True,
        metavar="ID",
        help="the entry's id; where rows share an id, one of them as results name it: ID·<hex digits of "
        "its content's sha256>, e.g. content·3f2a9c1e",
    )
    parser.add_argument("--limit", default=str(DEFAULT_LIMIT), metavar="N", help=limit_help)


async def entry_named(
    harness: Harness, args: argparse.Namespace, using: str, version: int | None = None
) -> tuple[DatabaseEntry, FoundEntry]:
    """The database and the row that ``--db`` (or ``--path``) and ``--id`` name (in ``version`` of its
    table, ``None``: the latest); ``--id content·3f2a9c1e`` names one of the rows that share an id by its
    content. When several rows share the id and it names none of them, the first is taken and stderr says
    so (``using``: what is done with it, e.g. "ranking")."""
    entry = await chosen_database(harness.session, args, harness.registry if args.path is None else None)
    found = await core.search.find_entry(harness.session, entry.target.at(version), args.id)
    if found.sharing_id > 1 and not found.sha_prefix:
        named = core.storage.IdRepeats(found.sharing_id, {found.hit.id: found.sharing_id})
        first = f"{using} the first, {named.name(found.hit.id, found.hit.content)} (row {found.hit.row_id})"
        say(f"warning: {found.sharing_id} entries have the id '{args.id}'; {first}")
        say("hint: name one by its content, as results show it: --id ID·<first hex digits of its sha256>")
    return entry, found
