"""Agents and verdicts meet: which logged calls were given an entry marked wrong or outdated, and how much
of what agents were given has been reviewed.

A logged call names its results by id and, since the log kept them, by the sha256 of their contents. An
entry is matched by its content where the record has it; in an older record, by its id when exactly one
row of the table holds that id now (else the result is counted as not told apart). Only agents' successful
calls to the database count (the window's own Agent-view calls are not agents'). Nothing here changes what
an agent is given: the app shows verdicts, it never filters results by them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base.captions import plural
from recall_gui.core.base.tool import TOOL_NAME
from recall_gui.core.review.records import FLAGGED, JUDGED, ReviewRecord
from recall_gui.core.review.review_state import ReviewState
from recall_gui.core.review.reviewing import AgentShare


@dataclass(frozen=True)
class Period:
    """The calls counted: from ``since`` (``None``: all) to ``until`` (``None``: now), and its name."""

    label: str
    since: datetime | None = None
    until: datetime | None = None

    def holds(self, moment: datetime) -> bool:
        return (self.since is None or moment >= self.since) and (self.until is None or moment < self.until)


def last_days(days: int, label: str, now: datetime | None = None) -> Period:
    moment = now or datetime.now().astimezone()
    return Period(label, moment - timedelta(days=days))


def this_week(now: datetime | None = None) -> Period:
    """The last 7 days."""
    return last_days(7, "this week", now)


def this_month(now: datetime | None = None) -> Period:
    """The last 30 days."""
    return last_days(30, "this month", now)


def since(moment: datetime) -> Period:
    return Period(f"since {moment.isoformat(timespec='minutes')}", moment)


@dataclass(frozen=True)
class GivenEntry:
    """One result of a logged call: its id, its content's sha256 (``None`` when it cannot be told), and
    the standing verdict on that content."""

    entry_id: str
    content_sha256: str | None
    verdict: ReviewRecord | None


@dataclass(frozen=True)
class FlaggedCall:
    """A call that was given at least one entry marked wrong or outdated: the call, and those entries."""

    record: CallRecord
    entries: tuple[GivenEntry, ...]


@dataclass(frozen=True)
class ServedReport:
    """What agents were given from one database in a period, joined to the verdicts."""

    db_name: str
    period: Period
    calls: int
    flagged_calls: tuple[FlaggedCall, ...]
    #: The contents marked wrong or outdated that some call was given, and their verdicts.
    flagged_entries: dict[str, ReviewRecord]
    #: Calls given each content (sha256 -> calls).
    given: dict[str, int]
    #: Of the contents given, how many have a verdict other than *skip*.
    reviewed: int
    #: Results that could not be told apart (an id held by several rows or by none, in a record without
    #: content digests).
    untold: int

    @property
    def served(self) -> int:
        return len(self.given)

    def share(self) -> AgentShare:
        return AgentShare(self.served, self.reviewed, self.period.label, self.calls)

    def text(self) -> str:
        """``this week: 14 of 230 calls were given 3 entries marked wrong``."""
        head = f"{self.period.label}: "
        if not self.calls:
            return head + "no agent called this database"
        if not self.flagged_calls:
            return head + f"none of {plural(self.calls, 'call')} was given an entry marked wrong or outdated"
        verdicts = sorted({record.verdict or "" for record in self.flagged_entries.values()}, reverse=True)
        count = len(self.flagged_entries)
        entries = f"{count:,} {'entry' if count == 1 else 'entries'}"
        return (
            head + f"{len(self.flagged_calls):,} of {plural(self.calls, 'call')} were given {entries} "
            f"marked {' or '.join(verdicts)}"
        )


def agent_calls(records: Iterable[CallRecord], db_name: str, period: Period) -> list[CallRecord]:
    """Agents' successful calls of the tool to ``db_name`` in ``period``."""
    return [
        record
        for record in records
        if record.tool == TOOL_NAME
        and record.error is None
        and not record.from_window
        and record.db_name == db_name
        and period.holds(record.when)
    ]


def id_digests(state: ReviewState, entry_ids: Iterable[str]) -> dict[str, str]:
    """The content sha256 of each id that exactly one row of the snapshot holds."""
    wanted = sorted(set(entry_ids))
    snapshot = state.snapshot
    if not wanted or not len(snapshot):
        return {}
    positions = np.flatnonzero(snapshot.positions_with_ids(wanted) & (snapshot.id_counts == 1))
    return {snapshot.id_at(position): snapshot.sha_at(position) for position in positions.tolist()}


def given_entries(record: CallRecord, state: ReviewState, by_id: dict[str, str]) -> tuple[GivenEntry, ...]:
    """The results of one call, each with its content's sha256 (when it can be told) and verdict."""
    kept = record.result_sha256 if len(record.result_sha256) == len(record.result_ids) else ()
    found = []
    for index, entry_id in enumerate(record.result_ids):
        sha = kept[index] if kept else by_id.get(entry_id)
        found.append(GivenEntry(entry_id, sha, state.ledger.standing.get(sha) if sha else None))
    return tuple(found)


def served_report(
    records: Iterable[CallRecord], db_name: str, state: ReviewState, period: Period
) -> ServedReport:
    """The calls of agents to ``db_name`` in ``period`` joined to the verdicts of ``state``."""
    calls = agent_calls(records, db_name, period)
    needing_ids = [
        entry_id
        for record in calls
        if len(record.result_sha256) != len(record.result_ids)
        for entry_id in record.result_ids
    ]
    by_id = id_digests(state, needing_ids)
    given: Counter[str] = Counter()
    flagged_calls: list[FlaggedCall] = []
    flagged_entries: dict[str, ReviewRecord] = {}
    untold = 0
    for record in calls:
        entries = given_entries(record, state, by_id)
        untold += sum(1 for entry in entries if entry.content_sha256 is None)
        given.update({entry.content_sha256 for entry in entries if entry.content_sha256})
        flagged = tuple(
            entry for entry in entries if entry.verdict is not None and entry.verdict.verdict in FLAGGED
        )
        if flagged:
            flagged_calls.append(FlaggedCall(record, flagged))
            for entry in flagged:
                assert entry.content_sha256 is not None and entry.verdict is not None
                flagged_entries[entry.content_sha256] = entry.verdict
    reviewed = sum(1 for sha in given if state.ledger.verdict(sha) in JUDGED)
    return ServedReport(
        db_name, period, len(calls), tuple(flagged_calls), flagged_entries, dict(given), reviewed, untold
    )
