"""``recall-gui reach``: which entries the agent can never return, even asked about exactly what they say;
the exit status says how it went (0 every entry reachable, 1 some not, 2 it could not run)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, location, registry_option, report_error, write_stdout
from recall_gui.cli.databases import chosen_database, database_options, refuse_unclear
from recall_gui.cli.engine import add_engine_options, check_engine_options, engine_for
from recall_gui.cli.hubs import queries_from_file, queries_from_log
from recall_gui.cli.model_notes import note_stand_ins
from recall_gui.core.base import (
    DEFAULT_LIMIT,
    InvalidInputError,
    RecallError,
    json_text,
    method_words,
    printable,
)

if TYPE_CHECKING:
    from recall_gui.core.reach import HubQuery, ReachReport, Unreachable

NAME = "reach"
EXIT_REACHABLE, EXIT_UNREACHABLE, EXIT_UNUSABLE = 0, 1, 2
#: Unreachable entries the text output lists (``--json`` lists every one).
SHOWN = 100


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="find the entries the agent can never return, even asked about exactly what they say",
        description="Ask for every entry with a query made from its own text (its first sentence, or "
        "as --query-from says), embedded with the database's model and searched exactly as an agent's "
        "recall_search searches it (the registered database agents name, its latest version, no "
        "filter, --limit results). Lists each entry its own query does not reach: its place, the entries "
        "that took it and why (a near-copy, a hub, an empty or boilerplate text, a zero or missing "
        "vector); and the retrievability of every entry, hubs, antihubs and the Gini coefficient. Exit "
        "status: 0 when every entry is reachable, 1 when some are not, 2 when it could not run. Nothing "
        "is written.",
        epilog="The JSON fields: docs/REACH.md.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument(
        "--limit", type=int, default=DEFAULT_LIMIT, metavar="K", help="the agent's limit (default 5)"
    )
    parser.add_argument(
        "--depth",
        type=int,
        metavar="N",
        help="how deep an entry's own place is looked for (default 100; at least --limit)",
    )
    parser.add_argument(
        "--query-from",
        metavar="RULE",
        help="what each entry is asked for by: first-sentence (default: a chunk's heading, else its first "
        "sentence), first-line, whole-text, or column:NAME (e.g. column:title, column:metadata.title)",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--queries",
        metavar="FILE",
        help="also count what a golden file's checks (each at its limit) or a text file's lines return",
    )
    source.add_argument(
        "--log", action="store_true", help="also count what the agent log's queries to --db return"
    )
    add_engine_options(parser)
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.set_defaults(run=run)


def _refuse_bad_options(args: argparse.Namespace) -> None:
    refuse_unclear(args, NAME, registry_used=True)  # the registry says which database agents search
    check_engine_options(args)
    if not 1 <= args.limit <= 100:
        raise InvalidInputError(f"--limit must be between 1 and 100, not {args.limit}")
    if args.depth is not None and not args.limit <= args.depth <= 1000:
        raise InvalidInputError(f"--depth must be between --limit ({args.limit}) and 1000, not {args.depth}")
    if args.log and args.db is None:
        raise InvalidInputError(
            "--log takes the queries agents sent to a registered database",
            hint="Use --db NAME, or give the queries with --queries FILE.",
        )


def _given(args: argparse.Namespace, db_name: str) -> list[HubQuery]:
    """The queries to count retrievability by besides the pseudo-queries: a golden file's checks at their
    own limits, a text file's lines at ``--limit``, or the agent log's queries at the limits sent."""
    if args.log:
        return queries_from_log(db_name, None)
    if args.queries is None:
        return []
    return queries_from_file(Path(args.queries), db_name, args.limit, checks_at_their_limits=True)


async def _reach(args: argparse.Namespace) -> ReachReport:
    rule = core.reach.parse_rule(args.query_from)
    harness = core.search.Harness(location(args).directory)
    try:
        entry = await chosen_database(harness.session, args, harness.registry)
        scope = core.search.agent_scope_of(core.search.ViewScope(entry, limit=args.limit), harness.registry)
        if args.model is not None and scope.opened_as_registered:
            raise InvalidInputError(
                f"agents search this folder as the registered database {scope.entry.name}, with its model "
                f"{scope.entry.embedder.label}: --model would not be the agent's",
                hint="Leave --model out.",
            )
        given = _given(args, scope.entry.name)  # a golden file's checks of this database only
        shown = _Shown()
        on_ray: dict[str, Any] = {}
        if args.engine == "ray":  # each part is a Ray job that reads the vectors: fewer, larger parts
            on_ray = {"ranker": core.ray.rank_queries_on_ray, "part": core.ray.RAY_PART_QUERIES}
        return await core.reach.find_reach(
            harness,
            entry,
            limit=args.limit,
            depth=args.depth,
            rule=rule,
            queries=given,
            on_progress=shown.progress,
            on_unreachable=shown.found,
            **on_ray,
        )
    finally:
        await harness.aclose()


class _Shown:
    """What stderr says while the report is made: each entry found out of reach as it is found (the first
    :data:`SHOWN`), and on a terminal the stage on a line of its own, redrawn."""

    def __init__(self) -> None:
        self.terminal = sys.stderr.isatty()
        self.stage = ""
        self.unreachable = 0

    def progress(self, stage: str, done: int, total: int) -> None:
        text = f"{stage}: {done:,} of {total:,}" if total else f"{stage}…"
        if self.unreachable:
            text += f" ({self.unreachable:,} out of reach so far)"
        if text != self.stage:
            self.stage = text
            self._redraw()

    def found(self, items: tuple[Unreachable, ...]) -> None:
        lines = [
            f"out of reach: {item.id} ({_place(item.rank, 0)}) {json.dumps(item.query, ensure_ascii=False)}"
            for item in items[: max(0, SHOWN - self.unreachable)]
        ]
        if self.unreachable < SHOWN <= self.unreachable + len(items):
            lines.append(f"… more are listed with the report ({SHOWN:,} shown as found)")
        self.unreachable += len(items)
        if lines:
            clear = "\r\033[K" if self.terminal else ""
            print(clear + "\n".join(printable(line) for line in lines), file=sys.stderr, flush=True)
            self._redraw()

    def _redraw(self) -> None:
        if self.terminal and self.stage:
            print(f"\r\033[K{self.stage}", end="", file=sys.stderr, flush=True)


def _place(rank: int | None, depth: int) -> str:
    """An entry's place for its own query, in words (``depth``: how deep it was looked for; 0: not said)."""
    if rank is not None:
        return f"rank {rank}"
    return f"not in the first {depth}" if depth else "not within the depth searched"


