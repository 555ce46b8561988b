"""The orders a review walks in (:mod:`recall_gui.core.review.queue`), made off the GUI thread, and what
agents were given of the database this month (the agent log), for the progress and the order "most often
given to agents".

A reach or duplicates report is the one the Reach or Duplicates page made in this window: the page never
makes one behind the user's back (a reach report embeds every entry).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import InvalidInputError
from recall_gui.core.review import JUDGED, Order
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.review import Review, ReviewQueue

#: The orders in the order the page lists them.
ORDERS = (
    Order.NOT_REVIEWED,
    Order.TABLE,
    Order.CHANGED,
    Order.MOST_GIVEN,
    Order.UNREACHABLE,
    Order.NEAR_COPIES,
    Order.FILTER,
)


@dataclass(frozen=True)
class AgentsGiven:
    """What agents' calls to the database were given in a period: calls per content sha256."""

    period: str
    calls: int
    given: dict[str, int]
    #: Lines of the log skipped as damaged.
    notes: tuple[str, ...] = ()


async def agents_given(services: WindowServices, review: Review) -> AgentsGiven:
    """Read the agent log on a worker and join its calls of this month to the review."""

    def read() -> AgentsGiven:
        notes: list[str] = []
        records = core.agent_log.LogFiles().records(notes)
        report = core.review.served_report(
            records, review.place.db_name, review.state, core.review.this_month()
        )
        return AgentsGiven(report.period.label, report.calls, report.given, tuple(notes))

    return await asyncio.get_running_loop().run_in_executor(services.chores, read)


def progress_text(review: Review, agents: AgentsGiven | None) -> str:
    """``reviewed 412 of 2,000 · 18 wrong · 7 outdated · covers 63% of what agents were given this
    month`` (blocking: run it on the review book's thread)."""
    share = None
    if agents is not None:
        verdict = review.state.ledger.verdict
        reviewed = sum(1 for sha in agents.given if verdict(sha) in JUDGED)
        share = core.review.AgentShare(len(agents.given), reviewed, agents.period, agents.calls)
    return review.progress(share).text()


def _report_missing(what: str, page: str, key: str, name: str) -> InvalidInputError:
    return InvalidInputError(
        f"no {what} of {name} was made in this window",
        hint=f"Make one on the {page} page ({key}), then choose this order again.",
    )


async def make_queue(
    services: WindowServices, review: Review, order: Order, where: str, agents: AgentsGiven | None
) -> ReviewQueue:
    """The queue of ``review``'s rows in ``order`` (``where``: the filter's, for :attr:`Order.FILTER`)."""
    state, book, name = review.state, services.reviews, review.place.db_name
    if order == Order.TABLE:
        return await book.call(core.review.table_order, state)
    if order == Order.NOT_REVIEWED:
        return await book.call(core.review.not_reviewed_order, state)
    if order == Order.CHANGED:
        return await book.call(core.review.changed_order, state)
    if order == Order.MOST_GIVEN:
        given = agents if agents is not None else await agents_given(services, review)
        note = f"{len(given.given):,} entries given in {given.calls:,} calls {given.period}"
        return await book.call(core.review.most_given_order, state, given.given, note)
    if order == Order.UNREACHABLE:
        reach = services.last_reports.reach.get(name)
        if reach is None:
            raise _report_missing("reach report", "Reach", "Ctrl+0", name)
        return await core.review.unreachable_queue(await services.session(), review, reach)
    if order == Order.NEAR_COPIES:
        duplicates = services.last_reports.duplicates.get(name)
        if duplicates is None:
            raise _report_missing("duplicates report", "Duplicates", "Ctrl+6", name)
        return await book.call(core.review.near_copies_queue, review, duplicates)
    if not where.strip():
        raise InvalidInputError(
            "the order “a filter” needs a filter",
            hint="Type one in the browse filter's syntax (LanceDB SQL), e.g. meta.lang = 'en'.",
        )
    return await core.review.filter_queue(await services.session(), review, where.strip())
