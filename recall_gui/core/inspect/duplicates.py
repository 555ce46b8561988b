"""Near-duplicates of a whole table: one way to find them, run by an engine in this process or on Ray.

:func:`find_duplicates` does what every engine shares: the threshold checked, the table opened at its
version, then the engine links the rows (every pair within the threshold, exactly:
:mod:`recall_gui.core.inspect.near_duplicates`), and each group is measured (its widest pair), ordered
and given the id and content of its rows. An engine only finds the groups of linked rows among the
vectors: :class:`LocalEngine` among the table's vectors in memory, on the session's compute thread, a
short step at a time; :class:`recall_gui.core.ray.duplicate_engine.RayEngine` partition by partition on
a Ray cluster. Both give the same report (``tests/core/test_ray_engine.py``).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from recall_gui.core.base.errors import RecallError
from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS, GROUPING_RULE, check_threshold
from recall_gui.core.inspect.near_duplicates import GroupFinder, Grouping, measured_grouping
from recall_gui.core.session.exact import bytes_per_row
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CACHE_ENV, MB, CachedTable, NotCached, cache_limit, rows_at
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.rows import columns_from_arrow
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

DEFAULT_METRIC = "cosine"

Progress = Callable[[float], None]


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
    """Rows linked by pairs within the threshold, in table order, and the two of them farthest apart."""

    entries: tuple[GroupEntry, ...]
    max_distance: float
    #: The two entries ``max_distance`` lies between.
    widest_pair: tuple[GroupEntry, GroupEntry]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(entry.id for entry in self.entries)

    def chained(self, threshold: float) -> bool:
        """Whether two of its entries lie beyond ``threshold``, linked only through others."""
        return self.max_distance > threshold


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
    #: The ids several rows of the table share (those entries are named by their content).
    repeats: IdRepeats = field(default_factory=IdRepeats)

    def label(self, entry: GroupEntry) -> str:
        """An entry's short name: its id, or ``content·3f2a9c1e`` where its id is shared."""
        return self.repeats.label(entry.id, content_sha256(entry.content)) if self.repeats else entry.id

    def name(self, entry: GroupEntry) -> str:
        """An entry's name in a line: its id, or its short name and first words where its id is shared."""
        return self.repeats.name(entry.id, entry.content)

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
        """The groups' entries by id, or ``content·3f2a9c1e`` where ids repeat (``ids_repeat`` says so)."""
        data: dict[str, Any] = {
            "threshold": self.threshold,
            "metric": self.metric,
            "grouping": GROUPING_RULE,
            "left_out": self.left_out,
            "groups": [
                {
                    "ids": [self.label(entry) for entry in group.entries],
                    "max_distance": round(group.max_distance, 7),
                    "widest_pair": [self.label(entry) for entry in group.widest_pair],
                    "chained": group.chained(self.threshold),
                }
                for group in self.groups
            ],
        }
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        return data


@dataclass(frozen=True)
class Linked:
    """What an engine found: groups of rows linked by pairs within the threshold, as positions
    (ascending within a group) among the rows of ``matrix``, and how to read those rows."""

    matrix: npt.NDArray[np.float32]
    groups: list[npt.NDArray[np.intp]]
    #: Pairs within the threshold, rows compared, rows left out (zero vectors under cosine).
    pairs: int
    rows: int
    left_out: int
    #: The rows at some positions of ``matrix``, in that order (``None``: some are no longer in the table).
    read_rows: Callable[[npt.NDArray[np.intp]], Awaitable[pa.Table | None]]


Linked_co = TypeVar("Linked_co", bound=Linked, covariant=True)


@dataclass(frozen=True)
class LinkJob:
    """What an engine is asked: link the rows of ``target`` (open as ``opened``) by pairs within
    ``threshold`` of ``metric``; ``progress`` gets the share of the work done, on the event loop."""

    session: Session
    target: TableTarget
    opened: OpenTable
    threshold: float
    metric: str
    progress: Progress


class Engine(Protocol[Linked_co]):
    """Where the rows are linked: in this process, or on Ray."""

    async def link(self, job: LinkJob) -> Linked_co:
        """The groups of rows linked by pairs within the threshold; cancelling stops the work soon."""
        ...


