"""An open table: its resolved columns, indexes and version, the row counts and filters it has seen at
that version, and the metric a search of it uses."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base import compat
from recall_gui.core.base.errors import FilterError, InvalidInputError, StorageError
from recall_gui.core.base.own_thread import on_own_thread
from recall_gui.core.storage.columns import ColumnMapping
from recall_gui.core.storage.entry_names import IdRepeats, count_ids
from recall_gui.core.storage.filter_guard import FilterGuard, FilterProbe
from recall_gui.core.storage.filter_text import column_names, filter_problem, plain_filter_reason
from recall_gui.core.storage.lance_calls import SOURCE_LOCATION, bounded, operation_timeout, read_query
from recall_gui.core.storage.target import TableOptions, is_local_uri, local_path

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa
    from lancedb.table import AsyncTable


@dataclass(frozen=True)
class TableIndex:
    """An index of a table: on which columns, and for a vector index the metric it was built for."""

    name: str
    index_type: str
    columns: tuple[str, ...]
    metric: str | None = None


#: Ids counted on the event loop's thread at most (more are counted on a thread of their own).
COUNT_INLINE_ROWS = 20_000
#: Filters whose row counts an open table keeps (one per filter a user typed while browsing it).
MAX_COUNTS_KEPT = 64


@dataclass
class OpenTable:
    """An open table with its resolved columns; refreshed cheaply when the table's version moves."""

    uri: str
    name: str
    #: What answers ``version``, ``schema``, ``list_indices``, ``count_rows``…: the compiled or Python table.
    native: Any
    schema: pa.Schema
    columns: ColumnMapping
    indexes: tuple[TableIndex, ...]
    version: int
    #: When ``version`` was last read (``time.monotonic()``).
    checked_at: float = field(default_factory=time.monotonic)
    #: Rows at ``version``, in all (key ``None``) or matching a filter (key: its SQL). A version is
    #: immutable, so a count holds until the version moves, when the table is described afresh.
    row_counts: dict[str | None, int] = field(default_factory=dict)
    #: Opened at a chosen older version (a read-only view that never moves), not following the latest.
    pinned: bool = False
    #: Row ids kept by each filter at ``version`` (key: its SQL), for exact search with a filter.
    matching: dict[str, npt.NDArray[np.uint64]] = field(default_factory=dict)
    #: Where a user's filter is first evaluated (a child process), so that it cannot abort this one.
    guard: FilterGuard | None = None
    #: How the table is reached (the guard's worker opens it too).
    storage_options: Mapping[str, str] = field(default_factory=dict)
    compiled: bool = False  #: whether :attr:`native` is LanceDB's compiled table (no ``lancedb`` package)
    _python: AsyncTable | None = field(default=None, repr=False)

    @property
    def table(self) -> AsyncTable:
        """LanceDB's Python table (its query builders): over a compiled one, made when first asked for."""
        if self._python is None:
            self._python = compat.python_table(self.native) if self.compiled else self.native
        return self._python

    def query(self) -> Any:
        """A query of the table for the search's builders (``nearest_to``, ``column``, ``where`` …)."""
        return compat.CompiledQuery(self.native.query()) if self.compiled else self.table.query()

    #: The ids its rows share at ``version`` (read once, when first asked for).
    repeats: IdRepeats | None = None

    async def count_rows(self, where: str | None = None) -> int:
        """Rows at this version (matching ``where``): counted once per version and filter."""
        counted = self.row_counts.get(where)
        if counted is None:
            counted = int(await bounded(self.native.count_rows(where), f'reading table "{self.name}"'))
            self._keep_count(where, counted)
        return counted

    async def id_repeats(self) -> IdRepeats:
        """The ids several rows share at this version: its id column read once (a table without one
        names its rows by their row ids, which never repeat)."""
        if self.repeats is None:
            if self.columns.id is None:
                self.repeats = IdRepeats(await self.count_rows())
            else:
                query = self.table.query().select([self.columns.id])
                ids = (await read_query(query, f'reading the ids of table "{self.name}"')).column(
                    self.columns.id
                )
                if len(ids) <= COUNT_INLINE_ROWS:
                    self.repeats = count_ids(ids)
                else:  # counting a million ids takes a tenth of a second: not on the window's thread
                    self.repeats = await on_own_thread("recall-ids", count_ids, ids)
        return self.repeats

    def _keep_count(self, where: str | None, counted: int) -> None:
        if len(self.row_counts) >= MAX_COUNTS_KEPT:
            self.row_counts.clear()
        self.row_counts[where] = counted

    async def check_filter(self, where: str) -> None:
        """Refuse a filter this table cannot apply, with LanceDB's reason and the columns it has; a
        filter is an expression, never a statement."""
        problem = filter_problem(where)
        if problem is not None:
            raise FilterError(
                f"the filter {where!r} is not one expression: {problem}",
                hint="A filter is a condition such as source = 'a.md' AND page < 3, never a statement.",
            )
        try:
            if where not in self.row_counts and self.guard is not None:
                # First counted in the guard's worker: a filter that exhausts memory ends it, not us.
                place = str(local_path(self.uri)) if is_local_uri(self.uri) else self.uri
                probe = FilterProbe(place, self.name, self.version, where, self.storage_options)
                self._keep_count(where, await self.guard.count(probe, operation_timeout()))
            await self.count_rows(where)
        except StorageError as error:
            reason = plain_filter_reason(SOURCE_LOCATION.sub("", error.message.split(" failed: ", 1)[-1]))
            names = [name for name in column_names(self.schema) if name != self.columns.vector]
            raise FilterError(
                f"the filter {where!r} cannot be used: {reason}",
                hint=f"Columns of this table: {', '.join(names)}. Text goes in single quotes: "
                "source = 'a.md' AND page < 3.",
            ) from None

    async def matching_row_ids(self, where: str) -> npt.NDArray[np.uint64]:
        """The row ids of the rows that ``where`` keeps, at this version (read once per filter)."""
        import numpy as np

        found = self.matching.get(where)
        if found is None:
            await self.check_filter(where)
            query = self.table.query().where(where).select([]).with_row_id()
            rows = await read_query(query, f'filtering table "{self.name}"')
            found = np.sort(rows.column("_rowid").to_numpy())
            if len(self.matching) >= MAX_COUNTS_KEPT:
                self.matching.clear()
            self.matching[where] = found
        return found

    def vector_index(self) -> TableIndex | None:
        """The index on the vector column that a search can go through (one with a metric)."""
        return next(
            (ix for ix in self.indexes if ix.metric and ix.columns[:1] == (self.columns.vector,)), None
        )

    @property
    def row_columns(self) -> list[str]:
        """Every column but the vector: what a page or a hit reads besides it."""
        return self.columns.without_vector(self.schema.names)

    def default_metric(self) -> str:
        """The index's metric when there is a vector index (so the index is used), else cosh's L2."""
        index = self.vector_index()
        return index.metric if index and index.metric else "l2"


#: The distance metrics a search (and the map's neighbours) can use.
METRICS = ("l2", "cosine", "dot")


def metric_for(opened: OpenTable, options: TableOptions | None) -> str:
    """The registry's metric if it names one, else the index's (so the index is used), else cosh's L2."""
    metric = ((options.metric if options else None) or opened.default_metric()).lower()
    if metric not in METRICS:
        raise InvalidInputError(
            f'unknown distance metric "{metric}" (expected one of {", ".join(METRICS)})',
            hint='Fix "metric" in the registry entry of this database, or remove it to use the default.',
        )
    return metric
