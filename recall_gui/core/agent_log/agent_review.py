"""Looking back at the agent log: a logged call run again now, entries looked up by the ids an agent got,
and a database's coverage (which entries the logged calls returned at least once, and which never).
Where ids repeat in a table, entries are matched by the sha256 of their contents, which the log keeps for
each result.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recall_gui.core.agent_log.call_record import CallRecord
from recall_gui.core.agent_log.rank_changes import ReplayDiff, compare_ids
from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.tool import TOOL_NAME
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness, SearchReport
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import SEPARATOR, content_sha256, is_sha_prefix
from recall_gui.core.storage.entry_names import IdRepeats, digest_expression, hex_digests
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
        repeats = await harness.session.tables.id_repeats(report.database.target)
    except RecallError as error:
        return Replay(record, None, error.message, compare_ids(record.result_ids, ()))
    if not repeats:
        ids = tuple(hit.id for hit in report.result.hits)
        return Replay(record, report, None, compare_ids(record.result_ids, ids))
    # Ids repeat: the results then and now are matched by their contents, and named by them.
    then = [_named(repeats, entry_id, sha) for entry_id, sha in record.results()]
    now = [_named(repeats, hit.id, content_sha256(hit.content)) for hit in report.result.hits]
    return Replay(record, report, None, compare_ids(then, now))


def _named(repeats: IdRepeats, entry_id: str, sha: str) -> str:
    """An entry as a replay names and matches it: its id, or where the id is shared ``content·3f2a9c1e``
    (a record kept without digests names the id alone, which then matches no entry of today's)."""
    return repeats.label(entry_id, sha) if sha else entry_id


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


def named_results(record: CallRecord, repeats: IdRepeats) -> tuple[str, ...]:
    """A logged call's results as the window names them: ids, or where the table's ids repeat
    ``content·3f2a9c1e`` (from the digests the log kept; a record without them names the id alone)."""
    return tuple(_named(repeats, entry_id, sha) for entry_id, sha in record.results())


async def lookup_contents(session: Session, target: TableTarget, ids: Sequence[str]) -> dict[str, str]:
    """The content of each id that the table holds now (ids it no longer holds are left out); an entry
    named by its content (``content·3f2a9c1e``, an id several rows share) is looked up among that id's
    rows by its content's sha256."""
    opened = await session.tables.open(target)
    repeats = await opened.id_repeats()
    labelled = {name: split for name in ids if (split := _shared_label(name, repeats)) is not None}
    found: dict[str, str] = {}
    if labelled:
        found |= await _contents_by_label(opened, labelled, f'reading table "{target.table_name}"')
        ids = [name for name in ids if name not in labelled]
    return found | await _contents_by_id(opened, ids, f'reading table "{target.table_name}"')


def _shared_label(name: str, repeats: IdRepeats) -> tuple[str, str] | None:
    """``content·3f2a9c1e`` as its id and digits, when the id is one the table's rows share."""
    entry_id, separator, digits = name.rpartition(SEPARATOR)
    if separator and is_sha_prefix(digits) and repeats.is_shared(entry_id):
        return entry_id, digits
    return None


async def _contents_by_label(
    opened: OpenTable, labelled: dict[str, tuple[str, str]], what: str
) -> dict[str, str]:
    """The content of each entry named by its id and the start of its content's sha256."""
    assert opened.columns.id is not None
    shared = sorted({entry_id for entry_id, _digits in labelled.values()})
    where = f"{_id_expression(opened)} IN ({', '.join(_literal(entry_id) for entry_id in shared)})"
    select = {"id": _id_expression(opened), "content": _quote(opened.columns.content)}
    select["digest"] = digest_expression(opened.columns.content)
    rows = await read_query(opened.table.query().where(where).select(select).with_row_id(), what)
    found: dict[str, str] = {}
    ids, contents = rows.column("id").to_pylist(), rows.column("content").to_pylist()
    for entry_id, content, sha in zip(ids, contents, hex_digests(rows.column("digest")), strict=True):
        for name, (wanted, digits) in labelled.items():
            if entry_id == wanted and sha.startswith(digits):
                found.setdefault(name, "" if content is None else str(content))
    return found


async def _contents_by_id(opened: OpenTable, ids: Sequence[str], what: str) -> dict[str, str]:
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
    """Of a table's rows now, those the logged calls to its database returned at least once (by id, and
    by content where ids repeat)."""

    db_name: str
    entries: int
    returned: int
    #: The rows never returned, in table order: their ids, or ``content·3f2a9c1e`` where ids repeat.
    never_returned: tuple[str, ...]
    #: Their LanceDB row ids (to browse them), in the same order.
    never_returned_rows: tuple[int, ...]
    #: The successful calls to this database that were counted.
    calls: int
    table_version: int
    #: The ids several rows of the table share (those rows are matched by their contents' sha256).
    repeats: IdRepeats = field(default_factory=IdRepeats)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "db_name": self.db_name,
            "entries": self.entries,
            "returned": self.returned,
            "never_returned": list(self.never_returned),
        }
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        return data


