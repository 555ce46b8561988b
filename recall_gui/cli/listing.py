"""``recall-gui list``: every database with its health."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from recall_gui.cli.common import location, registry_option, warn_problems, warn_suffix, write_stdout
from recall_gui.core.paths import RegistryLocation
from recall_gui.core.registry import load_registry


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "list",
        help="list every database with its health",
        description="List every database of the registry with its table, model, size and health "
        "(folder, table, model, dimension).",
    )
    registry_option(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)


async def list_rows(where: RegistryLocation) -> list[dict[str, Any]]:
    from recall_gui.core.health import CHECKS, check_health
    from recall_gui.core.session import Session

    registry = load_registry(where.directory)
    async with Session() as session:
        healths = await asyncio.gather(*(check_health(session, entry) for entry in registry.databases))
    rows = []
    for health in healths:
        entry, info = health.entry, health.info
        rows.append(
            {
                "name": entry.name,
                "active": entry.active,
                "uri": entry.uri,
                "table": entry.table_name,
                "embedder": entry.embedder.label,
                "dimension": info.columns.vector_dim if info else entry.embedder.dim,
                "rows": info.row_count if info else None,
                "health": {check: health.status(check) for check in CHECKS},
                "problems": [p.message for p in health.problems],
            }
        )
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no databases registered)"
    headers = ["NAME", "ACTIVE", "URI", "TABLE", "EMBEDDER", "DIM", "ROWS", "HEALTH"]
    lines = []
    for row in rows:
        failed = [check for check, state in row["health"].items() if state == "failed"]
        lines.append(
            [
                row["name"],
                "yes" if row["active"] else "no",
                row["uri"],
                row["table"],
                row["embedder"],
                "?" if row["dimension"] is None else str(row["dimension"]),
                "?" if row["rows"] is None else str(row["rows"]),
                "ok" if not row["problems"] else "FAILED " + ",".join(failed or ["storage"]),
            ]
        )
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(headers)]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    for row in rows:
        out += [f"{row['name']}: {problem}" for problem in row["problems"]]
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    where = location(args)
    warn_problems(where)
    warn_suffix(where)
    rows = asyncio.run(list_rows(where))
    write_stdout((json.dumps(rows, indent=2, ensure_ascii=False) if args.json else format_table(rows)) + "\n")
    return 0
