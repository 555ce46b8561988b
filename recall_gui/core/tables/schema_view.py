"""What a filter can name: every column of a table (nested fields too), its Arrow type, whether it may be
empty, its role (id, text, vector), the vector's width and metric, and the indexes on it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from recall_gui.core.session.session import Session
from recall_gui.core.storage.open_table import OpenTable, TableIndex
from recall_gui.core.storage.target import TableTarget

if TYPE_CHECKING:
    import pyarrow as pa

Role = Literal["id", "text", "vector", ""]


@dataclass(frozen=True)
class ColumnFacts:
    """One column (or a field of a struct column, named ``parent.field`` as filters name it)."""

    name: str
    arrow_type: str
    nullable: bool
    role: Role = ""
    #: The vector column's width.
    width: int | None = None
    #: The vector column's metric: its index's, or the one a search uses without an index.
    metric: str | None = None
    #: The indexes on this column, as ``NAME (TYPE)``.
    indexes: tuple[str, ...] = ()
    #: 0 for a column, 1 for a field of a struct column, and so on.
    depth: int = 0

    @property
    def role_text(self) -> str:
        if self.role == "vector":
            return f"vector ({self.width}-d, {self.metric})" if self.metric else f"vector ({self.width}-d)"
        return self.role


@dataclass(frozen=True)
class SchemaFacts:
    """The columns of one table at one version, and its indexes."""

    table: str
    version: int
    columns: tuple[ColumnFacts, ...]
    indexes: tuple[TableIndex, ...]

    @property
    def filterable(self) -> list[str]:
        """Every name a filter may use (the vector column aside)."""
        return [column.name for column in self.columns if column.role != "vector"]


def _fields(field: pa.Field, prefix: str, depth: int) -> Iterator[tuple[str, pa.Field, int]]:
    import pyarrow as pa

    name = f"{prefix}{field.name}"
    yield name, field, depth
    if pa.types.is_struct(field.type):
        for child in field.type:
            yield from _fields(child, f"{name}.", depth + 1)


def schema_facts(opened: OpenTable, metric: str | None = None) -> SchemaFacts:
    """The facts of ``opened``'s schema; ``metric``: the one its searches use (else the table's default)."""
    columns = opened.columns
    roles: dict[str, Role] = {columns.vector: "vector", columns.content: "text"}
    if columns.id:
        roles[columns.id] = "id"
    found = []
    for top in opened.schema:
        for name, field, depth in _fields(top, "", 0):
            role = roles.get(name, "") if depth == 0 else ""
            on = tuple(
                f"{index.name} ({index.index_type}" + (f", {index.metric})" if index.metric else ")")
                for index in opened.indexes
                if index.columns[:1] == (name,)
            )
            vector = role == "vector"
            found.append(
                ColumnFacts(
                    name,
                    str(field.type),
                    bool(field.nullable),
                    role,
                    columns.vector_dim if vector else None,
                    (metric or opened.default_metric()) if vector else None,
                    on,
                    depth,
                )
            )
    return SchemaFacts(opened.name, opened.version, tuple(found), opened.indexes)


async def describe_schema(session: Session, target: TableTarget) -> SchemaFacts:
    """The schema facts of ``target`` (at its version, when it is pinned to one)."""
    opened = await session.tables.open(target)
    return schema_facts(opened, target.options.metric)