async def find_duplicates(
    session: Session,
    target: TableTarget,
    *,
    threshold: float | None = None,
    metric: str = DEFAULT_METRIC,
    engine: Engine[Linked] | None = None,
    on_progress: Progress | None = None,
) -> DuplicateReport:
    """Every group of near-duplicate rows of ``target`` (``threshold``: the largest distance that makes
    two rows near-duplicates, by default :data:`DEFAULT_THRESHOLDS` of ``metric``), found by ``engine``
    (default: :class:`LocalEngine`).

    ``on_progress`` is called on the event loop with the share of the work done. Cancelling the awaiting
    task stops the work after the step in progress (about ``near_duplicates.STEP_SECONDS`` locally).
    """
    report, _linked = await run_engine(
        session, target, engine or LocalEngine(), threshold=threshold, metric=metric, on_progress=on_progress
    )
    return report


async def run_engine(
    session: Session,
    target: TableTarget,
    engine: Engine[Linked_co],
    *,
    threshold: float | None = None,
    metric: str = DEFAULT_METRIC,
    on_progress: Progress | None = None,
) -> tuple[DuplicateReport, Linked_co]:
    """:func:`find_duplicates` with ``engine``, and what the engine found."""
    threshold = check_threshold(
        DEFAULT_THRESHOLDS.get(metric, 0.0) if threshold is None else threshold, metric
    )
    started = time.perf_counter()
    opened = await session.tables.open(target)
    linked = await engine.link(
        LinkJob(session, target, opened, threshold, metric, on_progress or _no_progress)
    )
    cancel = threading.Event()
    grouping = await off_loop(
        asyncio.get_running_loop().run_in_executor(
            session.compute_executor,
            lambda: measured_grouping(
                linked.groups,
                linked.matrix,
                metric,
                pairs=linked.pairs,
                rows=linked.rows,
                left_out=linked.left_out,
                cancel=cancel,
            ),
        ),
        cancel,
    )
    groups = await _group_rows(opened, linked, grouping)
    elapsed = (time.perf_counter() - started) * 1000
    report = DuplicateReport(
        opened.name,
        opened.version,
        threshold,
        metric,
        groups,
        grouping.rows,
        grouping.pairs,
        elapsed,
        grouping.left_out,
        await opened.id_repeats(),
    )
    return report, linked


async def off_loop(job: asyncio.Future[Any], cancel: threading.Event) -> Any:
    """Await ``job`` (running on a thread); when the awaiting task is cancelled, set ``cancel`` so the
    job stops at its next check (its ``OperationCancelled`` is expected and dropped)."""
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        cancel.set()
        job.add_done_callback(lambda done: done.cancelled() or done.exception())
        raise


def _no_progress(_share: float) -> None:
    pass


class LocalEngine:
    """The rows linked in this process: the table's vectors in memory (read if need be, read-only),
    compared a step at a time on the session's compute thread, so a search queued meanwhile waits for one
    step at most."""

    async def link(self, job: LinkJob) -> Linked:
        session, opened = job.session, job.opened
        cached = await _vectors(session, opened)
        loop = asyncio.get_running_loop()
        finder = GroupFinder(cached.vectors, job.threshold, job.metric)
        while not finder.done:
            await loop.run_in_executor(session.compute_executor, finder.step)
            job.progress(finder.progress)
        groups = await loop.run_in_executor(session.compute_executor, finder.groups)
        what = f'reading the near-duplicates of "{opened.name}"'

        async def read_rows(positions: npt.NDArray[np.intp]) -> pa.Table | None:
            return await rows_at(opened, cached, positions, what)

        compared = finder.compared_rows
        return Linked(
            cached.vectors.matrix, groups, finder.pairs, compared, cached.vectors.rows - compared, read_rows
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


async def _group_rows(opened: OpenTable, linked: Linked, grouping: Grouping) -> tuple[DuplicateGroup, ...]:
    """The groups with the id and content of their rows."""
    import numpy as np

    if not grouping.groups:
        return ()
    rows = await linked.read_rows(np.concatenate(grouping.groups))
    if rows is None:
        raise RecallError(
            f'"{opened.name}" changed while its near-duplicates were looked for', hint="Look for them again."
        )
    found = columns_from_arrow(rows, opened.columns)
    groups: list[DuplicateGroup] = []
    at = 0
    for members, largest, widest in zip(
        grouping.groups, grouping.max_distances, grouping.widest, strict=True
    ):
        entries = tuple(
            GroupEntry(int(found.row_ids[at + k] or 0), found.ids[at + k], found.contents[at + k])
            for k in range(len(members))
        )
        first, second = (entries[int(np.searchsorted(members, position))] for position in widest)
        groups.append(DuplicateGroup(entries, largest, (first, second)))
        at += len(members)
    return tuple(groups)
