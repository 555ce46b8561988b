"""``recall-gui check FILE``: run golden checks through the agent's own search; the exit status says how
they went (0 all passed, 1 one failed, 2 the file or a database could not be used)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import location, registry_option, report_error, write_stdout
from recall_gui.cli.engine import add_engine_options, check_engine_options, engine_for
from recall_gui.cli.model_notes import note_stand_ins
from recall_gui.cli.versions_progress import VersionsRunProgress
from recall_gui.core.base import (
    ACTIVE_FILE,
    DBS_FILE,
    GoldenFileError,
    RecallError,
    json_text,
    printable,
    refuse_output,
)
from recall_gui.core.golden import read_golden
from recall_gui.core.ray import ScaleUnavailableError

if TYPE_CHECKING:
    from recall_gui.core.golden import CheckOutcome, CheckRun, VersionChoice, VersionsReport

EXIT_PASSED, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2

#: The options that choose versions for ``--versions``, and where argparse keeps them.
VERSION_OPTIONS = {"from": "from_version", "to": "to_version", "last": "last"}


NAME = "check"


def add_to(commands: Any) -> None:
    parser = commands.add_parser(
        NAME,
        help="run golden checks: must these queries still retrieve these entries?",
        description="Run every check of a golden file through the search an agent's recall_search runs, "
        "and show the rank of each expected id (or that it is missing). Exit status: 0 when every check "
        "passes, 1 when one fails, 2 when the file or a database cannot be used.",
        epilog='A golden file is JSON: {"checks": [{"db_name": "notes", "query": "how do I reset my '
        'password", "expect": ["pw-reset"], "limit": 5}]} (limit optional, default 5). A check made on a '
        'folder names "uri" and "table" instead of "db_name": it runs on the registered database that '
        "reads that table, or on the folder until there is one; each check's line says which. Nothing is "
        'written. A check may pin a version of its table: "version": 3 or "tag": "release" (read-only).',
    )
    registry_option(parser)
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.add_argument(
        "--versions",
        action="store_true",
        help="run every check against every version of its database's table still on disk (read-only) "
        "and say which version broke it; progress goes to stderr",
    )
    parser.add_argument(
        "--from",
        dest="from_version",
        type=int,
        metavar="V",
        help="with --versions: only versions from V on",
    )
    parser.add_argument(
        "--to", dest="to_version", type=int, metavar="V", help="with --versions: only versions up to V"
    )
    parser.add_argument(
        "--last",
        type=int,
        metavar="N",
        help="with --versions: only the newest N versions (of those --from and --to leave), e.g. --last 50",
    )
    parser.add_argument(
        "--junit",
        metavar="OUT.xml",
        help="also write a JUnit XML report (one test case per check) for CI to show",
    )
    add_engine_options(parser)
    parser.add_argument("file", metavar="FILE", help="the golden file")
    parser.set_defaults(run=run)


async def _run(args: argparse.Namespace) -> CheckRun:
    golden = read_golden(Path(args.file))  # before anything is opened: a bad file runs nothing
    if args.engine == "ray":
        return await core.ray.run_checks_on_ray(location(args).directory, golden.checks)
    harness = core.search.Harness(location(args).directory)
    try:
        return await core.golden.with_crowding(harness, await core.golden.run_checks(harness, golden.checks))
    finally:
        await harness.aclose()


def format_outcome(outcome: CheckOutcome) -> str:
    """The outcome's lines; what the golden file, the registry or a table holds is shown escaped (a name,
    a tag or an id with control characters must not drive the terminal or forge a line)."""
    check = outcome.check
    where = printable(outcome.searched or check.named)
    head = f"{where}  {printable(json.dumps(check.query, ensure_ascii=False))} (limit {check.limit})"
    if outcome.error is not None:
        return f"ERROR  {head}\n       {printable(outcome.error)}"
    verdict = "PASS " if outcome.passed else "FAIL "
    lines = [f"{verdict}  {head}"]
    for expected in outcome.expected:
        where = f"rank {expected.rank}" if expected.rank is not None else "missing"
        lines.append(f"       {printable(expected.label)}: {where}")

    crowding = core.golden.crowding_text(outcome.near_copies)
    if crowding is not None:
        lines.append(f"       {printable(crowding)}")
    return "\n".join(lines)


def repeats_notes(outcomes: Iterable[CheckOutcome]) -> list[str]:
    """Once per table searched whose ids repeat: that they do, and how entries are named there."""
    said: dict[str, str] = {}
    for outcome in outcomes:
        sentence = outcome.repeats.sentence()
        if sentence is not None:
            said.setdefault(outcome.searched or outcome.check.named, sentence)
    return [printable(f"note: {where}: {sentence}") for where, sentence in said.items()]


def format_run(run: CheckRun) -> str:
    lines = [format_outcome(outcome) for outcome in run.outcomes] + repeats_notes(run.outcomes)
    summary = f"{run.passed} passed, {run.failed} failed"
    if run.errors:
        summary += f", {run.errors} could not run"
    metrics = run.metrics
    if metrics is not None:
        summary += f"\n{metrics.describe()}"
    return "\n".join([*lines, summary]) if lines else "no checks in the file\n" + summary


def run_inputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """What the run reads that a file it writes must never replace: the golden file, the registry's files."""
    registry = location(args).directory
    return [
        ("the golden file", Path(args.file)),
        ("the registry's list of databases", registry / DBS_FILE),
        ("the registry's list of active databases", registry / ACTIVE_FILE),
    ]


def _junit_path_usable(args: argparse.Namespace) -> bool:
    """Refuse ``--junit OUT`` before anything runs, when OUT may not be written (the run would be lost)."""
    try:
        refuse_output(Path(args.junit), inputs=run_inputs(args), what="the JUnit report")
    except RecallError as error:
        report_error(error.message, error.hint)
        return False
    return True


