"""Looking back at the agent log: a logged call run again now, entries looked up by the ids an agent got,
and a database's coverage (which entries the logged calls returned at least once, and which never).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.agent_log.rank_changes import ReplayDiff, compare_ids
from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.tool import TOOL_NAME
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness, SearchReport
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.rows import columns_from_arrow
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import Page, page_from_arrow

if TYPE_CHECKING:
    import pyarrow as pa

#: Ids looked up per query (an ``IN`` list of this many literals).
LOOKUP_CHUNK = 256


@dataclass(frozen=True)
class Replay:
    """A logged call run again: the search now (or its error now) and how its ids changed."""

    record: CallRecord
    report: SearchReport | None
    error: str | None
    diff: ReplayDiff


async def replay(harness: Harness, record: CallRecord) -> Replay:
    """Send the logged arguments through ``harness`` as the agent's call, exactly as they were received."""
    if record.tool != TOOL_NAME:
        message = f"Unknown tool: {record.tool} (this server has {TOOL_NAME})"
        return Replay(record, None, message, compare_ids(record.result_ids, ()))
    arguments = record.arguments if isinstance(record.arguments, dict) else {}
    try:
        report = await harness.run(arguments)
    except RecallError as error:
        return Replay(record, None, error.message, compare_ids(record.result_ids, ()))
    ids = tuple(hit.id for hit in report.result.hits)
    return Replay(record, report, None, compare_ids(record.result_ids, ids))


# --- entries by id ----------------------------------------------------------------------------------


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _id_expression(opened: OpenTable) -> str:
    """The id column as text in LanceDB SQL (ids are shown as text, whatever the column's type)."""
    assert opened.columns.id is not None
    name = opened.columns.id
    kind = str(opened.schema.field(name).type)
    return _quote(name) if kind in ("string", "large_string", "utf8") else f"CAST({_quote(name)} AS string)"


async def lookup_contents(session: Session, target: TableTarget, ids: Sequence[str]) -> dict[str, str]:
    """The content of each id that the table holds now (ids it no longer holds are left out)."""
    opened = await session.tables.open(target)
    what = f'reading table "{target.table_name}"'
    wanted = list(dict.fromkeys(ids))
    found: dict[str, str] = {}
    columns = [name for name in (opened.columns.id, opened.columns.content) if name]
    if opened.columns.id is None:  # the row id serves as id
        row_ids = [int(entry_id) for entry_id in wanted if entry_id.isdigit()]
        if row_ids:
            taking = opened.table.take_row_ids(row_ids).select(columns).with_row_id()
            _add_found(await read_query(taking, what), opened, found)
        return found
    expression = _id_expression(opened)
    for start in range(0, len(wanted), LOOKUP_CHUNK):
        chunk = wanted[start : start + LOOKUP_CHUNK]
        where = f"{expression} IN ({', '.join(_literal(entry_id) for entry_id in chunk)})"
        query = opened.table.query().where(where).select(columns).with_row_id()
        _add_found(await read_query(query, what), opened, found)
    return found


def _add_found(rows: pa.Table, opened: OpenTable, found: dict[str, str]) -> None:
    read = columns_from_arrow(rows, opened.columns)
    for entry_id, content in zip(read.ids, read.contents, strict=True):
        found.setdefault(entry_id, content)


# --- coverage -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """Of a table's rows now, those whose id the logged calls to its database returned at least once."""

    db_name: str
    entries: int
    returned: int
    #: Ids of the rows never returned, in table order.
    never_returned: tuple[str, ...]
    #: Their LanceDB row ids (to browse them), in the same order.
    never_returned_rows: tuple[int, ...]
    #: The successful calls to this database that were counted.
    calls: int
    table_version: int

    def to_dict(self) -> dict[str, object]:
        return {
            "db_name": self.db_name,
            "entries": self.entries,
            "returned": self.returned,
            "never_returned": list(self.never_returned),
        }


def returned_ids(records: Iterable[CallRecord], db_name: str) -> tuple[set[str], int]:
    """Every id the successful calls of agents to ``db_name`` returned, and how many such calls there
    were (the window's own Agent-view calls are not agents')."""
    ids: set[str] = set()
    calls = 0
    for record in records:
        if record.from_window:
            continue
        if record.tool == TOOL_NAME and record.error is None and record.db_name == db_name:
            ids.update(record.result_ids)
            calls += 1
    return ids, calls


async def coverage(session: Session, entry: DatabaseEntry, records: Iterable[CallRecord]) -> Coverage:
    """Read the table's ids (and nothing else) and split its rows into returned and never returned."""
    returned, calls = returned_ids(records, entry.name)
    opened = await session.tables.open(entry.target)
    columns = [opened.columns.id] if opened.columns.id else []
    query = opened.table.query().select(columns).with_row_id()
    rows = await read_query(query, f'reading table "{entry.table_name}"')
    row_ids: list[int] = rows.column("_rowid").to_pylist()
    if opened.columns.id:
        ids = ["" if value is None else str(value) for value in rows.column(opened.columns.id).to_pylist()]
    else:
        ids = [str(row_id) for row_id in row_ids]
    never = [
        (entry_id, row_id) for entry_id, row_id in zip(ids, row_ids, strict=True) if entry_id not in returned
    ]
    return Coverage(
        db_name=entry.name,
        entries=len(ids),
        returned=len(ids) - len(never),
        never_returned=tuple(entry_id for entry_id, _row in never),
        never_returned_rows=tuple(row_id for _id, row_id in never),
        calls=calls,
        table_version=opened.version,
    )


async def rows_by_row_id(
    session: Session, target: TableTarget, row_ids: Sequence[int], *, offset: int, limit: int
) -> Page:
    """Rows ``offset`` .. ``offset + limit`` of ``row_ids`` as a page (in that order, without vectors), to
    browse a coverage's never-returned rows like a table; rows gone since are left out."""
    opened = await session.tables.open(target)
    wanted = list(row_ids[max(0, offset) : max(0, offset) + max(0, limit)])
    if not wanted:
        return Page(offset, len(row_ids))
    taking = opened.table.take_row_ids(wanted).select(opened.row_columns).with_row_id()
    rows = await read_query(taking, f'reading table "{target.table_name}"')
    position = {row_id: index for index, row_id in enumerate(rows.column("_rowid").to_pylist())}
    order = [position[row_id] for row_id in wanted if row_id in position]
    return page_from_arrow(rows.take(order), opened, offset, len(row_ids))
