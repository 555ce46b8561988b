"""``recall-gui review``: verdicts on a database's entries, kept in a review file beside (never in) the
knowledge base: ``mark`` one, ``status`` (and ``--fail-on`` for CI), ``export``, ``merge`` two reviewers'
files. docs/REVIEW.md describes the file and the rules."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import write_stdout
from recall_gui.cli.review_opening import open_review_of, review_options
from recall_gui.cli.review_status import add_status_parser
from recall_gui.core.base import (
    InvalidInputError,
    one_line,
    plural,
    printable,
    refuse_output,
    write_text_atomic,
)
from recall_gui.core.review import VERDICTS, WHO_ENV
from recall_gui.core.storage import entry_label

if TYPE_CHECKING:
    from recall_gui.core.review import MergedFile, Review

NAME = "review"
#: Entries sharing an id (or a digest's start) that a refusal lists.
SHOWN = 10
#: How much of an entry's text a line shows.
PREVIEW_CHARS = 100


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="mark entries correct, outdated, wrong …; the review's status, export and merge",
        description="Verdicts on a database's entries, kept in a review file outside the knowledge base "
        "(by default <data>/reviews/<database>.jsonl in the app's data folder; --file names another, e.g. "
        "one kept in git beside the corpus). Entries are matched by the sha256 of their content, so a "
        "verdict follows its entry across versions. Nothing is ever written to the knowledge base.",
        epilog="The file's format and the rules: docs/REVIEW.md.",
    )
    commands_of_review = parser.add_subparsers(dest="review_command", metavar="ACTION", required=True)
    _add_mark_parser(commands_of_review)
    add_status_parser(commands_of_review)
    _add_export_parser(commands_of_review)
    _add_merge_parser(commands_of_review)


def _add_mark_parser(actions: Any) -> None:
    parser = actions.add_parser(
        "mark",
        help="write one verdict on one entry",
        description="Write a verdict on the entry named by its id (refused when several rows share it: name "
        "its content instead) or by its content's sha256 (the first 8 hex digits or more, when they name one "
        "content). The table's latest version is read; the verdict goes to the review file.",
    )
    review_options(parser)
    named = parser.add_mutually_exclusive_group(required=True)
    named.add_argument("--id", metavar="ID", help="the entry's id")
    named.add_argument(
        "--content-sha256", metavar="HEX", help="the sha256 of the entry's content (or its start)"
    )
    parser.add_argument("--verdict", required=True, choices=VERDICTS, help="the verdict")
    parser.add_argument("--note", default="", metavar="TEXT", help="a note kept with the verdict")
    parser.add_argument("--who", metavar="NAME", help=f"who marks (default: ${WHO_ENV}, else your user name)")
    parser.set_defaults(run=run_mark)


def _add_export_parser(actions: Any) -> None:
    parser = actions.add_parser(
        "export",
        help="the standing verdicts as CSV or JSON",
        description="One row per content with a verdict (the latest that was not undone), oldest first: id, "
        "content_sha256, verdict, note, who, when, table_version, rows (how many rows of the table hold that "
        "content now) and content (its text; empty when the table no longer holds it).",
    )
    review_options(parser)
    parser.add_argument("--format", required=True, choices=("csv", "json"), help="csv or json")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: standard output)")
    parser.set_defaults(run=run_export)


def _add_merge_parser(actions: Any) -> None:
    parser = actions.add_parser(
        "merge",
        help="make two reviewers' files one, listing where they disagree",
        description="Write every record of the files to a new file, in the order of time (a record found in "
        "more than one file once; lines that are not records kept, after the records), and list the "
        "contents on which reviewers' latest verdicts differ. The files merged are only read.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="the review files (two or more)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the merged file (a new file)")
    parser.set_defaults(run=run_merge)


# --- mark --------------------------------------------------------------------------------------------------


def _one_content(review: Review, args: argparse.Namespace) -> int:
    """The position of a row holding the content ``--id`` or ``--content-sha256`` names."""
    snapshot = review.snapshot
    if args.id is not None:
        positions = snapshot.positions_of_id(args.id)
        what = f"the id {args.id!r}"
        if not len(positions):
            raise InvalidInputError(
                f"no entry of {review.place.db_name} has {what} (version {snapshot.version})",
                hint="Check the id, or name the entry by its content with --content-sha256.",
            )
    else:
        prefix = args.content_sha256.strip().lower()
        positions = snapshot.positions_of_prefix(prefix)
        what = f"a content whose sha256 starts with {prefix}"
        if not len(positions):
            raise InvalidInputError(
                f"no entry of {review.place.db_name} has {what} (version {snapshot.version})",
                hint="Copy the digest from `recall-gui review export` or the window.",
            )
    first_of_each: dict[str, int] = {}
    for position in positions.tolist():
        first_of_each.setdefault(snapshot.sha_at(position), position)
    if len(first_of_each) > 1:
        for sha, position in list(first_of_each.items())[:SHOWN]:
            print(printable(f"  {entry_label(snapshot.id_at(position), sha)}  {sha}"), file=sys.stderr)
        if len(first_of_each) > SHOWN:
            print(f"  … and {len(first_of_each) - SHOWN:,} more", file=sys.stderr)
        raise InvalidInputError(
            f"{plural(len(positions), 'row')} of {review.place.db_name} have {what}, with "
            f"{len(first_of_each):,} different contents (above): name the content with --content-sha256",
            hint="A verdict is on one content: give its sha256 (64 hex digits, or enough to name it).",
        )
    return int(positions[0])


async def _mark(args: argparse.Namespace) -> list[str]:
    async with core.session.Session(keep_vectors=False) as session:
        review = await open_review_of(session, args)
        position = _one_content(review, args)
        record = review.mark(position, args.verdict, args.note)
        copies = len(review.snapshot.positions_of_sha(record.content_sha256))
        rows = f", {copies:,} rows" if copies > 1 else ""
        preview = one_line(await review.text_at(session, position), PREVIEW_CHARS)
        return [
            f"marked {entry_label(record.entry_id, record.content_sha256)}{rows} {record.verdict} "
            f"in {review.file.path}",
            f"  {preview}",
        ]


def run_mark(args: argparse.Namespace) -> int:
    write_stdout("".join(printable(line) + "\n" for line in asyncio.run(_mark(args))))
    return 0


# --- export ------------------------------------------------------------------------------------------------


async def _export(args: argparse.Namespace) -> str:
    async with core.session.Session(keep_vectors=False) as session:
        review = await open_review_of(session, args)
        table = await core.review.verdict_table(session, review)
        return core.review.export_text(table, args.format)


def run_export(args: argparse.Namespace) -> int:
    if args.output is not None:
        refuse_output(Path(args.output), what="the export")
    text = asyncio.run(_export(args))
    if args.output is None:
        write_stdout(text)
    else:
        write_text_atomic(Path(args.output), text)
    return 0


# --- merge -------------------------------------------------------------------------------------------------


def format_merge(merged: MergedFile, output: Path, files: int) -> list[str]:
    lines = [
        f"merged {files} files into {output}: {merged.records:,} records"
        + (f" ({merged.repeated:,} found in more than one file, written once)" if merged.repeated else "")
    ]
    if merged.damaged:
        lines.append(f"{plural(len(merged.damaged), 'line')} that are not records, kept at the end:")
        lines += [f"  {line.text()}" for line in merged.damaged]
    for record_id in merged.clashes:
        lines.append(f"record {record_id} was written differently in two files: both lines kept")
    if not merged.conflicts:
        lines.append("no conflicts: where reviewers marked the same content, their latest verdicts agree")
    else:
        lines.append(
            f"{plural(len(merged.conflicts), 'conflict')} (the same content, different latest verdicts):"
        )
        for conflict in merged.conflicts:
            said = ", ".join(f"{record.who} {record.verdict} ({record.when})" for record in conflict.verdicts)
            lines.append(f"  {entry_label(conflict.entry_id, conflict.content_sha256)}: {said}")
    return lines


def run_merge(args: argparse.Namespace) -> int:
    files = [Path(name) for name in args.files]
    if len(files) < 2:
        raise InvalidInputError(
            "merge takes two review files or more", hint="recall-gui review merge A B -o C"
        )
    output = Path(args.output)
    merged = core.review.merge_files(files)
    core.review.write_merged(merged, output, files)
    write_stdout("".join(printable(line) + "\n" for line in format_merge(merged, output, len(files))))
    return 0
