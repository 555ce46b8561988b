"""``recall-gui hubs``: the entries the agent's search returns for many of a set of queries."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, location, registry_option, say, write_stdout
from recall_gui.cli.databases import chosen_database, database_options, refuse_unclear
from recall_gui.cli.model_notes import note_stand_ins, with_model
from recall_gui.core.agent_log import LogFiles, select
from recall_gui.core.base import (
    DEFAULT_LIMIT,
    GOLDEN_MAX_BYTES,
    InvalidInputError,
    is_unicode,
    json_text,
    plural,
    read_regular,
)
from recall_gui.core.golden import parse_golden

if TYPE_CHECKING:
    from recall_gui.core.embedders import ModelInfo
    from recall_gui.core.reach import HubQuery, HubReport

NAME = "hubs"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="find hubs: entries returned for a large share of queries (boilerplate that crowds results)",
        description="Search a knowledge base with a set of queries, exactly as an agent's recall_search "
        "does, and count for each entry the queries it is returned for. The queries come from a golden "
        "file (each check at its own limit), a text file (one query a line) or the agent log (--log).",
    )
    registry_option(parser)
    database_options(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries", metavar="FILE", help="a golden file, or a text file of one query a line")
    source.add_argument("--log", action="store_true", help="the queries agents sent to --db (the agent log)")
    parser.add_argument(
        "--limit", type=int, metavar="K", help="results per query (default: each check's own, else 5)"
    )
    parser.add_argument(
        "--share",
        type=float,
        metavar="S",
        help="name as hubs the entries returned for more than this share of the queries (default 0.25)",
    )
    parser.add_argument("--json", action="store_true", help="print every returned entry as JSON")
    parser.set_defaults(run=run)


def _refuse_bad_options(args: argparse.Namespace) -> None:
    refuse_unclear(args, NAME, registry_used=True)  # --log reads the agent log of the registry's names
    if args.log and args.db is None:
        raise InvalidInputError(
            "--log takes the queries agents sent to a registered database",
            hint="Use --db NAME, or give the queries with --queries FILE.",
        )
    if args.limit is not None and not 1 <= args.limit <= 100:
        raise InvalidInputError(f"--limit must be between 1 and 100, not {args.limit}")
    if args.share is not None and not 0 <= args.share < 1:
        raise InvalidInputError(f"--share must be at least 0 and below 1, not {args.share}")


def queries_from_file(
    path: Path, db_name: str | None, limit: int | None, *, checks_at_their_limits: bool = False
) -> list[HubQuery]:
    """A golden file's checks of ``db_name`` (at ``limit``, or each at its own with
    ``checks_at_their_limits``), or a text file's lines at ``limit``."""
    try:
        text = read_regular(path, GOLDEN_MAX_BYTES).decode("utf-8-sig")
    except OSError as error:
        raise InvalidInputError(f"{path}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise InvalidInputError(f"{path}: cannot be read as UTF-8 text ({error})") from None
    if text.lstrip().startswith("{"):
        checks = parse_golden(text, str(path)).checks
        chosen = [check for check in checks if db_name is None or check.db_name == db_name]
        if checks and not chosen:
            raise InvalidInputError(f"{path} has no check for the database {db_name!r}")
        given = None if checks_at_their_limits else limit
        return [core.reach.HubQuery(check.query, given or check.limit) for check in chosen]
    return [
        core.reach.HubQuery(line.strip(), limit or DEFAULT_LIMIT)
        for line in text.splitlines()
        if line.strip()
    ]


def queries_from_log(db_name: str, limit: int | None) -> list[HubQuery]:
    """The queries agents sent to ``db_name``, as the agent log holds them; calls without a query that
    can be searched (none, not text, blank, or text that is not valid Unicode, which the server refused)
    are skipped, counted and said on stderr."""
    queries = []
    notes: list[str] = []
    no_query = not_text = 0
    for record in select(LogFiles().records(notes), db_name=db_name):
        arguments = record.arguments if isinstance(record.arguments, dict) else {}
        query, asked = arguments.get("query"), arguments.get("limit")
        if not isinstance(query, str) or not query.strip():
            no_query += 1
        elif not is_unicode(query):
            not_text += 1
        else:
            own = (
                asked
                if isinstance(asked, int) and not isinstance(asked, bool) and 1 <= asked <= 100
                else None
            )
            queries.append(core.reach.HubQuery(query, limit or own or DEFAULT_LIMIT))
    if no_query:
        notes.append(f"{plural(no_query, 'logged call')} to {db_name} without a query to search: skipped")
    if not_text:
        notes.append(
            f"{plural(not_text, 'logged call')} to {db_name} whose query is not valid text (it holds an "
            "unpaired surrogate; the server refused it): skipped"
        )
    for note in notes:
        say(f"note: {note}")
    return queries


async def _hubs(args: argparse.Namespace, queries: list[HubQuery]) -> tuple[HubReport, ModelInfo | None]:
    harness = core.search.Harness(location(args).directory)
    try:
        entry = await chosen_database(harness.session, args, harness.registry)
        report = await core.reach.find_hubs(harness, entry, queries)
        return report, core.search.model_of(harness, entry)
    finally:
        await harness.aclose()


def format_report(report: HubReport, share: float) -> str:
    hubs = report.hubs(share)
    limit = f"limit {report.limit}" if report.limit is not None else "each check's own limit"
    lines = [f"{report.queries} queries searched as the agent searches ({limit})"]
    if not hubs:
        lines.append(f"no hubs: no entry is returned for more than {share:.0%} of the queries")
    for hub in hubs:
        lines.append(
            f"hub  {hub.named}: returned for {hub.returned_for} of {report.queries} ({hub.share:.0%})"
        )
    said = report.repeats.sentence()
    if said is not None:
        lines.append(f"note: {said}")
    return escaped_lines(lines)  # the ids come from the table


def run(args: argparse.Namespace) -> int:
    _refuse_bad_options(args)
    if args.log:
        queries = queries_from_log(args.db, args.limit)
    else:
        queries = queries_from_file(Path(args.queries), args.db, args.limit)
    if not queries:
        raise InvalidInputError("there are no queries to search", hint="Give a file with at least one query.")
    report, model = asyncio.run(_hubs(args, queries))
    note_stand_ins([model])
    if args.json:
        write_stdout(json_text(with_model(report.to_dict(), model), indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(
            format_report(report, core.reach.DEFAULT_HUB_SHARE if args.share is None else args.share) + "\n"
        )
    return 0