def _write_junit(outcome: CheckRun, args: argparse.Namespace) -> bool:
    try:
        core.golden.write_junit(outcome, f"recall-gui check {args.file}", Path(args.junit), run_inputs(args))
    except RecallError as error:  # what is at the path now may not be replaced
        report_error(error.message, error.hint)
        return False
    except OSError as error:
        report_error(
            f"the JUnit report was not written to {args.junit}: {error.strerror or error}",
            "Name a file in a folder you can write to.",
        )
        return False
    return True


async def _run_versions(args: argparse.Namespace, choice: VersionChoice) -> VersionsReport:
    golden = read_golden(Path(args.file))
    harness = core.search.Harness(location(args).directory)
    progress = VersionsRunProgress(sys.stderr)
    try:
        return await core.golden.run_on_versions(harness, golden.checks, choice, progress)
    finally:
        progress.end()
        await harness.aclose()


def format_versions(report: VersionsReport) -> str:
    lines = []
    for run in report.runs:
        data = run.to_dict()
        metrics = data["metrics"]
        means = "" if metrics is None else f"  recall {metrics['recall']:.3f}, MRR {metrics['mrr']:.3f}"
        lines.append(
            f"{printable(run.searched or run.db_name)} version {run.version}: {data['passed']} passed, "
            f"{data['failed']} failed{means}"
        )
    for index, check in enumerate(report.checks):
        broke = report.broke_at(index)
        query = printable(json.dumps(check.query, ensure_ascii=False))
        if broke is not None:
            lines.append(f"broke at version {broke}: {printable(check.named)}  {query}")
        if index in report.unusable:
            lines.append(f"could not run: {printable(check.named)}  {printable(report.unusable[index])}")
    return "\n".join(lines) if lines else "no checks in the file"


def _versions_status(report: VersionsReport) -> int:
    if report.unusable:
        return EXIT_UNUSABLE
    latest: dict[tuple[str, ...], int] = {}
    for number, run in enumerate(report.runs):
        latest[run.database] = number
    last_runs = [report.runs[number] for number in latest.values()]
    if any(o.error is not None for r in last_runs for o in r.outcomes):
        return EXIT_UNUSABLE
    return EXIT_FAILED if any(not o.passed for r in last_runs for o in r.outcomes) else EXIT_PASSED


def _version_choice(args: argparse.Namespace) -> VersionChoice | None:
    """The versions ``--from``, ``--to`` and ``--last`` choose, or ``None`` after saying why they cannot."""
    try:
        return core.golden.VersionChoice.of(args.from_version, args.to_version, args.last)
    except RecallError as error:
        report_error(error.message, error.hint)
        return None


def run_versions(args: argparse.Namespace) -> int:
    if args.junit is not None:
        report_error("--junit reports one run: leave --versions out for it")
        return EXIT_UNUSABLE
    choice = _version_choice(args)
    if choice is None:
        return EXIT_UNUSABLE
    try:
        report = asyncio.run(_run_versions(args, choice))
    except RecallError as error:
        report_error(error.message, error.hint)
        return EXIT_UNUSABLE
    note_stand_ins(o.model for run in report.runs for o in run.outcomes)
    if args.json:
        write_stdout(json_text(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(format_versions(report) + "\n")
    return _versions_status(report)


def run(args: argparse.Namespace) -> int:
    chosen = [f"--{option}" for option, dest in VERSION_OPTIONS.items() if getattr(args, dest) is not None]
    if chosen and not args.versions:
        verb = "applies" if len(chosen) == 1 else "apply"
        report_error(f"{' and '.join(chosen)} {verb} only with --versions", "Add --versions to run them.")
        return EXIT_UNUSABLE
    if args.versions and args.engine == "ray":
        report_error("--versions runs on the local engine only", "Leave --engine ray out for it.")
        return EXIT_UNUSABLE
    if args.versions:
        try:
            check_engine_options(args)  # --ray-address or --verbose without the Ray engine: refused
        except RecallError as error:
            report_error(error.message, error.hint)
            return EXIT_UNUSABLE
        return run_versions(args)
    if args.junit is not None and not _junit_path_usable(args):
        return EXIT_UNUSABLE
    try:
        check_engine_options(args)
        if args.engine == "ray":
            read_golden(Path(args.file))  # a bad file is refused before Ray starts
        with engine_for(args):
            outcome = asyncio.run(_run(args))
    except ScaleUnavailableError as error:  # what to install: the message and its hint
        report_error(error.message, error.hint)
        return EXIT_UNUSABLE
    except GoldenFileError as error:  # the file cannot be used: one line, status 2
        report_error(error.message)
        return EXIT_UNUSABLE
    except RecallError as error:  # the registry cannot be used (one line), or Ray (and what to check)
        report_error(error.message, error.hint if args.engine == "ray" else None)
        return EXIT_UNUSABLE
    note_stand_ins(o.model for o in outcome.outcomes)
    if args.json:
        write_stdout(json_text(outcome.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(format_run(outcome) + "\n")
    if args.junit is not None and not _write_junit(outcome, args):
        return EXIT_UNUSABLE
    if outcome.errors:
        number, first = next((n, o) for n, o in enumerate(outcome.outcomes, 1) if o.error is not None)
        more = f" (and {outcome.errors - 1} more)" if outcome.errors > 1 else ""
        report_error(f"{args.file}, check {number} could not run: {first.error}{more}")
        return EXIT_UNUSABLE
    return EXIT_PASSED if outcome.failed == 0 else EXIT_FAILED
