"""The `recall-gui` command: no arguments opens the window; sub-commands work headless.

Expected failures print the message (and what to do) on stderr and exit 1, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recall_gui import __version__
from recall_gui.core.errors import RecallError
from recall_gui.core.paths import REGISTRY_ENV, RegistryLocation, app_registry_dir, resolve_registry_dir
from recall_gui.core.registry import load_registry
from recall_gui.core.suffix import SuffixWarning, served_tool
from recall_gui.core.suffix_store import SuffixStore
from recall_gui.core.types import DEFAULT_LIMIT


def _registry_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        metavar="DIR",
        help=f"registry directory (default: ${REGISTRY_ENV}, else cosh's, else the app's own)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recall-gui",
        description="Browse, search and verify the LanceDB knowledge bases your agents recall from. "
        "Without a command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"recall-gui {__version__}")
    _registry_option(parser)
    # For packagers and CI: open the window, check that it works (shown, started, takes typed input,
    # searches, lists the tool through its MCP server), then quit with 0 or 1. See recall_gui/qt/smoke.py.
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    search = commands.add_parser("search", help="run recall_search and print the JSON an agent gets")
    _registry_option(search)
    search.add_argument("--db", required=True, metavar="NAME", help="name of an active database")
    search.add_argument(
        "--limit",
        default=str(DEFAULT_LIMIT),
        metavar="N",
        help="maximum number of results (a non-negative integer; anything else means 5, as in cosh)",
    )
    search.add_argument("query", help="the search text")

    tool = commands.add_parser("tool", help="print the MCP tool object an agent would get now")
    _registry_option(tool)

    listing = commands.add_parser("list", help="list every database with its health")
    _registry_option(listing)
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")

    demo = commands.add_parser("demo", help="build (or rebuild) the demo knowledge base")
    demo.add_argument(
        "--registry",
        metavar="DIR",
        help="register the demo here instead of in the app's own registry (never in cosh's)",
    )

    mcp = commands.add_parser("mcp", help="serve recall_search to MCP clients over stdio")
    _registry_option(mcp)
    return parser


def _location(args: argparse.Namespace) -> RegistryLocation:
    return resolve_registry_dir(args.registry)


def _warn_problems(location: RegistryLocation) -> None:
    for problem in load_registry(location.directory).problems:
        print(f"warning: {problem}", file=sys.stderr)


def _limit_from_text(text: str) -> int:
    """cosh's rule on the command line: a non-negative integer (below 2**64) is used, anything else means 5
    (with a warning, since a person typed it)."""
    from recall_gui.core.harness import parse_limit

    if re.fullmatch(r"\s*\+?[0-9]{1,30}\s*", text):
        value = int(text)
        if parse_limit(value) == value:
            return value
    print(f"warning: --limit {text!r} is not a non-negative integer; using {DEFAULT_LIMIT}", file=sys.stderr)
    return DEFAULT_LIMIT


def _demo_hint(location: RegistryLocation) -> str | None:
    if location.is_app_registry and not load_registry(location.directory).databases:
        return "No knowledge base is registered yet: run `recall-gui demo` to build the demo."
    return None


async def _search(args: argparse.Namespace) -> str:
    from recall_gui.core.harness import Harness

    location = _location(args)
    harness = Harness(location.directory)
    try:
        arguments: dict[str, Any] = {
            "db_name": args.db,
            "query": args.query,
            "limit": _limit_from_text(args.limit),
        }
        return await harness.recall_search(arguments)
    except RecallError as error:
        hint = _demo_hint(location)
        if hint and not error.hint:
            error.hint = hint
        raise
    finally:
        await harness.aclose()


def _tool(args: argparse.Namespace) -> str:
    served = served_tool(load_registry(_location(args).directory), SuffixStore())
    _warn(served.warnings())
    return served.tool.to_json()


def _warn_suffix(location: RegistryLocation) -> None:
    """What agents are told about the databases, when it is not what the user meant (``list``)."""
    _warn(served_tool(load_registry(location.directory), SuffixStore()).warnings())


def _warn(warnings: Sequence[SuffixWarning]) -> None:
    for warning in warnings:
        print(f"warning: {warning.message}", file=sys.stderr)
        if warning.hint:
            print(f"hint: {warning.hint}", file=sys.stderr)


async def _list_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    from recall_gui.core.health import CHECKS, check_health

    registry = load_registry(_location(args).directory)
    healths = await asyncio.gather(*(check_health(entry) for entry in registry.databases))
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


def _format_table(rows: list[dict[str, Any]]) -> str:
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


def _demo(args: argparse.Namespace) -> str:
    from recall_gui.core.demo import build_demo

    explicit = args.registry or os.environ.get(REGISTRY_ENV, "").strip() or None
    registry_dir = Path(explicit).expanduser() if explicit else app_registry_dir()

    def progress(done: int, total: int) -> None:
        print(f"\rembedding passages: {done}/{total}", end="", file=sys.stderr, flush=True)

    path = build_demo(registry_dir, progress=progress)
    print(file=sys.stderr)
    return f"demo knowledge base: {path}\nregistered in: {registry_dir}"


def _open_window(args: argparse.Namespace) -> int:
    from recall_gui.qt.app import run_app

    return int(run_app(registry_dir=args.registry, smoke=args.smoke))


def _serve_mcp(args: argparse.Namespace) -> int:
    from recall_gui import mcp_server

    location = _location(args)
    _warn_problems(location)
    mcp_server.run(location.directory, source=location.source)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command is None:
            return _open_window(args)
        if args.command == "mcp":
            return _serve_mcp(args)
        if args.command == "search":
            output = asyncio.run(_search(args))
        elif args.command == "tool":
            output = _tool(args)
        elif args.command == "list":
            _warn_problems(_location(args))
            _warn_suffix(_location(args))
            rows = asyncio.run(_list_rows(args))
            output = json.dumps(rows, indent=2, ensure_ascii=False) if args.json else _format_table(rows)
        else:
            output = _demo(args)
    except RecallError as error:
        print(f"error: {error.message}", file=sys.stderr)
        if error.hint:
            print(f"hint: {error.hint}", file=sys.stderr)
        return 1
    except OSError as error:  # a folder that cannot be written (demo), a full disk: no traceback
        print(f"error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    _write_stdout(output + "\n")
    return 0


def _write_stdout(text: str) -> None:
    """The output as UTF-8 whatever the terminal's encoding: agents and scripts read UTF-8 JSON."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
    else:
        buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
