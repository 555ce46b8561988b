"""Browsing a chosen set of rows (a selection made on the map) page by page, by LanceDB row id.

The rows are read with ``take_row_ids``, which reads only the rows asked for. The browse filters still
apply: the id/content text and the SQL predicate narrow the selection to the rows they keep.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import MAX_PAGE, Page, both, filter_expression, page_from_arrow


async def fetch_selected_page(
    session: Session,
    target: TableTarget,
    row_ids: npt.NDArray[np.uint64],
    *,
    offset: int,
    limit: int,
    filter_text: str = "",
    where: str | None = None,
) -> Page:
    """Rows ``offset`` .. ``offset + limit`` of the selected rows (in row-id order) that the filters keep."""
    opened = await session.tables.open(target)
    if where is not None:
        await opened.check_filter(where)
    chosen = np.asarray(row_ids, np.uint64)
    if len(chosen) > 1 and not (chosen[1:] > chosen[:-1]).all():  # a map's choice comes sorted already
        chosen = np.unique(chosen)
    keeping = both(filter_expression(opened.columns, filter_text), where)
    if keeping is not None:
        chosen = chosen[np.isin(chosen, await opened.matching_row_ids(keeping), assume_unique=True)]
    offset, limit = max(0, offset), max(0, min(limit, MAX_PAGE))
    wanted = [int(row_id) for row_id in chosen[offset : offset + limit]]
    if not wanted:
        return Page(offset, len(chosen), version=opened.version)
    taking = opened.table.take_row_ids(wanted).select(opened.row_columns).with_row_id()
    rows = await read_query(taking, f'reading table "{target.table_name}"')
    return page_from_arrow(rows, opened, offset, len(chosen))
