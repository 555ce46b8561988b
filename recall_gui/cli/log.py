"""``recall-gui log``: the calls agents made to ``recall-gui mcp``, and a database's coverage by them."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import chosen_registry, location, registry_option, write_stdout
from recall_gui.core.agent_log import (
    SWITCH_ENV,
    CallRecord,
    LogFiles,
    LogSwitch,
    parse_since,
    records_json,
    select,
)
from recall_gui.core.base import DatabaseNotFoundError, InvalidInputError, SettingsStore, json_text, printable
from recall_gui.core.registry import load_registry

if TYPE_CHECKING:
    from recall_gui.core.agent_log import Coverage

NAME = "log"

#: How much of a query one line of the listing quotes.
QUERY_CHARS = 80
#: Records printed at a time.
PRINT_BATCH = 1000


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="the calls agents made to recall-gui mcp, and which entries they reached",
        description="Print the calls recorded by `recall-gui mcp` (oldest first): time, client, database, "
        "query, result count and milliseconds, or with --json one object per call as stored. With "
        "--coverage, how many entries of a database the calls returned at least once, and those never "
        "returned.",
    )
    registry_option(parser, help="registry to find the --coverage database in (default as for search)")
    parser.add_argument("--db", metavar="NAME", help="only calls to this database (needed by --coverage)")
    parser.add_argument(
        "--since",
        metavar="ISO",
        help="only calls from this ISO 8601 date or time on (2025-06-01, 2025-06-01T14:30; local time "
        "unless it carries an offset)",
    )
    parser.add_argument(
        "--coverage", action="store_true", help="entries of --db returned at least once, and those never"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(run=run)


def _line(record: CallRecord) -> str:
    """One call in a line, what the agent chose (client, database, error) with control characters escaped."""
    return printable(_unescaped_line(record))


def _unescaped_line(record: CallRecord) -> str:
    when = record.when.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    query = record.query
    shown = (
        json.dumps(query if len(query) <= QUERY_CHARS else query[: QUERY_CHARS - 1] + "…") if query else "-"
    )
    head = f"{when}  {record.client_label}  {record.db_name or '-'}  {shown}"
    if record.error is not None:
        return f"{head}  error: {record.error}"
    count = len(record.result_ids)
    timing = f"  {record.total_ms:.1f} ms" if record.total_ms is not None else ""
    return f"{head}  {count} result{'' if count == 1 else 's'}{timing}"


def _lines(records: Iterable[CallRecord]) -> str:
    return "".join(_line(record) + "\n" for record in records)


def _print_records(records: Iterable[CallRecord], text_of: Callable[[list[CallRecord]], str]) -> int:
    """Print the records a batch at a time as they are read (a log of a gigabyte is never held whole);
    how many were printed."""
    printed = 0
    iterator = iter(records)
    while batch := list(itertools.islice(iterator, PRINT_BATCH)):
        write_stdout(text_of(batch))
        printed += len(batch)
    return printed


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        print(f"note: {printable(note)}", file=sys.stderr)


def _say_if_off() -> None:
    switch = LogSwitch.from_environment(SettingsStore())
    if not switch.env_on:
        print(f"note: recording is off here ({SWITCH_ENV} is off)", file=sys.stderr)
    elif switch.recording() is None:
        print(f"note: recording is switched off in {switch.store.path}", file=sys.stderr)


async def _coverage(args: argparse.Namespace, records: Iterable[CallRecord]) -> Coverage:
    where = location(args)
    registry = load_registry(where.directory)
    entry = registry.get(args.db)
    if entry is None:
        names = ", ".join(db.name for db in registry.databases) or "none"
        raise DatabaseNotFoundError(
            f"Database '{args.db}' is not in the registry {where.directory} (databases there: {names})",
            hint="Name a database of that registry, or choose another with --registry.",
        )
    async with core.session.Session() as session:
        return await core.agent_log.coverage(session, entry, records)


def run(args: argparse.Namespace) -> int:
    since = parse_since(args.since) if args.since is not None else None
    if args.coverage and not args.db:
        raise InvalidInputError(
            "--coverage needs --db NAME", hint="Name the database whose coverage to show."
        )
    if not args.coverage and chosen_registry(args) is not None:
        raise InvalidInputError(
            "--registry is used only with --coverage",
            hint="The log lists calls to every registry; filter them with --db NAME.",
        )
    files = LogFiles()
    notes: list[str] = []
    records = select(files.records(notes), db_name=args.db, since=since)
    if args.coverage:
        found = asyncio.run(_coverage(args, records))
        _print_notes(notes)
        if args.json:
            write_stdout(json_text(found.to_dict(), ensure_ascii=False) + "\n")
        else:
            calls = f"{found.calls} call{'' if found.calls == 1 else 's'}"
            lines = [
                f"{found.db_name}: {found.returned} of {found.entries} entries returned at least once "
                f"by {calls}; {len(found.never_returned)} never returned"
                + (":" if found.never_returned else ""),
                *found.never_returned,
            ]
            said = found.repeats.sentence()
            if said is not None:
                lines.insert(1, f"note: {said}")
            write_stdout("\n".join(lines) + "\n")
        return 0
    printed = _print_records(records, records_json if args.json else _lines)
    _print_notes(notes)
    if not printed and not args.json:
        which = "match" if args.db or since else "are recorded"
        print(f"no calls {which} in {files.current}", file=sys.stderr)
    _say_if_off()
    return 0
