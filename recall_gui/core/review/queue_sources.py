"""Queues made from what other parts found: near-copies (a duplicates report), unreachable entries (a reach
report), the rows a filter keeps, the entries agents were given most often (the agent log).

A report names rows of the version it was made on; their contents carry them to the review's version (a
report of an older version is read back through that version's snapshot, when the table still keeps it).
The reach report is the one the caller has: the Reach page's last one, or one made with
:func:`recall_gui.core.reach.reach.find_reach` (it embeds every entry's query, which takes minutes on a
big table, so it is never made behind the user's back).
"""

from __future__ import annotations

from collections.abc import Iterable

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.base.errors import ConnectError, InvalidInputError
from recall_gui.core.inspect.duplicates import DuplicateReport
from recall_gui.core.reach.reach_report import ReachReport
from recall_gui.core.review.agent_join import Period, served_report
from recall_gui.core.review.orders import Order
from recall_gui.core.review.queue import ReviewQueue, content_order, filter_order, most_given_order
from recall_gui.core.review.reviewing import Review
from recall_gui.core.review.snapshot import read_snapshot
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import content_sha256


def near_copies_queue(review: Review, report: DuplicateReport) -> ReviewQueue:
    """The rows of each group of near-copies in turn, the report's groups in its order."""
    shas = [content_sha256(entry.content) for group in report.groups for entry in group.entries]
    note = (
        f"{len(report.groups):,} groups of near-copies within {report.metric} distance {report.threshold:g}"
    )
    return content_order(Order.NEAR_COPIES, review.state, shas, note)


async def unreachable_queue(session: Session, review: Review, report: ReachReport) -> ReviewQueue:
    """The entries the reach report found unreachable, in its order."""
    row_ids = [entry.row_id for entry in report.unreachable]
    snapshot = review.snapshot
    note = (
        f"{len(row_ids):,} entries their own query does not reach (reach report of version {report.version})"
    )
    if report.version != snapshot.version:
        try:
            snapshot = await read_snapshot(session, review.target.at(report.version))
        except ConnectError:
            raise InvalidInputError(
                f"the reach report was made on version {report.version}, which the table no longer keeps",
                hint="Make the reach report again.",
            ) from None
        note += f"; matched to version {review.snapshot.version} by content"
    shas = [snapshot.sha_at(position) for position in snapshot.positions_of_row_ids(row_ids).tolist()]
    return content_order(Order.UNREACHABLE, review.state, shas, note)


async def filter_queue(session: Session, review: Review, where: str) -> ReviewQueue:
    """The rows ``where`` keeps at the review's version (the browse filter's SQL, refused when it is not
    one read-only expression, first run in the filter guard's process)."""
    opened = await session.tables.open(review.target.at(review.snapshot.version))
    return filter_order(review.state, await opened.matching_row_ids(where), where)


def most_given_queue(review: Review, records: Iterable[CallRecord], period: Period) -> ReviewQueue:
    """The entries agents were given in ``period``, most often first."""
    report = served_report(records, review.place.db_name, review.state, period)
    note = f"{report.served:,} entries given in {report.calls:,} calls {period.label}"
    return most_given_order(review.state, report.given, note)
