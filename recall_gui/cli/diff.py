"""``recall-gui diff``: the rows added, removed and changed between two versions of a database's table."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, registry_option, say, write_stdout
from recall_gui.cli.databases import database, database_options, refuse_unclear
from recall_gui.core.base import json_text

if TYPE_CHECKING:
    from recall_gui.core.inspect import VersionDiff


NAME = "diff"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="show what changed between two versions of a database's table",
        description="Compare two versions of a database's table by id: the rows added, removed, and "
        "changed in content or vector, in a registered database (--db) or a table of an unregistered "
        "folder (--path). A table without an id column is compared by content. Nothing is written.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument("--from", dest="from_version", required=True, type=int, metavar="V1")
    parser.add_argument(
        "--to", dest="to_version", type=int, metavar="V2", help="the newer version (default: the latest)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='print {"from", "to", "added", "removed", "changed", "by"} as JSON',
    )
    parser.set_defaults(run=run)


async def _diff(args: argparse.Namespace) -> tuple[str, VersionDiff]:
    """The database's name (a folder's table: its table's) and the diff."""
    from recall_gui.cli.versions import ListingProgress

    async with core.session.Session() as session:
        entry = await database(session, args)
        progress = ListingProgress(entry.table_name)
        try:
            diff = await core.inspect.diff_versions(
                session, entry.target, args.from_version, args.to_version, listing=progress
            )
        finally:
            progress.end()
        return entry.name, diff


def format_text(name: str, diff: VersionDiff) -> str:
    lines = [f"{name}: version {diff.from_version} -> {diff.to_version}, by {diff.by}: {diff.summary()}"]
    marks = {"added": "+", "removed": "-", "changed": "~"}
    for change in diff.changes:
        detail = f" ({change.what})" if change.kind == "changed" else ""
        lines.append(f"{marks[change.kind]} {change.id}{detail}")
    return escaped_lines(lines)  # the name and the ids come from the registry and the table


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    name, diff = asyncio.run(_diff(args))
    if diff.by == "content":
        print(
            "note: the table has no id column in one of these versions, so rows were matched by their "
            "content and are named by their row ids",
            file=sys.stderr,
        )
    if diff.duplicate_ids:
        shown = ", ".join(diff.duplicate_ids[:5]) + (" …" if len(diff.duplicate_ids) > 5 else "")
        say(f"note: ids held by more than one row were compared as groups: {shown}")
    text = json_text(diff.to_json(), ensure_ascii=False) if args.json else format_text(name, diff)
    write_stdout(text + "\n")
    return 0
