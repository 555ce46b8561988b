"""Near-duplicates of a whole table: its vectors in memory, grouped on the session's compute thread.

The grouping itself (exact, blocked, cancellable) is :mod:`recall_gui.core.inspect.near_duplicates`; this
module
gets the table's vectors from the session's cache (reading them if need be, read-only), runs the grouping
with progress and cancellation, and reads the id and content of every row that is in a group.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.errors import RecallError
from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS, check_threshold
from recall_gui.core.inspect.near_duplicates import GroupFinder, Grouping
from recall_gui.core.session.exact import bytes_per_row
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CACHE_ENV, MB, CachedTable, NotCached, cache_limit, rows_at
from recall_gui.core.storage.rows import columns_from_arrow
from recall_gui.core.storage.table_cache import OpenTable
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import pyarrow as pa

DEFAULT_METRIC = "cosine"


class NotInMemoryError(RecallError):
    """A table whose vectors cannot be held in memory, so its near-duplicates cannot be looked for."""


@dataclass(frozen=True)
class GroupEntry:
    """One row of a group."""

    row_id: int
    id: str
    content: str


@dataclass(frozen=True)
class DuplicateGroup:
    """Rows linked by pairs within the threshold, in table order, and the largest distance between two."""

    entries: tuple[GroupEntry, ...]
    max_distance: float

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(entry.id for entry in self.entries)


@dataclass(frozen=True)
class DuplicateReport:
    """The near-duplicates of one table at one version."""

    table: str
    version: int
    threshold: float
    metric: str
    groups: tuple[DuplicateGroup, ...]
    #: Rows compared, and pairs found within the threshold.
    rows: int
    pairs: int
    elapsed_ms: float
    #: Rows not compared: vectors of zero length, which have no cosine distance.
    left_out: int = 0

    def left_out_text(self, other_metric: str) -> str | None:
        """Why rows were not compared, and how to compare them (``other_metric``: how the front end
        names the squared L2 choice); ``None`` when every row was."""
        if not self.left_out:
            return None
        rows = "1 entry has" if self.left_out == 1 else f"{self.left_out:,} entries have"
        return (
            f"{rows} a zero vector (all components 0): cosine distance is undefined for it, so "
            f"{'it was' if self.left_out == 1 else 'they were'} left out; {other_metric} compares them."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "metric": self.metric,
            "left_out": self.left_out,
            "groups": [
                {"ids": list(group.ids), "max_distance": round(group.max_distance, 7)}
                for group in self.groups
            ],
        }


async def find_duplicates(
    session: Session,
    target: TableTarget,
    *,
    threshold: float | None = None,
    metric: str = DEFAULT_METRIC,
    on_progress: Callable[[float], None] | None = None,
) -> DuplicateReport:
    """Every group of near-duplicate rows of ``target`` (``threshold``: the largest distance that makes
    two rows near-duplicates, by default :data:`DEFAULT_THRESHOLDS` of ``metric``).

    ``on_progress`` is called on the event loop with the share of the work done. Cancelling the awaiting
    task stops the work after the step in progress (about ``near_duplicates.STEP_SECONDS``).
    """
    threshold = check_threshold(
        DEFAULT_THRESHOLDS.get(metric, 0.0) if threshold is None else threshold, metric
    )
    started = time.perf_counter()
    opened = await session.tables.open(target)
    cached = await _vectors(session, opened)
    loop = asyncio.get_running_loop()
    finder = GroupFinder(cached.vectors, threshold, metric)
    # A step per job: a search queued on the same thread meanwhile waits for one step at most.
    while not finder.done:
        await loop.run_in_executor(session.compute_executor, finder.step)
        if on_progress is not None:
            on_progress(finder.progress)
    cancel = threading.Event()
    job = loop.run_in_executor(session.compute_executor, finder.finish, cancel)
    try:
        grouping = await asyncio.shield(job)
    except asyncio.CancelledError:
        cancel.set()  # measuring the groups stops at the next group; its OperationCancelled is expected
        job.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise
    groups = await _group_rows(opened, cached, grouping)
    return report_of(
        opened, threshold=threshold, metric=metric, grouping=grouping, groups=groups, started=started
    )


def report_of(
    opened: OpenTable,
    *,
    threshold: float,
    metric: str,
    grouping: Grouping,
    groups: tuple[DuplicateGroup, ...],
    started: float,
) -> DuplicateReport:
    """The report of a grouping of ``opened`` begun at ``started`` (``time.perf_counter()``)."""
    elapsed = (time.perf_counter() - started) * 1000
    return DuplicateReport(
        opened.name,
        opened.version,
        threshold,
        metric,
        groups,
        grouping.rows,
        grouping.pairs,
        elapsed,
        grouping.left_out,
    )


async def _vectors(session: Session, opened: OpenTable) -> CachedTable:
    """The table's vectors in memory, or a clear refusal saying why they cannot be."""
    what = f'Cannot look for near-duplicates in "{opened.name}"'
    limit = cache_limit()
    if isinstance(limit, int):
        need = await opened.count_rows() * bytes_per_row(opened.columns.vector_dim)
        if need > limit:
            raise NotInMemoryError(
                f"{what}: its vectors need {need / MB:,.0f} MB in memory, more than the "
                f"{limit / MB:,.0f} MB allowed ({CACHE_ENV})",
                hint=f"Set {CACHE_ENV} to at least {need // MB + 1} and start again; nothing slower is "
                "tried in its place.",
            )
    cached = await session.vectors.get(opened, wait=True)
    if isinstance(cached, NotCached):
        raise NotInMemoryError(
            f"{what}: its vectors cannot be held in memory ({cached.reason})",
            hint=f"Near-duplicates are found among the vectors in memory only; see {CACHE_ENV}.",
        )
    return cached


async def _group_rows(
    opened: OpenTable, cached: CachedTable, grouping: Grouping
) -> tuple[DuplicateGroup, ...]:
    """The id and content of every grouped row: from memory when the table's other columns are held
    there, else read from the table by row id."""
    import numpy as np

    if not grouping.groups:
        return ()
    positions = np.concatenate(grouping.groups)
    rows = await rows_at(opened, cached, positions, f'reading the near-duplicates of "{opened.name}"')
    return entries_of(opened, rows, grouping)


def entries_of(opened: OpenTable, rows: pa.Table | None, grouping: Grouping) -> tuple[DuplicateGroup, ...]:
    """The groups with the id and content of their rows (``rows``: the grouped rows, group after group;
    ``None`` when some were no longer in the table)."""
    if not grouping.groups:
        return ()
    if rows is None:
        raise RecallError(
            f'"{opened.name}" changed while its near-duplicates were looked for', hint="Look for them again."
        )
    found = columns_from_arrow(rows, opened.columns)
    groups: list[DuplicateGroup] = []
    at = 0
    for members, largest in zip(grouping.groups, grouping.max_distances, strict=True):
        entries = tuple(
            GroupEntry(int(found.row_ids[at + k] or 0), found.ids[at + k], found.contents[at + k])
            for k in range(len(members))
        )
        groups.append(DuplicateGroup(entries, largest))
        at += len(members)
    return tuple(groups)
