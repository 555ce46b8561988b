""" "More like this": the table searched with one of its own rows' stored vectors, through the search
pipeline an agent's query takes (the row itself comes first, at distance ~0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.json_output import json_text
from recall_gui.core.base.types import SearchHit
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness, SearchReport
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import SEPARATOR, content_sha256, entry_label, is_sha_prefix
from recall_gui.core.storage.entry_names import IdRepeats, digest_expression, hex_digests
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_row

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class FoundEntry:
    """The row an id names (the first in table order, or the one whose content a label names), and how
    many rows carry that id."""

    hit: SearchHit
    sharing_id: int
    #: The hex digits of its content's sha256 that the name gave (``content·3f2a9c1e``), if it gave some.
    sha_prefix: str = ""

    @property
    def sha256(self) -> str:
        return content_sha256(self.hit.content)

    @property
    def label(self) -> str:
        """Its name where its id is shared (``content·3f2a9c1e``), else its id."""
        return entry_label(self.hit.id, self.sha256) if self.sharing_id > 1 else self.hit.id


def like_label(entry_id: str) -> str:
    """What a "more like this" search shows where a search by text shows its query."""
    return f"more like {entry_id}"


def split_label(name: str) -> tuple[str, str] | None:
    """``content·3f2a9c1e`` as the id and the hex digits it gives; ``None`` for a name of another form."""
    entry_id, separator, digits = name.rpartition(SEPARATOR)
    return (entry_id, digits) if separator and is_sha_prefix(digits) else None


async def find_entry(session: Session, target: TableTarget, entry_id: str) -> FoundEntry:
    """The row whose id is ``entry_id``, vector included (for a table without an id column, ``entry_id``
    is the row id the window shows). Where ids repeat, ``entry_id`` may name one row by its content:
    ``content·3f2a9c1e``, the id and the first hex digits of its content's sha256 (as results show it);
    digits that more than one content starts with are refused."""
    opened = await session.tables.open(target)
    id_column = opened.columns.id
    missing = InvalidInputError(
        f'no entry with the id "{entry_id}" in "{target.table_name}"',
        hint="Copy the id from `recall-gui search` or from the window.",
    )
    if id_column is None:
        if not entry_id.isdigit():
            raise missing
        hit = await fetch_row(session, target, int(entry_id))
        if hit is None:
            raise missing
        return FoundEntry(hit, 1)
    rows = await _rows_with_id(opened, entry_id, [id_column])
    labelled = split_label(entry_id) if rows.num_rows == 0 else None
    if labelled is None:
        if rows.num_rows == 0:
            raise missing
        hit = await fetch_row(session, target, rows.column("_rowid")[0].as_py())
        if hit is None:
            raise missing
        return FoundEntry(hit, rows.num_rows)
    return await _by_content(session, target, opened, *labelled)


async def _by_content(
    session: Session, target: TableTarget, opened: OpenTable, entry_id: str, digits: str
) -> FoundEntry:
    """The row of id ``entry_id`` whose content's sha256 starts with ``digits``."""
    rows = await _rows_with_id(opened, entry_id, {"digest": digest_expression(opened.columns.content)})
    shas = hex_digests(rows.column("digest"))
    matching = [number for number, sha in enumerate(shas) if sha.startswith(digits)]
    if not matching:
        raise InvalidInputError(
            f'no entry "{entry_id}" whose content\'s sha256 starts with {digits} in "{target.table_name}"',
            hint="Copy the name from `recall-gui search` (its notes name each result) or from the window.",
        )
    if len({shas[number] for number in matching}) > 1:
        raise InvalidInputError(
            f'{len(matching)} entries "{entry_id}" have contents whose sha256 starts with {digits}',
            hint="Give more of its hex digits, e.g. "
            + ", ".join(entry_label(entry_id, shas[n]) + shas[n][8:12] for n in matching[:3]),
        )
    hit = await fetch_row(session, target, rows.column("_rowid")[matching[0]].as_py())
    if hit is None:
        raise InvalidInputError(f'the entry "{entry_id}·{digits}" is no longer in "{target.table_name}"')
    return FoundEntry(hit, rows.num_rows, digits)


async def _rows_with_id(opened: OpenTable, entry_id: str, columns: list[str] | dict[str, str]) -> pa.Table:
    """The rows whose id is ``entry_id`` (``columns`` of them, or what the expressions of a mapping make,
    and their row ids), in table order."""
    import pyarrow as pa

    assert opened.columns.id is not None
    literal = "'" + entry_id.replace("'", "''") + "'"
    column = "`" + opened.columns.id.replace("`", "``") + "`"
    field = opened.schema.field(opened.columns.id).type
    is_text = pa.types.is_string(field) or pa.types.is_large_string(field)
    where = f"{column} = {literal}" if is_text else f"CAST({column} AS VARCHAR) = {literal}"
    query = opened.table.query().where(where).select(columns).with_row_id()
    rows = await read_query(query, f'finding "{entry_id}"')
    return rows.sort_by("_rowid")


async def more_like(
    harness: Harness, entry: DatabaseEntry, hit: SearchHit, limit: int, name: str | None = None
) -> SearchReport:
    """The ``limit`` rows nearest to ``hit``'s stored vector, as the agent's search ranks them; ``name``:
    the entry's name where its id does not tell it apart."""
    if hit.vector is None:
        raise InvalidInputError(
            f'the entry "{hit.id}" has no stored vector to search with',
            hint="Its vector is missing (null) in the table.",
        )
    import numpy as np

    vector = np.asarray(hit.vector, dtype=np.float32)
    return await harness.search_vector(entry, vector, limit, label=like_label(name or hit.id))


def similar_json(report: SearchReport, repeats: IdRepeats | None = None) -> str:
    """``recall-gui search``'s JSON with each result's distance: ``{"query", "results": [{"id", "content",
    "distance"}]}`` (a distance that is not finite as a string: :mod:`recall_gui.core.base.json_output`);
    where ``repeats`` shares a result's id, its ``content_sha256`` too, and ``ids_repeat`` says so."""
    result = report.result
    shared = repeats or IdRepeats()

    def named(hit: SearchHit) -> dict[str, Any]:
        found: dict[str, Any] = {"id": hit.id}
        if shared.is_shared(hit.id):
            found["content_sha256"] = content_sha256(hit.content)
        return found | {"content": hit.content, "distance": hit.distance}

    data: dict[str, Any] = {"query": result.query, "results": [named(hit) for hit in result.hits]}
    if shared:
        data["ids_repeat"] = shared.to_dict()
    return json_text(data, ensure_ascii=False, separators=(",", ":"))
