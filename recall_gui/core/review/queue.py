"""The order entries are reviewed in (:class:`ReviewQueue`): rows of one snapshot, by position, and the
next or previous one from any place in it.

A queue is fixed when it is made: marking an entry does not move the others, so the previous entry and
Undo stay where they were. Walking "not reviewed only" skips the rows that have a verdict by then.
Table order holds every row; the other orders hold the rows they are about (docs/REVIEW.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recall_gui.core.review.orders import Order
from recall_gui.core.review.review_state import NOT_REVIEWED, ReviewState
from recall_gui.core.review.snapshot import Positions, TableSnapshot, digests_of

#: Rows looked at per step when walking to the next row without a verdict (most steps need one).
_WINDOW = 4096


@dataclass(frozen=True, eq=False)
class ReviewQueue:
    """Rows of the snapshot of ``version`` in the order they are reviewed."""

    order: Order
    version: int
    positions: Positions
    #: What the user should know about how the queue was made ("" when nothing).
    note: str = ""

    def __len__(self) -> int:
        return len(self.positions)

    def position(self, index: int) -> int:
        """The row position (in the snapshot) of the queue's ``index``-th entry."""
        return int(self.positions[index])

    def index_of(self, position: int) -> int | None:
        """Where the row at ``position`` stands in the queue (``None`` when it is not in it)."""
        found = np.flatnonzero(self.positions == position)
        return int(found[0]) if len(found) else None

    def next_index(self, after: int, state: ReviewState, *, not_reviewed_only: bool = False) -> int | None:
        """The index after ``after`` (``-1``: from the start), or of the first row after it without a
        verdict; ``None`` at the end."""
        start = max(after + 1, 0)
        if not not_reviewed_only:
            return start if start < len(self) else None
        while start < len(self):
            window = self.positions[start : start + _WINDOW]
            free = np.flatnonzero(state.codes[window] == NOT_REVIEWED)
            if len(free):
                return start + int(free[0])
            start += _WINDOW
        return None

    def previous_index(
        self, before: int, state: ReviewState, *, not_reviewed_only: bool = False
    ) -> int | None:
        """The index before ``before`` (or of the last row before it without a verdict); ``None`` at the
        start."""
        end = min(before, len(self))
        if not not_reviewed_only:
            return end - 1 if end > 0 else None
        while end > 0:
            start = max(0, end - _WINDOW)
            free = np.flatnonzero(state.codes[self.positions[start:end]] == NOT_REVIEWED)
            if len(free):
                return start + int(free[-1])
            end = start
        return None

    def counter(self, index: int) -> str:
        """``17 of 2,000`` (the queue's place, from 1)."""
        return f"{index + 1:,} of {len(self):,}"


def _queue(order: Order, state: ReviewState, positions: Positions, note: str = "") -> ReviewQueue:
    return ReviewQueue(order, state.snapshot.version, np.asarray(positions, np.intp), note)


def table_order(state: ReviewState) -> ReviewQueue:
    return _queue(Order.TABLE, state, np.arange(len(state), dtype=np.intp))


def not_reviewed_order(state: ReviewState) -> ReviewQueue:
    """The rows without a verdict now (a skipped row has one), in table order."""
    return _queue(Order.NOT_REVIEWED, state, np.flatnonzero(state.codes == NOT_REVIEWED))


def changed_order(state: ReviewState) -> ReviewQueue:
    return _queue(Order.CHANGED, state, np.flatnonzero(state.changed_mask))


def most_given_order(state: ReviewState, given: Mapping[str, int], note: str = "") -> ReviewQueue:
    """The rows agents were given, most often first (``given``: calls per content sha256, see
    :func:`~recall_gui.core.review.agent_join.served_report`); ties in table order."""
    shas = [sha for sha, count in given.items() if count > 0]
    counts = np.zeros(len(state), np.int64)
    if shas:
        index, positions = state.snapshot.match_digests(digests_of(shas))
        counts[positions] = np.array([given[sha] for sha in shas], np.int64)[index]
    held = np.flatnonzero(counts)
    ordered = held[np.argsort(-counts[held], kind="stable")]
    return _queue(Order.MOST_GIVEN, state, ordered, note)


def positions_of_shas(snapshot: TableSnapshot, shas: Sequence[str]) -> Positions:
    """The rows holding each content in turn (each row once, in the order of ``shas``)."""
    if not shas:
        return np.empty(0, np.intp)
    index, positions = snapshot.match_digests(digests_of(list(shas)))
    ordered = positions[np.lexsort((positions, index))]
    _values, first = np.unique(ordered, return_index=True)
    return ordered[np.sort(first)]


def content_order(order: Order, state: ReviewState, shas: Sequence[str], note: str = "") -> ReviewQueue:
    """A queue of the rows holding the given contents, in their order (near-copies, unreachable)."""
    return _queue(order, state, positions_of_shas(state.snapshot, shas), note)


def filter_order(state: ReviewState, row_ids: npt.ArrayLike, where: str) -> ReviewQueue:
    """The rows a filter keeps (their row ids at the snapshot's version), in table order."""
    positions = np.sort(state.snapshot.positions_of_row_ids(row_ids))
    return _queue(Order.FILTER, state, positions, f"where {where}")
