"""``recall-gui duplicates``: groups of near-duplicate entries in one database."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import escaped_lines, registry_option, report_error, write_stdout
from recall_gui.cli.databases import database, database_options, refuse_unclear
from recall_gui.cli.engine import add_engine_options, check_engine_options, engine_for
from recall_gui.core.base import InvalidInputError, RecallError, json_text
from recall_gui.core.inspect import DEFAULT_THRESHOLDS, GROUPING_RULE, METRICS
from recall_gui.core.ray import ScaleUnavailableError

if TYPE_CHECKING:
    from recall_gui.core.inspect import DuplicateReport

#: The exit status when the engine asked for cannot be used (its libraries are not installed, its
#: cluster cannot be reached or failed during the job).
EXIT_UNUSABLE = 2
#: How much of each entry's content the text output shows.
PREVIEW_CHARS = 100


NAME = "duplicates"


def add_to(commands: Any) -> None:
    defaults = ", ".join(f"{metric} {value}" for metric, value in DEFAULT_THRESHOLDS.items())
    parser = commands.add_parser(
        NAME,
        help="find groups of near-duplicate entries in a database",
        description="Compare every pair of entries of a database by their stored vectors (exactly, in "
        "memory) and print the groups of entries linked by pairs within the threshold, each with its "
        "widest pair (a chain of close pairs can hold two entries farther apart); an exact copy is a "
        "group. Any registered database can be inspected, active or not, and so can a table of an "
        "unregistered folder (--path). Nothing is written.",
    )
    registry_option(parser)
    database_options(parser)
    parser.add_argument(
        "--threshold",
        metavar="T",
        help=f"the largest distance between near-duplicates (default: {defaults})",
    )
    parser.add_argument(
        "--metric", choices=METRICS, default="cosine", help="distance: cosine (default) or squared l2"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON: threshold, metric, grouping (the rule), left_out (zero vectors not compared by "
        "cosine) and groups (ids, max_distance, widest_pair, chained)",
    )
    add_engine_options(parser)
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="with --engine ray: split the table into N partitions (default: one per 50,000 rows)",
    )
    parser.set_defaults(run=run)


def threshold_from_text(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidInputError(
            f"--threshold {text!r} is not a number", hint="Give a distance such as 0.05."
        ) from None


async def _duplicates(args: argparse.Namespace) -> DuplicateReport:
    threshold = threshold_from_text(args.threshold)
    shown = -1

    def progress(share: float) -> None:
        nonlocal shown
        percent = int(share * 100)
        if sys.stderr.isatty() and percent != shown:
            shown = percent
            print(f"\rcomparing entries: {percent}%", end="", file=sys.stderr, flush=True)

    async with core.session.Session() as session:
        entry = await database(session, args)
        engine = None
        if args.engine == "ray":
            engine = core.ray.RayEngine(args.partitions)
        try:
            return await core.inspect.find_duplicates(
                session,
                entry.target,
                threshold=threshold,
                metric=args.metric,
                engine=engine,
                on_progress=progress,
            )
        finally:
            if shown >= 0:
                print(file=sys.stderr)


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def format_report(report: DuplicateReport) -> str:
    lines = []
    for number, group in enumerate(report.groups, start=1):
        first, second = group.widest_pair
        line = (
            f"group {number}: {len(group.entries)} entries, largest distance {group.max_distance:.6f} "
            f"between {report.label(first)} and {report.label(second)}"
        )
        if group.chained(report.threshold):
            line += f", beyond {report.threshold:g}: linked through the others"
        lines.append(line)
        lines += [f"  {report.label(entry)}: {_preview(entry.content)}" for entry in group.entries]
    grouped = sum(len(group.entries) for group in report.groups)
    lines.append(
        f"{len(report.groups)} groups ({grouped} of {report.rows} entries) linked by pairs within "
        f"{report.metric} distance {report.threshold:g}, in {report.elapsed_ms / 1000:.1f} s"
    )
    chained = sum(group.chained(report.threshold) for group in report.groups)
    if chained:
        holds = "1 group holds" if chained == 1 else f"{chained} groups hold"
        lines.append(f"note: {holds} entries farther apart than {report.threshold:g}; {GROUPING_RULE}")
    left_out = report.left_out_text("--metric l2")
    if left_out is not None:
        lines.append(f"note: {left_out}")
    said = report.repeats.sentence()
    if said is not None:
        lines.append(f"note: {said}")
    return escaped_lines(lines)  # ids and contents come from the table


def run(args: argparse.Namespace) -> int:
    refuse_unclear(args, NAME)
    check_engine_options(args, "partitions")
    try:
        with engine_for(args):
            report = asyncio.run(_duplicates(args))
    except ScaleUnavailableError as error:
        report_error(error.message, error.hint)
        return EXIT_UNUSABLE
    except RecallError as error:
        if args.engine != "ray":
            raise
        report_error(error.message, error.hint)  # Ray could not be reached, or failed: no groups
        return EXIT_UNUSABLE
    if args.json:
        write_stdout(json_text(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        write_stdout(format_report(report) + "\n")
    return 0
