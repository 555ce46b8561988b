"""``recall-gui list``: every database with its health."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import (
    chosen_registry,
    location,
    registry_option,
    report_error,
    warn_problems,
    warn_suffix,
    write_stdout,
)
from recall_gui.cli.folder_options import add_path_options, path_storage, refuse_without_path
from recall_gui.core.base import InvalidInputError, json_text, masked, printable
from recall_gui.core.registry import (
    DatabaseEntry,
    Registry,
    empty_registry_hint,
    load_registry,
    location_problem,
)

if TYPE_CHECKING:
    from recall_gui.core.search import DatabaseHealth


NAME = "list"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="list every database with its health",
        description="List every database of the registry with its table, model, size and health "
        "(folder, table, columns, search, model, dimension). Exits with 1 when the registry has problems "
        "or an active database cannot be searched.",
    )
    registry_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_path_options(parser, table_and_model=False)
    parser.set_defaults(run=run)


async def list_rows(registry: Registry) -> list[dict[str, Any]]:
    async with core.session.Session() as session:
        healths = await asyncio.gather(
            *(core.search.check_health(session, entry) for entry in registry.databases)
        )
    return rows_of(healths)


def rows_of(healths: Sequence[DatabaseHealth]) -> list[dict[str, Any]]:
    rows = []
    for health in healths:
        entry, info = health.entry, health.info
        rows.append(
            {
                "name": entry.name,
                "active": entry.active,
                "uri": masked(entry.uri),
                "table": entry.table_name,
                "embedder": entry.embedder.label,
                "dimension": info.columns.vector_dim if info else entry.embedder.dim,
                "rows": info.row_count if info else None,
                "health": {check: health.status(check) for check in core.search.CHECKS},
                "failed": list(dict.fromkeys(p.kind for p in health.problems)),
                "problems": [masked(p.message) for p in health.problems],
            }
        )
    return rows


def format_table(rows: list[dict[str, Any]], empty: str) -> str:
    """The rows as a table, or ``empty`` when there are none."""
    if not rows:
        return empty
    headers = ["NAME", "ACTIVE", "URI", "TABLE", "EMBEDDER", "DIM", "ROWS", "HEALTH"]
    lines = []
    for row in rows:
        cells = [
            row["name"],
            "yes" if row["active"] else "no",
            row["uri"],
            row["table"],
            row["embedder"],
            "?" if row["dimension"] is None else str(row["dimension"]),
            "?" if row["rows"] is None else str(row["rows"]),
            "ok" if not row["problems"] else "FAILED " + ",".join(row["failed"]),
        ]
        lines.append([printable(cell) for cell in cells])
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    for row in rows:
        out += [printable(f"{row['name']}: {problem}") for problem in row["problems"]]
    return "\n".join(out)


async def folder_rows(path: str, storage: dict[str, str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every table of an unregistered folder, in the rows' shape, and how each one's model was chosen."""
    async with core.session.Session() as session:
        folder = await core.tables.read_folder(session, core.tables.place_of(path, storage))
        healths: list[core.search.DatabaseHealth] = []
        for table in folder.tables:
            if table.columns is None:  # listed with what is wrong, like a registered table
                entry = DatabaseEntry(table.name, folder.place.uri, "", core.tables.NO_MODEL, origin="opened")
                problem = core.search.HealthProblem(
                    table.problem_kind, table.problem or "the table cannot be read", table.problem_hint
                )
                healths.append(core.search.DatabaseHealth(entry, None, (problem,)))
            else:
                healths.append(
                    await core.search.check_health(session, core.tables.opened_entry(folder, table))
                )
    notes = [
        f"{h.entry.name}: {h.entry.embedder.label}, {h.entry.model_reason}"
        for h in healths
        if h.entry.model_reason and h.entry.embedder.kind != "unknown"  # else a problem line says why
    ]
    return rows_of(healths), notes


def unusable_active(rows: list[dict[str, Any]]) -> str | None:
    """Which active databases cannot be searched, and why in short; ``None`` if every one can."""
    broken = _unusable(row for row in rows if row["active"])
    if not broken:
        return None
    databases = "database" if len(broken) == 1 else "databases"
    return f"{len(broken)} active {databases} cannot be searched by agents: {', '.join(broken)}"


def unusable_tables(rows: list[dict[str, Any]], path: str) -> str | None:
    """Which tables of a folder the user named cannot be searched; ``None`` if every one can."""
    broken = _unusable(rows)
    if not broken:
        return None
    tables = "table" if len(broken) == 1 else "tables"
    return f"{len(broken)} {tables} in {path} cannot be searched: {', '.join(broken)}"


def _unusable(rows: Iterable[dict[str, Any]]) -> list[str]:
    return [f"{row['name']} ({', '.join(row['failed'])})" for row in rows if row["problems"]]


def run(args: argparse.Namespace) -> int:
    refuse_without_path(args)
    if args.path is not None:
        if chosen_registry(args) is not None:
            raise InvalidInputError(
                "--registry has no use with --path: a folder is listed without the registry",
                hint="Leave --registry out, or list the registry's databases without --path.",
            )
        rows, notes = asyncio.run(folder_rows(args.path, path_storage(args)))
        listing = format_table(rows, f"(no tables in {args.path})")
        text = json_text(rows, indent=2, ensure_ascii=False) if args.json else listing
        if not args.json and notes:
            text += "\n" + "\n".join(printable(note) for note in notes)
        write_stdout(text + "\n")
        broken = unusable_tables(rows, args.path)
        if broken is not None:
            report_error(broken, "What failed is listed with each table.")
        return 1 if broken else 0
    where = location(args)
    wrong_folder = location_problem(where)
    if wrong_folder is not None:
        raise wrong_folder
    registry = load_registry(where.directory)
    registry_broken = warn_problems(where, registry, level="error")
    warn_suffix(where)
    rows = asyncio.run(list_rows(registry))
    listing = format_table(rows, f"(no databases registered in {registry.directory})")
    write_stdout((json_text(rows, indent=2, ensure_ascii=False) if args.json else listing) + "\n")
    if not rows and not registry_broken:
        print(f"hint: {empty_registry_hint(registry.directory)}", file=sys.stderr)
    broken = unusable_active(rows)
    if broken is not None:
        report_error(
            broken, "What failed is listed with each database: fix it, then run `recall-gui list` again."
        )
    return 1 if registry_broken or broken else 0
