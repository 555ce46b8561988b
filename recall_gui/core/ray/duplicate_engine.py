"""The Ray engine of near-duplicates: the table read with lance-ray, partitioned, exact per partition.

The plan (:mod:`recall_gui.core.ray.partitions`): k-means centroids of a seeded sample, every vector
sent to its home partition and, as a guest, to every partition it could have a near-duplicate in. Each
partition's pairs within the threshold are found by the local engine's own exact code
(:class:`recall_gui.core.inspect.near_duplicates.GroupFinder`, the same float64 distances), and the
driver links the pairs into groups; :func:`recall_gui.core.inspect.duplicates.run_engine` measures,
orders and reads them as for the local engine, so the report is the same.

Only the vector column and row ids are read (column push-down), rows without a vector are left out by the
reader (filter push-down), and the table is read at the version the driver opened, with the database's
storage options. Nothing is written: the only copies are Ray's in-memory blocks.
"""

from __future__ import annotations

import asyncio
import functools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from recall_gui.core.base.errors import OperationCancelled, RecallError
from recall_gui.core.base.own_thread import on_own_thread
from recall_gui.core.inspect.duplicates import (
    DEFAULT_METRIC,
    DuplicateReport,
    Linked,
    LinkJob,
    Progress,
    off_loop,
    run_engine,
)
from recall_gui.core.inspect.near_duplicates import GroupFinder, groups_of_pairs
from recall_gui.core.ray.cluster import ray_running
from recall_gui.core.ray.connection import watched
from recall_gui.core.ray.partitions import assign, kmeans, reach_of, unit_rows
from recall_gui.core.session.exact import VectorMatrix
from recall_gui.core.session.magnitudes import UNBOUNDED_VECTORS
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import rows_by_id
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import pyarrow as pa


#: Rows a partition holds at home, about (the default number of partitions follows from it).
PARTITION_ROWS = 50_000
#: Rows sampled to fit the centroids.
SAMPLE_ROWS = 20_000
SEED = 0
#: The partition of the rows left out of a cosine comparison (zero vectors): counted, never compared.
LEFT_OUT = -1


class RayJobError(RecallError):
    """A table that the Ray engine cannot read, or a job that failed on the cluster."""


class UnboundedVectors(RecallError):
    """Vectors with an infinite value, or too long for float32: no exact order of their distances."""

    def __init__(self, hint: str | None = None) -> None:
        super().__init__(f"{UNBOUNDED_VECTORS}: their distances are not defined", hint=hint)


#: What to check when a job failed on the cluster for a reason of its own.
NODE_HINT = "Check that every Ray node can read the database and has recall-gui[scale] installed."


def job_error(error: Exception, uri: str) -> Exception:
    """What a failed Ray job says. A task's own error comes back as the task's cause (Ray Data is told
    to hand it on as it was raised: :func:`recall_gui.core.ray.cluster.ray_cluster`): this app's
    own (:class:`RecallError`) is said in its own words, the words the local engine uses; any other in
    one line naming it, never Ray's retry advice. An error of the driver's own is kept as it is."""
    cause = getattr(error, "cause", None)
    if not isinstance(cause, Exception):
        if isinstance(error, RecallError | OSError):
            return error
        cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
    if isinstance(cause, RecallError):
        return cause
    lines = str(cause).strip().splitlines()
    said = f"{type(cause).__name__}: {lines[0]}" if lines else type(cause).__name__
    return RayJobError(f"the Ray job on {uri} failed: {said}", hint=NODE_HINT)


@dataclass(frozen=True)
class PartitionPlan:
    """How the table was split: rows held by each partition (home and guests) and rows at home."""

    held: tuple[int, ...]
    home: tuple[int, ...]

    @property
    def guest_share(self) -> float:
        """Guests per row at home (0: no row was copied)."""
        homes = sum(self.home)
        return (sum(self.held) - homes) / homes if homes else 0.0


