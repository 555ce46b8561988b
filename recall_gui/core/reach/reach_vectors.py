"""The stored vectors of a few rows, by row id: from the matrix a ranking held, else read from the table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from recall_gui.core.session.exact import VectorMatrix
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.open_table import OpenTable

#: Rows read by row id at once.
TAKE_ROWS = 8192

Stored = dict[int, npt.NDArray[np.float32] | None]


def from_matrix(held: VectorMatrix, row_ids: Sequence[int]) -> Stored:
    """The rows of ``held`` (rows it left out, null or NaN vectors, are ``None``)."""
    order = np.argsort(held.row_ids, kind="stable")
    ordered = held.row_ids[order]
    wanted = np.asarray(row_ids, dtype=np.uint64)
    spots = np.clip(np.searchsorted(ordered, wanted), 0, max(len(ordered) - 1, 0))
    found: Stored = {}
    for row_id, spot in zip(wanted.tolist(), spots.tolist(), strict=True):
        known = len(ordered) and int(ordered[spot]) == row_id
        found[int(row_id)] = np.asarray(held.matrix[order[spot]], dtype=np.float32) if known else None
    return found


async def stored_vectors(opened: OpenTable, row_ids: Sequence[int], held: VectorMatrix | None) -> Stored:
    """Each row's stored vector, ``None`` where it is missing or holds a NaN (LanceDB never returns such
    a row; one holding an infinite value it does, and it is kept); from ``held`` when given, else read
    from the table (its vector column only)."""
    if held is not None:
        return from_matrix(held, row_ids)
    found: Stored = {}
    vector = opened.columns.vector
    for start in range(0, len(row_ids), TAKE_ROWS):
        part = [int(row_id) for row_id in row_ids[start : start + TAKE_ROWS]]
        query = opened.table.take_row_ids(part).select([vector]).with_row_id()
        rows = await read_query(query, f'reading vectors of "{opened.name}"')
        values = rows.column(vector).to_pylist()
        for row_id, value in zip(rows.column("_rowid").to_pylist(), values, strict=True):
            array = None if value is None else np.asarray(value, dtype=np.float32)
            found[int(row_id)] = array if array is not None and not np.any(np.isnan(array)) else None
    for row_id in row_ids:
        found.setdefault(int(row_id), None)
    return found
