"""``recall-gui versions``: the versions of a database's table (number, time, rows, tags)."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

from recall_gui.cli.common import registry_option, write_stdout
from recall_gui.cli.databases import database, database_options, refuse_unclear

if TYPE_CHECKING:
    from recall_gui.core.versions import TableVersion


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


async def _versions(args: argparse.Namespace) -> tuple[TableVersion, ...]:
    from recall_gui.core.session import Session
    from recall_gui.core.versions import list_versions

    async with Session() as session:
        entry = await database(session, args)
        return await list_versions(session, entry.target)


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
    text = json.dumps([v.to_json() for v in versions], indent=2) if args.json else format_table(versions)
    write_stdout(text + "\n")
    return 0
