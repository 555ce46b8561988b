"""``recall-gui compare FILE``: A/B of golden checks — a table version against the latest, or one knowledge
base against another with the same ids (another model, other chunking). Exit 1 when B loses an expected id
that A found, 2 when a side could not run a check (an error, never a FAIL)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import location, registry_option, report_error, write_stdout
from recall_gui.cli.folder_options import add_path_options, path_storage, refuse_without_path
from recall_gui.cli.model_notes import note_stand_ins
from recall_gui.core.base import InvalidInputError, RecallError, json_text, printable
from recall_gui.core.golden import read_golden, refuse_bad_version

if TYPE_CHECKING:
    from recall_gui.core.golden import Comparison

NAME = "compare"
EXIT_SAME_OR_BETTER, EXIT_LOST, EXIT_UNUSABLE = 0, 1, 2


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="A/B golden checks: a table version against the latest, or another knowledge base",
        description="Run every check of a golden file twice, as an agent's search: A is each check's "
        "database at --version V and B its latest; or A is each check's database and B another knowledge "
        "base (--db OTHER, or --path PATH --table T) searched with its own model. Prints the metrics of "
        "both, and per check what was lost and gained. Exit status 1 when B misses an expected id A found, "
        "2 when a side could not run a check (its version is gone, the other base cannot be searched).",
    )
    registry_option(parser)
    parser.add_argument("file", metavar="FILE", help="the golden file")
    parser.add_argument("--version", type=int, metavar="V", help="A: each check's database at version V")
    parser.add_argument("--db", metavar="OTHER", help="B: another registered database")
    add_path_options(parser)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.set_defaults(run=run)


def _refuse_bad_options(args: argparse.Namespace) -> None:
    refuse_without_path(args)
    chosen = [
        name
        for name, value in (("--version", args.version), ("--db", args.db), ("--path", args.path))
        if value is not None
    ]
    if len(chosen) != 1:
        raise InvalidInputError(
            "give exactly one of --version V, --db OTHER or --path PATH",
            hint="--version compares a version with the latest; --db and --path compare with another "
            "knowledge base.",
        )
    refuse_bad_version("--version", args.version)


async def _compare(args: argparse.Namespace) -> Comparison:
    from recall_gui.cli.databases import registered

    golden = read_golden(Path(args.file))
    harness = core.search.Harness(location(args).directory)
    try:
        other = None
        if args.db is not None:
            other = registered(harness.registry, args.db)
        elif args.path is not None:
            opened = await core.tables.open_table(
                harness.session,
                args.path,
                table=args.table,
                model=args.model,
                storage_options=path_storage(args),
            )
            other = opened.entry
        return await core.golden.compare_checks(harness, golden.checks, version=args.version, other=other)
    finally:
        await harness.aclose()


def _verdict(side: dict[str, Any]) -> str:
    return "ERROR" if "error" in side else "PASS" if side["passed"] else "FAIL"


def _no_metrics(side: str, checks: list[dict[str, Any]]) -> str:
    """Why a side has no means (they are over the checks both sides ran): its own error, or the other
    side's when this side ran checks the other could not."""
    other = "b" if side == "a" else "a"
    own = [check[side]["error"] for check in checks if "error" in check[side]]
    if not checks:
        return f"{side.upper()}: no check ran (the file has none)"
    if len(own) == len(checks):
        return printable(f"{side.upper()}: no check ran: {own[0]}")
    theirs = [check[other]["error"] for check in checks if "error" in check[other]]
    return printable(
        f"{side.upper()}: not compared: {other.upper()} could not run {len(theirs)} of {len(checks)} "
        f"checks: {theirs[0]}"
    )


def format_comparison(comparison: Comparison) -> str:
    data = comparison.to_dict()
    lines = []
    for side in ("a", "b"):
        metrics = data[side]["metrics"]
        if metrics is None:
            lines.append(_no_metrics(side, data["checks"]))
        else:
            means = f"recall {metrics['recall']:.3f}, MRR {metrics['mrr']:.3f}, nDCG {metrics['ndcg']:.3f}"
            lines.append(f"{side.upper()}: {means}")
    for check in data["checks"]:
        head = printable(f"{check['searched']}  {json.dumps(check['query'], ensure_ascii=False)}")
        verdicts = ", ".join(f"{side.upper()} {_verdict(check[side])}" for side in ("a", "b"))
        lines.append(f"{verdicts}  {head}")
        errors = {side: check[side].get("error") for side in ("a", "b")}
        if errors["a"] is not None and errors["a"] == errors["b"]:
            lines.append(f"       neither side could run it: {printable(errors['a'])}")
        else:
            lines.extend(
                f"       {side.upper()} could not run: {printable(error)}"
                for side, error in errors.items()
                if error is not None
            )
        if check["lost"]:
            lines.append(printable(f"       lost: {', '.join(check['lost'])}"))
        if check["gained"]:
            lines.append(printable(f"       gained: {', '.join(check['gained'])}"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        _refuse_bad_options(args)  # a refusal is status 2, as every one of this command's: 1 says B lost
        comparison = asyncio.run(_compare(args))
    except RecallError as error:
        report_error(error.message, error.hint)
        return EXIT_UNUSABLE
    note_stand_ins(o.model for o in (*comparison.a, *comparison.b))
    if comparison.a and not comparison.shares_ids:
        print("warning: A's and B's results share no id: are they the same entries?", file=sys.stderr)
    write_stdout(
        json_text(comparison.to_dict(), indent=2, ensure_ascii=False) + "\n"
        if args.json
        else format_comparison(comparison) + "\n"
    )
    if comparison.unusable:
        number, side, outcome = comparison.unusable[0]
        more = len({n for n, _, _ in comparison.unusable}) - 1
        report_error(
            f"{args.file}, check {number}: {side} could not run it: {outcome.error}"
            + (f" (and {more} more)" if more else ""),
            outcome.hint,
        )
        return EXIT_UNUSABLE
    return EXIT_LOST if comparison.regressed else EXIT_SAME_OR_BETTER