def returned_ids(records: Iterable[CallRecord], db_name: str) -> tuple[set[str], int]:
    """Every id the successful calls of agents to ``db_name`` returned, and how many such calls there
    were (the window's own Agent-view calls are not agents')."""
    entries, calls = returned_entries(records, db_name)
    return {entry_id for entry_id, _sha in entries}, calls


def returned_entries(records: Iterable[CallRecord], db_name: str) -> tuple[set[tuple[str, str]], int]:
    """Every entry (id, content sha256: empty where the record kept none) the successful calls of agents
    to ``db_name`` returned, and how many such calls there were."""
    entries: set[tuple[str, str]] = set()
    calls = 0
    for record in records:
        if record.from_window:
            continue
        if record.tool == TOOL_NAME and record.error is None and record.db_name == db_name:
            entries.update(record.results())
            calls += 1
    return entries, calls


async def coverage(session: Session, entry: DatabaseEntry, records: Iterable[CallRecord]) -> Coverage:
    """Read the table's ids (and, where ids repeat, its contents' sha256) and split its rows into
    returned and never returned. Where an id is shared, a row counts as returned when a call returned
    that id with that content (a call logged without digests returned none of them in particular)."""
    returned, calls = returned_entries(records, entry.name)
    returned_ids = {entry_id for entry_id, _sha in returned}
    opened = await session.tables.open(entry.target)
    repeats = await opened.id_repeats()
    id_column, content_column = opened.columns.id, opened.columns.content
    columns = {"id": "`" + id_column.replace("`", "``") + "`"} if id_column else {}
    if repeats:
        columns["digest"] = digest_expression(content_column)
    query = opened.table.query().select(columns).with_row_id()
    rows = await read_query(query, f'reading table "{entry.table_name}"')
    row_ids: list[int] = rows.column("_rowid").to_pylist()
    if id_column:
        ids = ["" if value is None else str(value) for value in rows.column("id").to_pylist()]
    else:
        ids = [str(row_id) for row_id in row_ids]
    names = list(ids)
    never: list[int] = []
    shas = hex_digests(rows.column("digest")) if repeats else []
    for number, entry_id in enumerate(ids):
        if not repeats.is_shared(entry_id):
            if entry_id not in returned_ids:
                never.append(number)
            continue
        names[number] = repeats.label(entry_id, shas[number])
        if (entry_id, shas[number]) not in returned:
            never.append(number)
    return Coverage(
        db_name=entry.name,
        entries=len(ids),
        returned=len(ids) - len(never),
        never_returned=tuple(names[number] for number in never),
        never_returned_rows=tuple(row_ids[number] for number in never),
        calls=calls,
        table_version=opened.version,
        repeats=repeats,
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