@dataclass(frozen=True)
class RayDuplicates:
    report: DuplicateReport
    plan: PartitionPlan


@dataclass(frozen=True)
class _Pairs:
    """What the partitions found: the rows in some pair (ascending row id) with their vectors, and the
    pairs as positions among those rows."""

    row_ids: npt.NDArray[np.uint64]
    matrix: npt.NDArray[np.float32]
    first: npt.NDArray[np.intp]
    second: npt.NDArray[np.intp]
    rows: int
    plan: PartitionPlan
    left_out: int


def lance_uri(target: TableTarget) -> str:
    """Where the table's Lance dataset lives: ``<database>/<table>.lance``."""
    if target.uri.startswith("db://"):
        raise RayJobError(
            f'"{target.table_name}" is in LanceDB Cloud ({target.uri}): Ray reads Lance datasets from a '
            "folder or an object store",
            hint="Use --engine local for it.",
        )
    return f"{target.uri.rstrip('/')}/{target.table_name}.lance"


@dataclass(frozen=True)
class RayLinked(Linked):
    """The groups the partitions linked, and how the table was split."""

    plan: PartitionPlan


class RayEngine:
    """The rows linked on the Ray this process is connected to
    (:func:`recall_gui.core.ray.cluster.ray_cluster`), ``partitions`` at a time (default: one per
    :data:`PARTITION_ROWS` rows). Cancelling stops the job between partitions."""

    def __init__(self, partitions: int | None = None) -> None:
        if partitions is not None and partitions < 1:
            raise RecallError(
                f"--partitions {partitions} is not a number of partitions", hint="Give 1 or more."
            )
        self.partitions = partitions

    async def link(self, job: LinkJob) -> RayLinked:
        target, opened, threshold, metric = job.target, job.opened, job.threshold, job.metric
        uri = lance_uri(target)
        rows = await opened.count_rows()
        loop = asyncio.get_running_loop()
        cancel = threading.Event()
        # The job's thread holds the progress callback alone, not the job: a cancelled job finishing its
        # step on Ray keeps no session alive.
        progress = job.progress

        def report_progress(share: float) -> None:
            loop.call_soon_threadsafe(progress, share)

        pairs_on_ray = functools.partial(
            _pairs_on_ray,
            uri=uri,
            storage_options=dict(target.options.storage_options),
            version=opened.version,
            vector=opened.columns.vector,
            threshold=threshold,
            metric=metric,
            partitions=self.partitions or max(1, math.ceil(rows / PARTITION_ROWS)),
            rows=rows,
            progress=report_progress,
            cancel=cancel,
        )
        # A cluster lost during the job ends it with an error, never with part of its pairs.
        on_ray = on_own_thread(
            "recall-ray-job", watched, pairs_on_ray, cancel, "the search for near-duplicates"
        )
        found: _Pairs = await off_loop(on_ray, cancel)
        groups = await loop.run_in_executor(
            job.session.compute_executor, groups_of_pairs, len(found.row_ids), found.first, found.second
        )
        what = f'reading the near-duplicates of "{opened.name}"'

        async def read_rows(positions: npt.NDArray[np.intp]) -> pa.Table | None:
            return await rows_by_id(opened, found.row_ids[positions], what)

        return RayLinked(
            found.matrix, groups, len(found.first), found.rows, found.left_out, read_rows, found.plan
        )


async def find_duplicates_on_ray(
    session: Session,
    target: TableTarget,
    *,
    threshold: float | None = None,
    metric: str = DEFAULT_METRIC,
    partitions: int | None = None,
    on_progress: Progress | None = None,
) -> RayDuplicates:
    """The report of :func:`recall_gui.core.inspect.duplicates.find_duplicates` computed by a
    :class:`RayEngine` of ``partitions``, with the partition plan."""
    report, linked = await run_engine(
        session, target, RayEngine(partitions), threshold=threshold, metric=metric, on_progress=on_progress
    )
    return RayDuplicates(report, linked.plan)


