"""``recall-gui unregister NAME``: take a database out of the registry; its knowledge base stays."""

from __future__ import annotations

import argparse
from typing import Any

from recall_gui.cli.common import location, registry_option, write_stdout
from recall_gui.core.base import ACTIVE_FILE, DBS_FILE, masked, printable
from recall_gui.core.registry import unregister_database

NAME = "unregister"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="remove a database from the registry (its files stay)",
        description=f"Remove a database's entry from {DBS_FILE} (and its name from {ACTIVE_FILE}), keeping "
        "every other entry as it is. The knowledge base's folder is never touched: `recall-gui register` "
        "adds it back. Refused (exit 1) when the registry lists no database of that name.",
    )
    registry_option(parser)
    parser.add_argument("name", metavar="NAME", help="the database's name, as `recall-gui list` shows it")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    removed = unregister_database(location(args).directory, args.name)
    was = " (it was active)" if removed.active_position is not None else ""
    uri = removed.raw.get("uri")
    kept = f"; its knowledge base at {uri} was not touched" if isinstance(uri, str) else ""
    # The name and the URI come from the registry: shown escaped, as `list` shows them.
    write_stdout(
        printable(masked(f'unregistered "{args.name}" from {removed.registry_file}{was}{kept}')) + "\n"
    )
    return 0
