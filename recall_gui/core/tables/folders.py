"""A LanceDB folder (or object-store URI) opened by hand: its tables, their rows, columns and model.

Nothing is registered and nothing is written: a local folder that does not exist is reported (LanceDB
would create it), and tables are only listed, described and counted. A table opened this way becomes a
:class:`~recall_gui.core.registry.registry_types.DatabaseEntry` of origin "opened", which every front end
browses and searches exactly as it does a registered database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from recall_gui.core.base.errors import ColumnError, FolderError, InvalidInputError, RecallError, StorageError
from recall_gui.core.registry.models import LocalModel
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.session.session import Session
from recall_gui.core.storage.columns import ColumnMapping, detect_columns
from recall_gui.core.storage.lance_calls import bounded, slow_hint
from recall_gui.core.storage.table_cache import list_tables
from recall_gui.core.storage.target import folder_shown, is_local_uri, local_path
from recall_gui.core.tables.model_detection import (
    ModelDetection,
    available_local_models,
    chosen,
    detect_model,
    parse_model,
    require_fit,
)

if TYPE_CHECKING:
    from lancedb.db import AsyncConnection

#: What a LanceDB table's folder is called: ``NAME.lance``.
TABLE_SUFFIX = ".lance"
_OPEN_HINT = "Open the folder you gave lancedb.connect(): the one that holds the NAME.lance folders."


@dataclass(frozen=True)
class Place:
    """Where to open: a database folder or URI, how to reach it, and a table it names (``NAME.lance``)."""

    uri: str
    storage_options: Mapping[str, str] = field(default_factory=dict)
    table: str | None = None

    def __hash__(self) -> int:
        return hash((self.uri, tuple(sorted(self.storage_options.items())), self.table))


def place_of(text: str, storage_options: Mapping[str, str] | None = None) -> Place:
    """The place a user typed or dropped: a local folder must exist (it is never created); the folder of
    one table (``…/notes.lance``) opens its database with that table chosen."""
    options = dict(storage_options or {})
    text = text.strip()
    if not text:
        raise InvalidInputError("no folder given", hint=_OPEN_HINT)
    if not is_local_uri(text):
        uri = text.rstrip("/")
        head, _, last = uri.rpartition("/")
        if last.endswith(TABLE_SUFFIX) and "://" in head and head.split("://", 1)[1]:
            return Place(head, options, last.removesuffix(TABLE_SUFFIX))
        return Place(uri, options)
    path = local_path(text)
    if not path.exists():
        raise FolderError(f"folder {folder_shown(text)} does not exist", hint="Check the path. " + _OPEN_HINT)
    if not path.is_dir():
        raise FolderError(f"{folder_shown(text)} is a file, not a folder", hint=_OPEN_HINT)
    path = path.resolve()
    if path.suffix == TABLE_SUFFIX and (path / "_versions").is_dir():
        return Place(str(path.parent), options, path.name.removesuffix(TABLE_SUFFIX))
    return Place(str(path), options)


@dataclass(frozen=True)
class FolderTable:
    """One table of an opened folder, as the table picker lists it."""

    name: str
    row_count: int | None
    columns: ColumnMapping | None
    model: ModelDetection | None
    #: Why the table cannot be opened (its columns cannot be told, its files cannot be read).
    problem: str | None = None
    #: What kind of problem: "columns" (no column can play a role: name them), "storage" (its files
    #: cannot be read: permissions, damage).
    problem_kind: Literal["columns", "storage"] = "columns"
    #: What to do about the problem.
    problem_hint: str | None = None

    @property
    def summary(self) -> str:
        """One line: rows, columns, vector width and model (or what is wrong)."""
        if self.problem is not None:
            return self.problem
        parts = [f"{self.row_count:,} rows" if self.row_count is not None else "rows unknown"]
        if self.columns is not None:
            parts.append(f"text in “{self.columns.content}”, {self.columns.vector_dim}-d vectors")
        if self.model is not None:
            parts.append(self.model.spec.label if self.model.found else "no model: browse only")
        return " · ".join(parts)


@dataclass(frozen=True)
class Folder:
    """An opened folder and its tables, in LanceDB's order."""

    place: Place
    tables: tuple[FolderTable, ...]

    @property
    def names(self) -> list[str]:
        return [table.name for table in self.tables]

    def table(self, name: str | None = None) -> FolderTable:
        """``name`` (or the table the place named, or the only table); refuses a name that is not there,
        and a choice left open among several tables."""
        name = name if name is not None else self.place.table
        listing = ", ".join(self.names)
        if name is None:
            if len(self.tables) == 1:
                return self.tables[0]
            raise InvalidInputError(
                f"{self.place.uri} holds {len(self.tables)} tables ({listing})",
                hint="Name the one to open with --table.",
            )
        found = next((table for table in self.tables if table.name == name), None)
        if found is None:
            raise FolderError(
                f'table "{name}" not found in {self.place.uri} (tables there: {listing})',
                hint="Check the table name.",
            )
        return found


