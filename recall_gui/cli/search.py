"""``recall-gui search``: exactly the JSON an agent gets for ``{db_name, query, limit}``."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import chosen_registry, location, registry_option, report_error, say, write_stdout
from recall_gui.cli.folder_options import add_path_options, path_storage, refuse_without_path
from recall_gui.cli.model_notes import note_stand_ins
from recall_gui.core.base import DEFAULT_LIMIT, InvalidInputError, RecallError, printable
from recall_gui.core.registry import location_problem

if TYPE_CHECKING:
    from recall_gui.core.search import Harness, SearchReport
    from recall_gui.core.storage import TableTarget


NAME = "search"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="run recall_search and print the JSON an agent gets",
        description="Search an active database exactly as an agent's recall_search call does, and print "
        "the JSON the agent would get.",
    )
    registry_option(parser)
    parser.add_argument("--db", metavar="NAME", help="name of an active database")
    add_path_options(parser)
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
    method = parser.add_mutually_exclusive_group()
    method.add_argument(
        "--fts",
        action="store_true",
        help="search by words through the table's full-text index (BM25), not as the agent does",
    )
    method.add_argument(
        "--hybrid",
        action="store_true",
        help="vector and full-text search fused by LanceDB's RRF reranker, not as the agent does",
    )
    parser.add_argument("query", help="the search text")
    parser.set_defaults(run=run)


def limit_from_text(text: str) -> int:
    """cosh's rule on the command line: a non-negative integer (below 2**64) is used, anything else means 5
    (with a warning, since a person typed it)."""
    if re.fullmatch(r"\s*\+?[0-9]{1,30}\s*", text):
        value = int(text)
        if core.search.parse_limit(value) == value:
            return value
    shown = f"'{text}'" if len(text) <= 40 else f"'{text[:20]}'… ({len(text):,} characters)"
    say(f"warning: --limit {shown} is not an integer from 0 to 2**64 - 1; using {DEFAULT_LIMIT}")
    return DEFAULT_LIMIT


def _refuse_mixed(args: argparse.Namespace) -> None:
    if args.db is not None and args.path is not None:
        raise InvalidInputError(
            "--db and --path were both given",
            hint="Search a registered database (--db) or a folder (--path).",
        )
    if args.db is None and args.path is None:
        raise InvalidInputError(
            "no database given",
            hint="Name an active database with --db NAME, or a LanceDB folder with --path PATH.",
        )
    refuse_without_path(args)
    if args.path is not None and chosen_registry(args) is not None:
        raise InvalidInputError(
            "--registry has no use with --path: a folder is searched without the registry",
            hint="Leave --registry out, or search a registered database with --db.",
        )


async def _search_folder(
    harness: Harness, args: argparse.Namespace, arguments: dict[str, Any]
) -> SearchReport:
    """The agent's search on a table of an unregistered folder (the same pipeline, the same JSON)."""
    _db, query, limit = core.search.parse_arguments({**arguments, "db_name": ""})
    opened = await core.tables.open_table(
        harness.session, args.path, table=args.table, model=args.model, storage_options=path_storage(args)
    )
    if args.verbose:
        entry = opened.entry
        print(printable(f"model: {entry.embedder.label}, {entry.model_reason}"), file=sys.stderr)
    return await harness.search_database(
        opened.entry, query, limit, where=where_from_option(args.where), columns=core.search.AGENT_COLUMNS
    )


