"""``recall-gui register``: add a table of a LanceDB folder to the agents' databases (cosh's registry)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from recall_gui import core
from recall_gui.cli.common import (
    location,
    registry_option,
    report_error,
    storage_option_arg,
    storage_options,
    write_stdout,
)
from recall_gui.core.base import InvalidInputError, has_credentials, masked, printable

NAME = "register"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="add a LanceDB folder's table to the agents' databases",
        description="Add a table of a LanceDB folder (or object-store URI) to the registry that cosh and "
        "recall-gui's MCP server read, active unless --inactive. Refused, with the reason, when the name "
        "is taken, PATH holds no such table, or the model's width is not the table's.",
    )
    registry_option(parser)
    parser.add_argument("path", metavar="PATH", help="the LanceDB folder or URI (s3://bucket/prefix)")
    parser.add_argument("--name", required=True, help="the database's name, as agents will call it")
    parser.add_argument("--table", metavar="NAME", help="the table, when PATH holds several")
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="the model the table was made with (default: the one the table names, else the local model "
        "of its width): a cosh name (AllMiniLML6V2), a Hugging Face id, or provider/model",
    )
    parser.add_argument(
        "--description",
        default="",
        metavar="TEXT",
        help="what the database holds: agents read it to decide when to search",
    )
    parser.add_argument(
        "--inactive", action="store_true", help="register it without letting agents search it yet"
    )
    parser.add_argument(
        "--store-credentials",
        action="store_true",
        help="store a URI that holds a password (s3://KEY:SECRET@bucket) in the registry as typed, in "
        "plain text; without it such a URI is refused (give the keys as --storage-option or in the "
        "environment instead)",
    )
    storage_option_arg(parser)
    parser.set_defaults(run=run)


async def _register(args: argparse.Namespace) -> str:
    where = location(args)
    # A name that cannot be is refused before anything is read.
    problem = core.tables.check_name(args.name, set())
    if problem is not None:
        raise InvalidInputError(f"not registered: {problem}", hint="Choose another name.")
    # Before anything is opened: the password would travel to the object store for nothing.
    core.tables.refuse_credentials(args.path, where.directory, allowed=args.store_credentials)
    async with core.session.Session() as session:
        opened = await core.tables.open_table(
            session,
            args.path,
            table=args.table,
            model=args.model,
            storage_options=storage_options(args.storage_option),
        )
        entry = opened.entry
        request = core.tables.Registration(
            args.name,
            args.description,
            entry.embedder,
            active=not args.inactive,
            store_credentials=args.store_credentials,
        )
        done = await core.tables.register_table(session, where.directory, entry, request)
    for note in done.notes:
        print(f"note: {printable(masked(note))}", file=sys.stderr)
    if has_credentials(entry.uri):
        report_error(
            f"the password in the URI is stored in plain text in {done.registry_file}",
            "Anyone who can read that file can use it; storage options or the environment keep it out.",
            level="warning",
        )
    state = (
        f"inactive: agents cannot search it until `recall-gui activate {args.name}`"
        if args.inactive
        else "active"
    )
    text = (
        f'registered "{args.name}" ({state}) in {done.registry_file}: table "{entry.table_name}" of '
        f"{masked(entry.uri)}, model {entry.embedder.label}, {entry.model_reason}"
    )
    return printable(text) + "\n"  # a table's or a folder's name may hold control characters


def run(args: argparse.Namespace) -> int:
    write_stdout(asyncio.run(_register(args)))
    return 0
