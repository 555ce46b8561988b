"""``recall-gui review status``: counts per verdict, entries not reviewed and changed since reviewed, the
share of what agents were given that is reviewed, the calls given entries marked wrong or outdated; and
for CI, ``--fail-on wrong,outdated``: exit 1 while the table holds an entry with such a verdict, 2 when the
status cannot be told (it could not run, or a line of the review file cannot be read), 0 otherwise."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from recall_gui import core
from recall_gui.cli.common import report_error, write_stdout
from recall_gui.cli.review_opening import open_review_of, review_options
from recall_gui.core.agent_log import LogFiles, parse_since
from recall_gui.core.base import RecallError, json_text, one_line, plural, printable
from recall_gui.core.review import FLAGGED, VERDICTS, parse_verdicts
from recall_gui.core.storage import entry_label

if TYPE_CHECKING:
    from recall_gui.core.review import Review, ServedReport

EXIT_CLEAR, EXIT_FLAGGED, EXIT_UNUSABLE = 0, 1, 2
#: Entries the text output lists per kind (--json lists every one).
SHOWN = 20
PREVIEW_CHARS = 80


def add_status_parser(actions: Any) -> None:
    parser = actions.add_parser(
        "status",
        help="counts per verdict, not reviewed, changed since reviewed, what agents were given",
        description="How far the review of a database has come, at its table's latest version: rows per "
        "verdict, rows not reviewed, rows changed since reviewed (a new text under an id that had a "
        "verdict), and of the entries agents were given (the agent log) how many are reviewed, and which "
        "calls were given an entry marked wrong or outdated. Exit status: 0; with --fail-on, 1 while the "
        "table holds an entry with one of those verdicts; 2 when the status cannot be told.",
        epilog="The JSON fields: docs/REVIEW.md.",
    )
    review_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--fail-on",
        metavar="VERDICTS",
        help="exit 1 while the table holds an entry with one of these verdicts (comma-separated: "
        "wrong,outdated)",
    )
    parser.add_argument(
        "--since",
        metavar="ISO",
        help="count agents' calls from this ISO 8601 date or time on (default: the last 30 days)",
    )
    parser.set_defaults(run=run_status)


def _flagged(review: Review, verdicts: frozenset[str]) -> list[dict[str, Any]]:
    state, snapshot = review.state, review.snapshot
    found = []
    for position in state.flagged_positions(verdicts).tolist():
        record = state.record_at(position)
        assert record is not None
        found.append(
            {
                "id": snapshot.id_at(position),
                "content_sha256": record.content_sha256,
                "row_id": int(snapshot.row_ids[position]),
                "verdict": record.verdict,
                "note": record.note,
                "who": record.who,
                "when": record.when,
            }
        )
    return found


def _changed(review: Review) -> list[dict[str, Any]]:
    return [
        {
            "id": changed.entry_id,
            "content_sha256": changed.content_sha256,
            "row_id": changed.row_id,
            "reviewed": {
                "content_sha256": changed.reviewed.content_sha256,
                "verdict": changed.reviewed.verdict,
                "table_version": changed.reviewed.table_version,
                "who": changed.reviewed.who,
                "when": changed.reviewed.when,
            },
        }
        for changed in review.state.changed_entries()
    ]


def status_dict(review: Review, served: ServedReport, fail_on: frozenset[str]) -> dict[str, Any]:
    state = review.state
    progress = review.progress(served.share())
    share = served.share()
    return {
        "db_name": review.place.db_name,
        "uri": review.place.uri,
        "table": review.place.table,
        "table_version": review.snapshot.version,
        "file": str(review.file.path),
        "rows": len(state),
        "reviewed": progress.reviewed,
        "counts": state.counts(),
        "not_reviewed": state.not_reviewed,
        "changed_since_reviewed": state.changed,
        "verdicts_not_in_table": state.gone(),
        "damaged_lines": [{"line": line.number, "reason": line.reason} for line in review.damaged],
        "agents": {
            "period": share.period,
            "since": served.period.since.isoformat() if served.period.since else None,
            "calls": served.calls,
            "served": share.served,
            "reviewed": share.reviewed,
            "share_reviewed": share.share,
            "untold_results": served.untold,
            "calls_given_flagged": len(served.flagged_calls),
            "flagged_entries_given": len(served.flagged_entries),
            "flagged_calls": [
                {
                    "time": call.record.time,
                    "query": call.record.query,
                    "client": call.record.client,
                    "entries": [
                        {
                            "id": entry.entry_id,
                            "content_sha256": entry.content_sha256,
                            "verdict": entry.verdict.verdict,
                        }
                        for entry in call.entries
                        if entry.verdict is not None
                    ],
                }
                for call in served.flagged_calls
            ],
        },
        "summary": progress.text(),
        "changed": _changed(review),
        "flagged": _flagged(review, fail_on or FLAGGED),
    }


def format_status(status: dict[str, Any], served: ServedReport) -> str:
    lines = [
        f"review of {status['db_name']} (table {status['table']}, version {status['table_version']}) "
        f"in {status['file']}",
        status["summary"],
    ]
    width = max(len(verdict) for verdict in VERDICTS)
    lines += [f"  {verdict:<{width}}  {status['counts'][verdict]:>9,}" for verdict in VERDICTS]
    not_reviewed, changed = status["not_reviewed"], status["changed_since_reviewed"]
    lines.append(f"  not reviewed: {not_reviewed:,}; changed since reviewed: {changed:,}")
    if status["verdicts_not_in_table"]:
        lines.append(
            f"  verdicts on contents this version no longer holds: {status['verdicts_not_in_table']:,}"
        )
    for changed in status["changed"][:SHOWN]:
        was = changed["reviewed"]
        lines.append(
            f"CHANGED  {entry_label(changed['id'], changed['content_sha256'])}: was "
            f"{entry_label(changed['id'], was['content_sha256'])}, {was['verdict']} in version "
            f"{was['table_version']}"
        )
    for item in status["flagged"][:SHOWN]:
        note = f": {one_line(item['note'], PREVIEW_CHARS)}" if item["note"] else ""
        lines.append(f"{item['verdict'].upper():<8} {entry_label(item['id'], item['content_sha256'])}{note}")
    listed = len(status["changed"][:SHOWN]) + len(status["flagged"][:SHOWN])
    if listed < len(status["changed"]) + len(status["flagged"]):
        lines.append("… --json lists every one")
    lines.append(served.text())
    for call in served.flagged_calls[:SHOWN]:
        labels = ", ".join(
            f"{entry_label(entry.entry_id, entry.content_sha256 or '')} ({entry.verdict.verdict})"
            for entry in call.entries
            if entry.verdict is not None
        )
        lines.append(
            f"  {call.record.time}  {one_line(call.record.query or '', PREVIEW_CHARS)!r}  given {labels}"
        )
    return "\n".join(printable(line) for line in lines)


async def _status(args: argparse.Namespace, fail_on: frozenset[str]) -> tuple[dict[str, Any], ServedReport]:
    period = core.review.since(parse_since(args.since)) if args.since else core.review.this_month()
    async with core.session.Session(keep_vectors=False) as session:
        review = await open_review_of(session, args)
        notes: list[str] = []
        served = core.review.served_report(
            LogFiles().records(notes), review.place.db_name, review.state, period
        )
        return status_dict(review, served, fail_on), served


def run_status(args: argparse.Namespace) -> int:
    try:
        fail_on = parse_verdicts(args.fail_on, "--fail-on") if args.fail_on is not None else frozenset()
        status, served = asyncio.run(_status(args, fail_on))
    except (RecallError, OSError) as error:  # the status cannot be told: status 2, even without --fail-on
        message = error.message if isinstance(error, RecallError) else str(error)
        report_error(message, error.hint if isinstance(error, RecallError) else None)
        return EXIT_UNUSABLE
    if args.json:
        write_stdout(json_text(status, ensure_ascii=False, indent=2) + "\n")
    else:
        write_stdout(format_status(status, served) + "\n")
    if not fail_on:
        return EXIT_CLEAR
    held = sum(status["counts"][verdict] for verdict in fail_on)
    if held:
        entries = f"{held:,} {'entry' if held == 1 else 'entries'}"
        report_error(f"the table still holds {entries} marked {' or '.join(sorted(fail_on))}")
        return EXIT_FLAGGED
    if status["damaged_lines"]:
        lines = plural(len(status["damaged_lines"]), "line")
        report_error(
            f"{lines} of {status['file']} cannot be read: a verdict there is not known",
            hint="Fix or remove those lines by hand (their numbers are above).",
        )
        return EXIT_UNUSABLE
    return EXIT_CLEAR
