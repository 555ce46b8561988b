"""``recall-gui rank``: would the agent see this entry for this query? Its rank, distance and the cut."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from recall_gui import core
from recall_gui.cli.common import location, registry_option, report_error, write_stdout
from recall_gui.cli.databases import entry_named, entry_options, refuse_unclear
from recall_gui.cli.model_notes import note_stand_ins, with_model
from recall_gui.cli.search import limit_from_text
from recall_gui.core.base import RecallError, json_text
from recall_gui.core.golden import refuse_bad_version
from recall_gui.core.search import ViewScope

NAME = "rank"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="where one entry ranks for a query, and how far it is from the agent's results",
        description="Search a database for a query as an agent does and say whether one entry is among "
        "the results: its rank among all rows, its distance, the distance of the last result (the "
        "limit's cut-off) and the margin between them (negative: how much nearer it must come). Prints "
        "JSON. Any registered database can be inspected, or a table of a folder (--path; --registry "
        "then says which agents to ask about); an agent only searches the active ones "
        '("agent_searches"). The answer is always the agent\'s: the latest version, no filter. With '
        '--where or --version, "view" holds the rank in that narrower search and "differences" says '
        "how it differs from the agent's.",
    )
    registry_option(parser)
    entry_options(parser, "the agent's limit (default 5)")
    parser.add_argument(
        "--where",
        metavar="EXPR",
        help="also rank the entry among the rows this LanceDB SQL filter keeps (the agent's search has none)",
    )
    parser.add_argument(
        "--version",
        type=int,
        metavar="V",
        help="also rank the entry in this older version of the table (the agent searches the latest)",
    )
    parser.add_argument("query", help="the search text")
    parser.set_defaults(run=run)


async def _rank(args: argparse.Namespace) -> dict[str, Any]:
    from recall_gui.cli.search import where_from_option

    harness = core.search.Harness(location(args).directory)
    try:
        limit = limit_from_text(args.limit)
        where = where_from_option(args.where)
        entry, found = await entry_named(harness, args, "ranking", args.version)
        view = ViewScope(entry, args.version, where, limit=limit)
        row_id = found.hit.row_id if found.hit.row_id is not None else 0
        verdict = await core.search.would_agent_see(
            harness,
            view,
            args.query,
            row_id,
            entry_id=found.hit.id,
            content_sha256=found.sha256 if found.sharing_id > 1 else None,
        )
        model = core.search.model_of(harness, verdict.scope.entry)
        note_stand_ins([model])
        return with_model({"active": verdict.scope.entry.active, **verdict.to_dict()}, model)
    finally:
        await harness.aclose()


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME, registry_used=True)
    try:
        refuse_bad_version("--version", args.version)
    except RecallError as error:  # a value no table can have: a usage error, status 2 (as argparse's)
        report_error(error.message, error.hint)
        return 2
    write_stdout(json_text(asyncio.run(_rank(args)), ensure_ascii=False, indent=2) + "\n")
    return 0
