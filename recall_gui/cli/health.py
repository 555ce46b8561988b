"""``recall-gui health``: a knowledge base's health report (exit 1 when it lists a kind --fail-on names)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, location, registry_option, report_error, write_stdout
from recall_gui.cli.databases import chosen_database, database_options, refuse_unclear
from recall_gui.core.base import InvalidInputError, json_text, plural

if TYPE_CHECKING:
    from recall_gui.core.search import HealthReport

NAME = "health"
#: What fails the command unless ``--fail-on`` says otherwise: what makes a search fail or miss rows.
DEFAULT_FAIL_ON = ("vectors", "model")
#: Ids shown per list in the plain output (--json lists them all).
SHOWN_IDS = 10


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="a knowledge base's health: fragments, indexes, bad vectors, empty and duplicated contents",
        description="Report what LanceDB's statistics say (rows, versions, fragments, indexes and the rows "
        "they do not cover) and what one streamed scan finds (vectors missing, of zero length, not finite, "
        "too short or too long for float32's arithmetic; empty contents; contents that are exactly the "
        "same; rows longer than the model reads, and the share of the text past its limit). Exit status "
        "1 when it lists a kind --fail-on names, else 0. Nothing is written: an optimize or a re-index is "
        "only advised.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--fail-on",
        metavar="KINDS",
        default=",".join(DEFAULT_FAIL_ON),
        help="what makes the exit status 1, comma-separated: vectors (missing, of zero length, not "
        "finite, too short or too long for float32), model (the model or the vectors' width: searches "
        "fail), empty (contents), duplicates (the same content), advice (index coverage, small "
        "fragments, a legacy full-text index), unread (rows longer than the model reads), all, none "
        f"(default: {','.join(DEFAULT_FAIL_ON)})",
    )
    parser.set_defaults(run=run)


async def _report(args: argparse.Namespace) -> HealthReport:
    harness = core.search.Harness(location(args).directory)
    try:
        entry = await chosen_database(harness.session, args, harness.registry)

        def progress(read: int, rows: int) -> None:
            if sys.stderr.isatty():
                print(f"\rscanned {read} of {rows} rows", end="", file=sys.stderr, flush=True)

        return await core.search.health_report(harness.session, entry, progress)
    finally:
        await harness.aclose()


def _ids(ids: list[str]) -> str:
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def fail_kinds(text: str) -> frozenset[str]:
    """The kinds ``--fail-on`` names; refuses one it does not know."""
    kinds = core.search.HEALTH_KINDS
    words = {word.strip() for word in text.split(",") if word.strip()}
    unknown = sorted(words - {*kinds, "all", "none"})
    if unknown or not words or ("none" in words and len(words) > 1):
        raise InvalidInputError(
            f"--fail-on {text!r} is not a list of kinds"
            + (f" ({', '.join(unknown)} unknown)" if unknown else ""),
            hint=f"Name some of {', '.join(kinds)}, or all, or none, separated by commas.",
        )
    return frozenset(kinds) if "all" in words else frozenset(words - {"none"})


def format_report(report: HealthReport, failing: frozenset[str]) -> str:
    lines = [
        f"{plural(report.rows, 'row')}, {plural(report.versions, 'version')}, "
        f"{plural(report.fragments, 'fragment')} ({report.small_fragments:,} small), "
        f"vectors of width {report.width}"
    ]
    for index in report.indices:
        covered = "" if index.unindexed_rows is None else f", {index.unindexed_rows} rows not covered"
        lines.append(f"index {index.name} ({index.type} on {', '.join(index.columns)}){covered}")
    for label, ids in (
        ("vectors missing", report.missing),
        ("vectors of zero length", report.zero_norm),
        ("vectors not finite", report.not_finite),
        ("vectors too short for float32", report.too_short),
        ("vectors too long for float32", report.too_long),
        ("empty contents", report.empty),
    ):
        if ids:
            lines.append(f"{label} ({len(ids)}): {_ids(ids)}")
    for group in report.duplicate_groups:
        lines.append(f"the same content ({len(group)}): {_ids(group)}")
    said = report.repeats.sentence()
    if said is not None:
        lines.append(said)
    lines.append(report.reading_text)
    lines.extend(f"warning: {warning}" for warning in report.warnings)
    listed = report.listed_kinds()
    if not listed:
        lines.append("healthy")
    elif listed & failing:
        lines.append(f"something is listed above ({', '.join(sorted(listed & failing))}: fails)")
    else:
        lines.append(
            f"something is listed above ({', '.join(sorted(listed))}: --fail-on does not fail on it)"
        )
    return escaped_lines(lines)  # ids, index and column names come from the table


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    try:
        failing = fail_kinds(args.fail_on)  # before the scan: a typo costs nothing
    except InvalidInputError as error:  # a usage error, not an unhealthy table: status 2
        report_error(error.message, error.hint)
        return 2
    report = asyncio.run(_report(args))
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        write_stdout(json_text(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(format_report(report, failing) + "\n")
    return 1 if report.listed_kinds() & failing else 0