async def find_duplicates_in_ray(
    session: Session,
    target: TableTarget,
    *,
    address: str | None = None,
    threshold: float | None = None,
    metric: str = DEFAULT_METRIC,
    on_progress: Progress | None = None,
) -> DuplicateReport:
    """:func:`find_duplicates_on_ray` with Ray started for it (or the cluster at ``address`` joined) and
    stopped after it, without blocking the event loop."""
    async with ray_running(address):
        found = await find_duplicates_on_ray(
            session, target, threshold=threshold, metric=metric, on_progress=on_progress
        )
    return found.report


def _pairs_on_ray(
    *,
    uri: str,
    storage_options: dict[str, str],
    version: int,
    vector: str,
    threshold: float,
    metric: str,
    partitions: int,
    rows: int,
    progress: Callable[[float], None],
    cancel: threading.Event,
) -> _Pairs:
    """The Ray job (blocking): sample, centroids, assignment, exact pairs per partition."""
    try:
        table = read_vectors(uri, storage_options, version, vector)
        progress(0.0)
        sample = _sample(table, vector, metric, rows)
        if cancel.is_set():
            raise OperationCancelled("the search for near-duplicates was cancelled")
        centroids = kmeans(sample, partitions, SEED) if len(sample) else np.zeros((1, 1))
        progress(0.1)
        assigning = functools.partial(
            _assign_batch,
            vector=vector,
            metric=metric,
            centroids=centroids,
            reach=reach_of(threshold, metric),
        )
        assigned = table.map_batches(assigning, batch_format="pyarrow")
        pairing = functools.partial(_partition_pairs, threshold=threshold, metric=metric)
        found = assigned.groupby("partition").map_groups(pairing, batch_format="pyarrow")
        return _collect(found, len(centroids), progress, cancel, _scan_order(uri, version, storage_options))
    except Exception as error:  # Ray wraps a task's error: said in the words of its cause
        raise job_error(error, uri) from error


def read_vectors(uri: str, storage_options: dict[str, str], version: int, vector: str) -> Any:
    """The table's vector column and row ids at ``version`` as a Ray Dataset (rows without a vector left
    out by the reader)."""
    import lance_ray

    return lance_ray.read_lance(
        uri=uri,
        columns=[vector],
        filter=f"`{vector}` IS NOT NULL",
        storage_options=storage_options or None,
        dataset_options={"version": version},
        scanner_options={"with_row_id": True},
    )


