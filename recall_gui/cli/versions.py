"""``recall-gui versions``: the versions of a database's table (number, time, rows, tags)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import registry_option, write_stdout
from recall_gui.cli.databases import database, database_options, refuse_unclear
from recall_gui.core.base import json_text, printable

if TYPE_CHECKING:
    from recall_gui.core.tables import TableVersion


NAME = "versions"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="list the versions of a database's table",
        description="List the versions LanceDB keeps of a database's table: number, time, row count and "
        "tags, of a registered database (--db) or of a table of an unregistered folder (--path). "
        "Nothing is written.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


#: A listing of at least this many versions (or running a second or more) says so on stderr.
LONG_HISTORY = 100


class ListingProgress:
    """How a long listing of versions goes, on stderr: on a terminal a line that counts the seconds, else
    one line when it starts being long (so a script's log says why it waits)."""

    def __init__(self, name: str) -> None:
        self.name = printable(name)  # a table's or registry's name may hold control characters
        self.shown = False

    def __call__(self, count: int | None, seconds: float) -> None:
        if (count is None or count < LONG_HISTORY) and seconds < 1:
            return
        versions = f"{count:,} versions" if count is not None else "the versions"
        text = f'listing {versions} of "{self.name}" (LanceDB reads each one; Ctrl-C stops)'
        if sys.stderr.isatty():
            print(f"\r{text}: {seconds:.0f} s", end="", file=sys.stderr, flush=True)
        elif not self.shown:
            print(f"{text}…", file=sys.stderr, flush=True)
        self.shown = True

    def end(self) -> None:
        if self.shown and sys.stderr.isatty():
            print(file=sys.stderr)


async def _versions(args: argparse.Namespace) -> tuple[TableVersion, ...]:
    async with core.session.Session() as session:
        entry = await database(session, args)
        progress = ListingProgress(entry.table_name)
        try:
            return await core.tables.list_versions(session, entry.target, progress=progress)
        finally:
            progress.end()


def format_table(versions: tuple[TableVersion, ...]) -> str:
    headers = ["VERSION", "TIME", "ROWS", "TAGS"]
    lines = [
        [
            str(v.version),
            v.time_text,
            "?" if v.rows is None else str(v.rows),
            " ".join(part for part in (", ".join(v.tags), "(latest)" if v.latest else "") if part),
        ]
        for v in versions
    ]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    versions = asyncio.run(_versions(args))
    text = json_text([v.to_json() for v in versions], indent=2) if args.json else format_table(versions)
    write_stdout(text + "\n")
    return 0
