"""A whole table, or every row a filter keeps, written to a CSV or JSON file as it is read.

LanceDB streams the rows in batches; each batch is written and dropped before the next is read, so a
table of any size costs one batch of memory. The file appears under its name only when it is complete: it
is written beside it under a temporary name and renamed at the end, so an export that is cancelled (its
task cancelled) or fails leaves nothing behind and an older file of that name untouched.

The columns are the browsed table's, in the order the caller gives (the view's): the row number (the
position among the rows exported), the id, the content, and metadata columns by name, with the same values
the view copies and exports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.atomic import AtomicTextFile
from recall_gui.core.base.errors import ExportError
from recall_gui.core.base.output_paths import refuse_output
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.lance_calls import bounded
from recall_gui.core.storage.rows import ArrowColumns, columns_from_arrow
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import both, filter_expression
from recall_gui.core.tables.export import (
    ExportColumn,
    ExportFormat,
    ExportSource,
    RowWriter,
    plain_value,
    row_writer,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

#: Rows LanceDB is asked for at a time (it may send fewer).
BATCH_ROWS = 4096

#: Called with (rows written, rows to write) after each batch.
Progress = Callable[[int, int], None]


async def export_table(
    session: Session,
    target: TableTarget,
    path: Path,
    fmt: ExportFormat,
    columns: Sequence[ExportColumn],
    *,
    filter_text: str = "",
    where: str | None = None,
    row_ids: npt.NDArray[np.uint64] | None = None,
    progress: Progress | None = None,
    source: ExportSource | None = None,
) -> int:
    """Write every row of ``target`` (whose id or content contains ``filter_text``, that the LanceDB SQL
    predicate ``where`` keeps, and whose row id is in ``row_ids``, for each that is given) to ``path``;
    returns the number of rows written. Cancelling the task leaves no file. A path that is not a file to
    write (a FIFO, a device, a place inside a knowledge base) is refused before anything is read.
    ``source``: where the rows come from, said in the file (its version: the one read here)."""
    refuse_output(path, what="the export")
    opened = await session.tables.open(target)
    what = f'exporting table "{target.table_name}"'
    if where is not None:
        await opened.check_filter(where)
    where = both(filter_expression(opened.columns, filter_text), where)
    total = len(row_ids) if row_ids is not None else await opened.count_rows(where)
    query = opened.table.query().select(opened.row_columns).with_row_id()
    if where is not None:
        query = query.where(where)
    stream = await bounded(query.to_batches(max_batch_length=BATCH_ROWS), what)
    writes = _Writes(session)
    try:
        file = await writes.run(AtomicTextFile, path)
    except OSError as error:
        raise _not_written(path, error) from error
    done = 0
    try:
        if source is not None:
            source = replace(source, version=opened.version)
        titles = [column.title for column in columns]
        writer = await writes.run(row_writer, fmt, file.stream, titles, source)
        while (batch := await _next_batch(stream, what)) is not None:
            if row_ids is not None:  # rows chosen by hand (on the map): kept as they stream past
                batch = _kept(batch, row_ids)
            rows = _rows(columns_from_arrow(_as_table(batch), opened.columns), columns, done)
            await writes.run(writer.write, rows)
            done += len(rows)
            if progress is not None:
                progress(done, max(total, done))
        await writes.run(_finish, writer, file)
    except BaseException as error:
        writes.after_the_last(file.discard)
        if isinstance(error, OSError):
            raise _not_written(path, error) from error
        raise
    return done


class _Writes:
    """File work on the session's compute thread (formatting text and writing it is CPU and disk work
    the event loop, the window's GUI thread, should not do), one job after another in order."""

    def __init__(self, session: Session) -> None:
        self.executor = session.compute_executor
        self._last: Future[Any] | None = None

    async def run(self, call: Callable[..., Any], *args: Any) -> Any:
        self._last = self.executor.submit(call, *args)
        return await asyncio.wrap_future(self._last)

    def after_the_last(self, call: Callable[[], Any]) -> None:
        """``call()`` once no job is running any more: now, or when the one still running ends (on its
        thread; not queued, so a session closing meanwhile cannot drop it)."""
        last = self._last
        if last is None or last.done() or last.cancel():
            call()
        else:
            last.add_done_callback(lambda _job: call())


def _finish(writer: RowWriter, file: AtomicTextFile) -> None:
    writer.close()
    file.commit()


async def _next_batch(stream: Any, what: str) -> pa.RecordBatch | None:
    """The next batch, or ``None`` at the end; each batch is bounded in time, not the whole export."""
    try:
        batch: pa.RecordBatch = await bounded(anext(stream), what)
    except StopAsyncIteration:
        return None
    return batch


def _kept(batch: pa.RecordBatch, row_ids: npt.NDArray[np.uint64]) -> pa.RecordBatch:
    import numpy as np
    import pyarrow as pa

    return batch.filter(pa.array(np.isin(batch.column("_rowid").to_numpy(), row_ids)))


def _as_table(batch: pa.RecordBatch) -> pa.Table:
    import pyarrow as pa

    return pa.Table.from_batches([batch])


def _rows(found: ArrowColumns, columns: Sequence[ExportColumn], offset: int) -> list[tuple[Any, ...]]:
    """The cells of one batch, column by column as the caller asked, then row by row."""
    count = len(found.ids)
    cells: list[Sequence[Any]] = []
    for column in columns:
        if column.role == "row":
            cells.append(range(offset + 1, offset + count + 1))
        elif column.role == "id":
            cells.append(found.ids)
        elif column.role == "content":
            cells.append(found.contents)
        elif column.role == "content_sha256":
            cells.append([content_sha256(content) for content in found.contents])
        else:
            values = found.extra.get(column.name)
            cells.append([None] * count if values is None else [plain_value(value) for value in values])
    return list(zip(*cells, strict=True)) if cells else [() for _ in range(count)]


def _not_written(path: Path, error: OSError) -> ExportError:
    return ExportError(
        f"could not write {path}: {error.strerror or error}",
        hint="Choose another folder (one you may write, with room to spare). Nothing was written.",
    )