def _scan_order(
    uri: str, version: int, storage_options: dict[str, str]
) -> Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.uint64]]:
    """A key of row ids in the order a scan of the table returns the rows (the order of the local
    engine's matrix): fragments in the manifest's order, rows by offset within each (LanceDB's row ids are
    row addresses, ``fragment << 32 | offset``). With stable row ids, the row ids themselves."""
    import lance

    dataset = lance.dataset(uri, version=version, storage_options=storage_options or None)
    if dataset.has_stable_row_ids:
        return lambda row_ids: row_ids
    rank = {fragment.fragment_id: number for number, fragment in enumerate(dataset.get_fragments())}

    def key(row_ids: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        fragments = (row_ids >> np.uint64(32)).tolist()
        ranks = np.array([rank.get(int(f), len(rank)) for f in fragments], np.uint64)
        return (ranks << np.uint64(32)) | (row_ids & np.uint64(0xFFFFFFFF))

    return key


def _sample(table: Any, vector: str, metric: str, rows: int) -> npt.NDArray[np.float64]:
    """A seeded sample of the usable vectors (length 1 for cosine) to fit the centroids on."""
    part = table if rows <= SAMPLE_ROWS else table.random_sample(SAMPLE_ROWS / rows, seed=SEED)
    chunks = []
    for batch in part.iter_batches(batch_format="pyarrow"):
        matrix, usable, _zero = usable_rows(batch, vector, metric)
        chunks.append(matrix[usable])
    if not chunks:
        return np.zeros((0, 0))
    sample = np.concatenate(chunks).astype(np.float64)
    return unit_rows(sample) if metric == "cosine" else sample


def usable_rows(
    batch: pa.Table | pa.RecordBatch, vector: str, metric: str
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """The batch's vectors as a float32 matrix, which rows join the comparison as the local engine's do
    (not null, no NaN: LanceDB never returns those; for cosine, not of zero length), and which are left
    out of it for their zero length."""
    column = batch.column(vector)
    if hasattr(column, "combine_chunks"):
        column = column.combine_chunks()
    dim = int(column.type.list_size)
    values = column.values.slice(column.offset * dim, len(column) * dim)
    matrix = values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(len(column), dim)
    usable = ~column.is_null().to_numpy(zero_copy_only=False)
    with np.errstate(over="ignore", invalid="ignore"):
        squares = np.einsum("ij,ij->i", matrix, matrix)
    usable &= ~np.isnan(matrix).any(axis=1)
    if np.isinf(squares[usable]).any():
        raise UnboundedVectors()
    zero = usable & (squares == 0) if metric == "cosine" else np.zeros(len(usable), bool)
    return matrix, usable & ~zero, zero


def _assign_batch(
    batch: pa.Table, *, vector: str, metric: str, centroids: npt.NDArray[np.float64], reach: float
) -> pa.Table:
    """One row per (partition, vector held there): the row's home and every partition it is a guest in."""
    import pyarrow as pa

    matrix, usable, zero = usable_rows(batch, vector, metric)
    all_ids = batch.column("_rowid").to_numpy()
    left_out = matrix[zero]
    matrix = matrix[usable]
    row_ids = all_ids[usable]
    rows = unit_rows(matrix) if metric == "cosine" else matrix.astype(np.float64)
    home, held = assign(rows, centroids, reach) if len(rows) else (np.empty(0, np.intp), [])
    picks = [members for members in held]
    where = np.concatenate(picks) if picks else np.empty(0, np.intp)
    partition = np.concatenate(
        [np.full(len(members), j, np.int32) for j, members in enumerate(picks)] or [np.empty(0, np.int32)]
    )
    dim = matrix.shape[1]
    # Rows left out (zero vectors under cosine) go to a partition of their own, only to be counted.
    partition = np.concatenate([partition, np.full(len(left_out), LEFT_OUT, np.int32)])
    kept = np.vstack([matrix[where], left_out])
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(kept.reshape(-1)), dim)
    return pa.table(
        {
            "partition": partition,
            "home": np.concatenate([home[where] == partition[: len(where)], np.ones(len(left_out), bool)]),
            "_rowid": np.concatenate([row_ids[where], all_ids[zero]]).astype(np.uint64),
            "vector": vectors,
        }
    )


def _partition_pairs(group: pa.Table, *, threshold: float, metric: str) -> pa.Table:
    """The pairs of one partition within the threshold (by the local engine's exact code), after a first
    row that tells the partition's size (``summary``)."""
    import pyarrow as pa

    at_home = group.column("home").to_numpy(zero_copy_only=False)
    if int(group.column("partition")[0].as_py()) == LEFT_OUT:
        at_home = at_home & False  # counted, never compared
    group = group.take(np.argsort(~at_home, kind="stable"))  # the rows at home first
    homes = int(np.count_nonzero(at_home))
    column = group.column("vector").combine_chunks()
    dim = int(column.type.list_size)
    matrix = column.values.to_numpy(zero_copy_only=False).astype(np.float32).reshape(len(column), dim)
    row_ids = group.column("_rowid").to_numpy()
    # A pair within the threshold meets where one of its rows is at home: pairs of two guests are skipped.
    held = VectorMatrix.build(matrix, row_ids)
    finder = GroupFinder(held, threshold, metric, keep_pairs=True, first_rows=homes)
    while not finder.done:
        finder.step()
    first, second = finder.close_pairs()
    partition = int(group.column("partition")[0].as_py())
    ends = np.concatenate([[0], row_ids[first]]).astype(np.uint64), np.concatenate([[0], row_ids[second]])
    vectors = [
        pa.FixedSizeListArray.from_arrays(
            pa.array(np.vstack([np.zeros((1, dim), np.float32), matrix[side]]).reshape(-1)), dim
        )
        for side in (first, second)
    ]
    summary = np.zeros(len(first) + 1, bool)
    summary[0] = True
    return pa.table(
        {
            "summary": summary,
            "partition": np.full(len(first) + 1, partition, np.int32),
            "held": np.where(summary, len(group), 0).astype(np.int64),
            "homes": np.where(summary, homes, 0).astype(np.int64),
            "first": ends[0],
            "second": ends[1].astype(np.uint64),
            "first_vector": vectors[0],
            "second_vector": vectors[1],
        }
    )


def _collect(
    found: Any,
    partitions: int,
    progress: Callable[[float], None],
    cancel: threading.Event,
    scan_key: Callable[[npt.NDArray[np.uint64]], npt.NDArray[np.uint64]],
) -> _Pairs:
    """Read the partitions' answers as they come: the distinct pairs, their rows' vectors in scan order,
    the plan."""
    held: dict[int, int] = {}
    home: dict[int, int] = {}
    firsts, seconds, vectors, ids = [], [], [], []
    for batch in found.iter_batches(batch_format="pyarrow"):
        if cancel.is_set():
            raise OperationCancelled("the search for near-duplicates was cancelled")
        summary = batch.column("summary").to_numpy(zero_copy_only=False)
        parts = batch.column("partition").to_numpy()
        for at in np.flatnonzero(summary):
            held[int(parts[at])] = int(batch.column("held")[at].as_py())
            home[int(parts[at])] = int(batch.column("homes")[at].as_py())
        pairs = np.flatnonzero(~summary)
        if len(pairs):
            first = batch.column("first").to_numpy()[pairs]
            second = batch.column("second").to_numpy()[pairs]
            firsts.append(first)
            seconds.append(second)
            for side, name in ((first, "first_vector"), (second, "second_vector")):
                column = batch.column(name).combine_chunks().take(pairs)
                dim = int(column.type.list_size)
                vectors.append(column.values.to_numpy(zero_copy_only=False).reshape(len(pairs), dim))
                ids.append(side)
        progress(0.1 + 0.9 * min(1.0, len(held.keys() - {LEFT_OUT}) / max(partitions, 1)))
    left_out = held.pop(LEFT_OUT, 0)
    home.pop(LEFT_OUT, None)
    order = sorted(held)
    plan = PartitionPlan(tuple(held[p] for p in order), tuple(home[p] for p in order))
    if not firsts:
        empty = np.empty(0, np.intp)
        nothing = np.zeros((0, 0), np.float32)
        return _Pairs(np.empty(0, np.uint64), nothing, empty, empty, sum(plan.home), plan, left_out)
    by_id, where = np.unique(np.concatenate(ids), return_index=True)
    scan = np.argsort(scan_key(by_id), kind="stable")  # the rows in scan order
    position = np.empty(len(scan), np.intp)
    position[scan] = np.arange(len(scan))
    row_ids = by_id[scan]
    matrix = np.concatenate(vectors)[where][scan].astype(np.float32)
    first = position[np.searchsorted(by_id, np.concatenate(firsts))]
    second = position[np.searchsorted(by_id, np.concatenate(seconds))]
    pairs = np.unique(np.stack([np.minimum(first, second), np.maximum(first, second)]), axis=1)
    return _Pairs(row_ids, matrix, pairs[0], pairs[1], sum(plan.home), plan, left_out)