async def _search(args: argparse.Namespace) -> str:
    where = location(args)
    wrong_folder = location_problem(where) if args.path is None else None
    if wrong_folder is not None:
        raise wrong_folder
    session = core.session.Session(keep_vectors=False)  # one search: no vectors read into memory for the next
    if args.where is not None:
        session.filters.warm()  # the filter's worker starts while LanceDB and the model load here
    harness = core.search.Harness(where.directory, session=session)
    try:
        arguments = {"db_name": args.db, "query": args.query, "limit": limit_from_text(args.limit)}
        if args.fts or args.hybrid:
            return await _text_search(harness, args, arguments)
        if args.path is not None:
            report = await _search_folder(harness, args, arguments)
        elif args.where is None:
            report = await harness.run(arguments)
        else:
            report = await _filtered(harness, arguments, args.where)
        if not report.result.hits:
            await _say_why_empty(harness, report.database.target, args.where, arguments["limit"])
        entries = [(hit.id, hit.content) for hit in report.result.hits]
        await say_repeats(harness, report.database.target, entries)
    finally:
        await harness.aclose()
        await session.aclose()
    note = report.model.note() if report.model is not None else None
    if note is not None:  # said even without --verbose: the results may not be the agent's
        report_error(note, level="note")
    if args.verbose:
        result = report.result
        said = (
            f"{report.database.name}: {len(result.hits)} results by {result.method_label}, "
            f"{report.embed_ms:.1f} ms embedding ({report.model_used}), {result.search_ms:.1f} ms search"
        )
        print(printable(said), file=sys.stderr)
        if result.note:
            report_error(result.note, level="note")
    return report.to_json()


async def _text_search(harness: Harness, args: argparse.Namespace, arguments: dict[str, Any]) -> str:
    """Full-text or hybrid search: the same JSON shape as the agent's, from LanceDB's own ranking."""
    db_name, query, limit = core.search.parse_arguments({**arguments, "db_name": arguments["db_name"] or ""})
    if args.path is not None:
        opened = await core.tables.open_table(
            harness.session, args.path, table=args.table, model=args.model, storage_options=path_storage(args)
        )
        entry = opened.entry
    else:
        entry = harness.resolve_active(db_name)
    found = await core.search.text_search(
        harness, entry, query, limit, "fts" if args.fts else "hybrid", where=where_from_option(args.where)
    )
    if not found.output.results:
        await _say_why_empty(harness, entry.target, args.where, limit)
    await say_repeats(harness, entry.target, [(r.id, r.content) for r in found.output.results])
    note_stand_ins([found.model])  # hybrid embeds the query as the agent's search does; full-text does not
    if args.verbose:
        how = "full-text (BM25)" if args.fts else "hybrid (vector and full-text, RRF)"
        said = f"{entry.name}: {len(found.output.results)} results by {how}, not the agent's search"
        print(printable(said), file=sys.stderr)
    return found.output.to_json()


async def say_repeats(harness: Harness, target: TableTarget, results: list[tuple[str, str]]) -> None:
    """Where ids repeat in the table, say so on stderr, and name each result by its content (stdout
    stays the agent's JSON, which names them by id only)."""
    try:
        repeats = await harness.session.tables.id_repeats(target)
    except RecallError:  # the search succeeded: not knowing its ids' counts is no failure
        return
    said = repeats.sentence()
    if said is None:
        return
    report_error(said, level="note")
    for rank, (entry_id, content) in enumerate(results, start=1):
        say(f"  {rank}. {repeats.name(entry_id, content)}")


async def _say_why_empty(harness: Harness, target: TableTarget, where: str | None, limit: int) -> None:
    """An empty answer says why on stderr (a limit of 0, no row kept by the filter, an empty table);
    stdout stays the agent's JSON."""
    try:
        why = await core.tables.why_empty(harness.session, target, where, limit)
    except RecallError:  # the search succeeded: not knowing why it found nothing is no failure
        why = "No results."
    report_error(why, level="note")  # the filter and the table's name escaped, a password masked


async def _filtered(harness: Harness, arguments: dict[str, Any], where: str) -> SearchReport:
    """The agent's search with a pre-filter: the same database, query, limit and output."""
    db_name, query, limit = core.search.parse_arguments(arguments)
    return await harness.search_database(
        harness.resolve_active(db_name),
        query,
        limit,
        where=where_from_option(where),
        columns=core.search.AGENT_COLUMNS,
    )


def where_from_option(where: str | None) -> str | None:
    """The ``--where`` filter, refused when it is empty (an option typed is honoured or refused)."""
    if where is not None and not where.strip():
        raise InvalidInputError(
            "--where was given an empty filter",
            hint="Give a condition such as \"source = 'a.md'\", or leave --where out.",
        )
    return where


def run(args: argparse.Namespace) -> int:
    _refuse_mixed(args)
    write_stdout(asyncio.run(_search(args)) + "\n")
    return 0