async def read_folder(session: Session, place: Place) -> Folder:
    """List ``place``'s tables with their rows, columns and model; raises :class:`FolderError` when it
    holds none."""
    connection = await session.tables.connect(place.uri, place.storage_options)
    names = await bounded(list_tables(connection), f"listing the tables of {place.uri}")
    if not names:
        raise FolderError(f"no LanceDB table in {place.uri}", hint=_no_table_hint(place.uri))
    available = available_local_models()
    tables = await asyncio.gather(*(_describe(connection, name, available) for name in sorted(names)))
    return Folder(place, tuple(tables))


async def _describe(connection: AsyncConnection, name: str, available: list[LocalModel]) -> FolderTable:
    what, hint = f'reading table "{name}"', slow_hint(connection.uri)
    try:
        table = await bounded(connection.open_table(name), what, timeout_hint=hint)
        schema = await bounded(table.schema(), what, timeout_hint=hint)
        rows = await bounded(table.count_rows(), what, timeout_hint=hint)
    except RecallError as error:
        if isinstance(error, StorageError) and "timed out" in error.message:
            raise  # slow, not damaged: its own message says why
        problem, hint = unreadable(connection.uri, name, error.message)
        return FolderTable(name, None, None, None, problem, "storage", hint)
    try:
        columns = detect_columns(schema)
    except ColumnError as error:
        return FolderTable(name, rows, None, None, error.message, "columns", _NAME_COLUMNS_HINT)
    model = detect_model(schema, columns.vector, columns.vector_dim, available)
    return FolderTable(name, rows, columns, model)


_NAME_COLUMNS_HINT = (
    "Choose another table, or register it with its column names (id_column, content_column, "
    "vector_column) in the registry."
)


def unreadable(uri: str, name: str, message: str) -> tuple[str, str]:
    """Why a table's files cannot be read, in the user's words, and what to do: permission to read them
    is missing, or they are damaged or incomplete (LanceDB's own reason kept)."""
    files = f"{uri.rstrip('/')}/{name}{TABLE_SUFFIX}"
    reason = message.split(" failed: ", 1)[-1]
    if "permission denied" in message.lower() or "access denied" in message.lower():
        return (
            f'table "{name}" cannot be read: you may not read its files (permission denied on {files})',
            "Give your user read access to that folder (e.g. chmod -R u+rX), or open it as a user who may "
            "read it.",
        )
    return (
        f'table "{name}" cannot be read: its files are damaged or incomplete ({reason})',
        f"Check {files}: a file may be truncated or missing (an interrupted copy or write); restore it "
        "from a copy.",
    )


def _no_table_hint(uri: str) -> str:
    """Where the tables may be instead: subfolders of a local folder that hold ``NAME.lance`` folders."""
    if not is_local_uri(uri):
        return "Check the URI and its prefix. " + _OPEN_HINT
    candidates: list[str] = []
    try:
        for child in sorted(Path(uri).iterdir()):
            if child.is_dir() and any(p.suffix == TABLE_SUFFIX for p in child.iterdir() if p.is_dir()):
                candidates.append(str(child))
    except OSError:
        pass
    if candidates:
        return "LanceDB tables are in " + ", ".join(candidates[:3]) + ": open that folder instead."
    return _OPEN_HINT


def opened_entry(folder: Folder, table: FolderTable, model: ModelDetection | None = None) -> DatabaseEntry:
    """``table`` as a database entry that is not in the registry (origin "opened")."""
    if table.problem is not None or table.columns is None:
        raise FolderError(
            f'table "{table.name}" in {folder.place.uri} cannot be opened: {table.problem}',
            hint=table.problem_hint or _NAME_COLUMNS_HINT,
        )
    detection = model or table.model
    assert detection is not None  # a table whose columns are known has a detection
    return DatabaseEntry(
        name=table.name,
        uri=folder.place.uri,
        description="",
        embedder=detection.spec,
        table=table.name,
        storage_options=dict(folder.place.storage_options),
        origin="opened",
        model_reason=detection.reason,
    )


@dataclass(frozen=True)
class OpenedTable:
    """A table opened by its folder: the entry to browse and search, and the folder it is in."""

    entry: DatabaseEntry
    folder: Folder
    table: FolderTable


async def open_table(
    session: Session,
    where: str,
    *,
    table: str | None = None,
    model: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> OpenedTable:
    """Open one table of the folder or URI ``where`` (the command line's ``--path``): the table named,
    or the only one; the model named (it must fit the table's width), or the one detected."""
    folder = await read_folder(session, place_of(where, storage_options))
    found = folder.table(table)
    detection = None
    if model is not None and found.columns is not None:
        spec = parse_model(model)
        require_fit(spec, found.columns.vector_dim, found.name)
        detection = chosen(spec)
    return OpenedTable(opened_entry(folder, found, detection), folder, found)
