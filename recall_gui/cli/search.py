"""``recall-gui search``: exactly the JSON an agent gets for ``{db_name, query, limit}``."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from typing import TYPE_CHECKING, Any

from recall_gui.cli.common import location, registry_option, write_stdout
from recall_gui.core.errors import InvalidInputError, RecallError
from recall_gui.core.paths import RegistryLocation
from recall_gui.core.registry import load_registry
from recall_gui.core.types import DEFAULT_LIMIT

if TYPE_CHECKING:
    from recall_gui.core.harness import Harness, SearchReport


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        "search",
        help="run recall_search and print the JSON an agent gets",
        description="Search an active database exactly as an agent's recall_search call does, and print "
        "the JSON the agent would get.",
    )
    registry_option(parser)
    parser.add_argument("--db", required=True, metavar="NAME", help="name of an active database")
    parser.add_argument(
        "--limit",
        default=str(DEFAULT_LIMIT),
        metavar="N",
        help="maximum number of results (a non-negative integer; anything else means 5, as in cosh)",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="also say on stderr how the search ran (method, times, notes)"
    )
    parser.add_argument(
        "--where",
        metavar="EXPR",
        help="search only the rows this LanceDB SQL filter keeps, e.g. \"source = 'a.md' AND page < 3\" "
        "(the agent's search has none)",
    )
    parser.add_argument("query", help="the search text")
    parser.set_defaults(run=run)


def limit_from_text(text: str) -> int:
    """cosh's rule on the command line: a non-negative integer (below 2**64) is used, anything else means 5
    (with a warning, since a person typed it)."""
    from recall_gui.core.harness import parse_limit

    if re.fullmatch(r"\s*\+?[0-9]{1,30}\s*", text):
        value = int(text)
        if parse_limit(value) == value:
            return value
    print(f"warning: --limit {text!r} is not a non-negative integer; using {DEFAULT_LIMIT}", file=sys.stderr)
    return DEFAULT_LIMIT


def _demo_hint(where: RegistryLocation) -> str | None:
    if where.is_app_registry and not load_registry(where.directory).databases:
        return "No knowledge base is registered yet: run `recall-gui demo` to build the demo."
    return None


async def _search(args: argparse.Namespace) -> str:
    from recall_gui.core.harness import Harness

    where = location(args)
    harness = Harness(where.directory)
    try:
        arguments = {"db_name": args.db, "query": args.query, "limit": limit_from_text(args.limit)}
        if args.where is None:
            report = await harness.run(arguments)
        else:
            report = await _filtered(harness, arguments, args.where)
    except RecallError as error:
        hint = _demo_hint(where)
        if hint and not error.hint:
            error.hint = hint
        raise
    finally:
        await harness.aclose()
    if args.verbose:
        result = report.result
        print(
            f"{report.database.name}: {len(result.hits)} results by {result.method_label}, "
            f"{report.embed_ms:.1f} ms embedding ({report.model_used}), {result.search_ms:.1f} ms search",
            file=sys.stderr,
        )
        if result.note:
            print(f"note: {result.note}", file=sys.stderr)
    return report.to_json()


async def _filtered(harness: Harness, arguments: dict[str, Any], where: str) -> SearchReport:
    """The agent's search with a pre-filter: the same database, query, limit and output."""
    from recall_gui.core.harness import parse_arguments

    if not where.strip():
        raise InvalidInputError(
            "--where was given an empty filter",
            hint="Give a condition such as \"source = 'a.md'\", or leave --where out.",
        )
    db_name, query, limit = parse_arguments(arguments)
    return await harness.search_database(harness.resolve_active(db_name), query, limit, where=where)


def run(args: argparse.Namespace) -> int:
    write_stdout(asyncio.run(_search(args)) + "\n")
    return 0