def format_report(report: ReachReport) -> str:
    share = report.reachable / report.searched if report.searched else 1.0
    lines = [
        f"{report.db_name} (version {report.version}, limit {report.limit}, queries from "
        f"{report.query_from}, {method_words(report.method)}, "
        f"{report.model.used if report.model else 'no model'})",
        f"{report.reachable:,} of {report.searched:,} entries asked for reach the results ({share:.1%}); "
        f"{len(report.unreachable):,} of {report.entries:,} do not",
        f"retrievability: Gini {report.gini:.3f}, {report.antihubs:,} antihubs (returned for no query), "
        f"{len(report.hubs):,} hubs (returned for {report.hub_min:,} queries or more)",
    ]
    if not report.agent_searches:
        lines.insert(1, f"note: no agent searches {report.db_name} now: {report.why_not}")
    if report.note:
        lines.insert(1, f"note: {report.note}")
    for item in report.unreachable[:SHOWN]:
        place = _place(item.rank, report.depth)
        lines.append(f"UNREACHABLE  {item.named}  ({place}) {json.dumps(item.query, ensure_ascii=False)}")
        lines.append(f"       {item.why}")
        if item.taken_by:
            lines.append(f"       taken by: {', '.join(item.taken_by)}")
    if len(report.unreachable) > SHOWN:
        lines.append(f"… and {len(report.unreachable) - SHOWN:,} more: --json lists every one")
    for hub in report.hubs[:SHOWN]:
        lines.append(f"hub  {hub.named}: returned for {hub.returned_for:,} queries")
    said = report.repeats.sentence()
    if said is not None:
        lines.insert(1, f"note: {said}")
    return escaped_lines(lines)  # ids, names and texts come from the table


def run(args: argparse.Namespace) -> int:
    try:
        _refuse_bad_options(args)
        with engine_for(args):
            report = asyncio.run(_reach(args))
    except RecallError as error:  # could not run: the message and what to do, status 2
        report_error(error.message, error.hint)
        return EXIT_UNUSABLE
    finally:
        if sys.stderr.isatty():
            print("\r\033[K", end="", file=sys.stderr, flush=True)
    note_stand_ins([report.model])
    if args.json:
        write_stdout(json_text(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(format_report(report) + "\n")
    return EXIT_REACHABLE if report.all_reachable else EXIT_UNREACHABLE
