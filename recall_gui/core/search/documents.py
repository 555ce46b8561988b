"""How chunks make documents: which column (or which part of the id) names a chunk's document, and which
orders its chunks; and one chunk's document in order (its context: the chunks before and after it).

Detection, in order: a column named like a document (``source``, ``doc_id``, ``document``, ``file``,
``path``, ``url``…), also inside a ``metadata`` struct as LangChain and LlamaIndex write it; else the id's
prefix before ``#``, ``:`` or ``_chunk``. Chunks are ordered by a position column (``chunk``,
``chunk_index``, ``position``, ``page``…) or else by the number at the end of the id. The user may name the
columns instead; a position column of text (a section, a date) orders by its text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from recall_gui.core.base.errors import InvalidInputError, RecallError
from recall_gui.core.embedders.model_reading import ReadExtent
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.similar import find_entry
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.lance_calls import read_query

DOCUMENT_NAMES = (
    "source",
    "doc_id",
    "document_id",
    "document",
    "doc",
    "file",
    "file_path",
    "filename",
    "path",
    "url",
    "ref_doc_id",
)
POSITION_NAMES = (
    "chunk_index",
    "chunk_id",
    "chunk",
    "position",
    "seq",
    "index",
    "page",
    "page_number",
    "start_index",
)
ID_SEPARATORS = re.compile(r"^(?P<doc>.+?)(?:#|::|:|_chunk)(?P<rest>[^#:]*)$")
TRAILING_NUMBER = re.compile(r"(\d+)\D*$")


@dataclass(frozen=True)
class DocumentLayout:
    """Where a chunk's document and its place come from; ``None``: from the id."""

    document_column: str | None
    position_column: str | None

    def describe(self) -> str:
        document = self.document_column or "the id's prefix"
        position = self.position_column or "the number in the id"
        return f"documents by {document}, chunks ordered by {position}"


def _leaf_names(schema: Any) -> list[str]:
    """Column names, with a struct's fields as ``struct.field`` (LangChain's ``metadata.source``)."""
    import pyarrow as pa

    names = []
    for field in schema:
        names.append(field.name)
        if pa.types.is_struct(field.type):
            names.extend(f"{field.name}.{child.name}" for child in field.type)
    return names


def _pick(names: Sequence[str], wanted: Sequence[str]) -> str | None:
    by_leaf = {name.rsplit(".", 1)[-1].lower(): name for name in reversed(names)}
    return next((by_leaf[w] for w in wanted if w in by_leaf), None)


def layout_columns(schema: Any, taken: Sequence[str | None]) -> tuple[str, ...]:
    """The columns (a struct's fields as ``struct.field``) that may name a chunk's document or order its
    chunks: every one but the id, content and vector columns (``taken``)."""
    return tuple(name for name in _leaf_names(schema) if name not in taken)


def detect_layout(schema: Any, taken: Sequence[str | None]) -> DocumentLayout:
    names = layout_columns(schema, taken)
    return DocumentLayout(_pick(names, DOCUMENT_NAMES), _pick(names, POSITION_NAMES))


def checked_layout(schema: Any, layout: DocumentLayout) -> DocumentLayout:
    """``layout`` as the user chose it, if the table has its columns; else an :class:`InvalidInputError`
    naming the missing one and the columns there are."""
    names = _leaf_names(schema)
    for given in (layout.document_column, layout.position_column):
        if given is not None and given not in names:
            raise InvalidInputError(
                f'the table has no column "{given}"', hint=f"Its columns: {', '.join(names)}."
            )
    return layout


@dataclass(frozen=True)
class LayoutChoices:
    """What a table offers for telling its documents (the window's boxes): its ``columns``, the layout
    ``detected``, the one ``used`` — the user's choice when it applies — and, when the user's choice does not
    apply to the table (a version without its column), why it was ``refused``."""

    columns: tuple[str, ...]
    detected: DocumentLayout
    used: DocumentLayout
    chosen: bool
    refused: str | None = None

    def describe(self) -> str:
        how = "as you chose" if self.chosen else "detected"
        return f"{self.used.describe()}, {how}"


def layout_choices(schema: Any, taken: Sequence[str | None], chosen: DocumentLayout | None) -> LayoutChoices:
    """The layout of a table whose id, content and vector columns are ``taken``: ``chosen`` by the user
    when the table has its columns, else the one detected (saying why the choice was refused)."""
    columns = layout_columns(schema, taken)
    detected = detect_layout(schema, taken)
    if chosen is None:
        return LayoutChoices(columns, detected, detected, chosen=False)
    try:
        return LayoutChoices(columns, detected, checked_layout(schema, chosen), chosen=True)
    except InvalidInputError as error:
        return LayoutChoices(
            columns,
            detected,
            detected,
            chosen=False,
            refused=f"{error.message}, so the detected columns are used",
        )


def document_from_id(entry_id: str) -> str | None:
    found = ID_SEPARATORS.match(entry_id)
    return None if found is None else found.group("doc")


def _value(row: dict[str, Any], dotted: str) -> Any:
    value: Any = row
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _id_number(entry_id: str) -> int:
    found = TRAILING_NUMBER.search(entry_id)
    return int(found.group(1)) if found else 0


def _order(place: Any, chunk_id: str) -> tuple[int, float, str]:
    """Where a chunk goes: by its position value — numbers by size, any other value (a section, a date) by
    its text — and a chunk without one after them, by the number in its id."""
    if isinstance(place, (int, float)) and not isinstance(place, bool):
        return (0, place, "")
    if place is not None:
        return (1, 0, str(place))
    return (2, _id_number(chunk_id), "")


@dataclass(frozen=True)
class Document:
    key: str
    layout: DocumentLayout
    #: (id, content) of each chunk, in order.
    chunks: tuple[tuple[str, str], ...]
    #: Where the chunk asked for is among ``chunks`` (ids may repeat: it is told by its row).
    at: int = 0
    #: The ids several rows of the table share (those chunks are named by their content).
    repeats: IdRepeats = dataclass_field(default_factory=IdRepeats)
    #: How much of each chunk the model reads, in order; empty where that is not known (a cloud model).
    reading: tuple[ReadExtent, ...] = ()

    def names(self) -> tuple[str, ...]:
        """Each chunk's name: its id, or ``content·3f2a9c1e`` where its id is shared."""
        return tuple(self.repeats.label(i, content_sha256(c)) for i, c in self.chunks)

    def to_dict(self) -> dict[str, Any]:
        chunks = []
        for number, (chunk_id, content) in enumerate(self.chunks):
            chunk: dict[str, Any] = {"id": chunk_id}
            if self.repeats.is_shared(chunk_id):
                chunk["content_sha256"] = content_sha256(content)
            chunk["content"] = content
            if self.reading:
                chunk["model_reads"] = self.reading[number].to_dict()
            chunks.append(chunk)
        data: dict[str, Any] = {"document": self.key, "chunks": chunks}
        if self.repeats:
            data["ids_repeat"] = self.repeats.to_dict()
        return data

    def neighbours(self, entry_id: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
        """The chunks before and after the one asked for (``entry_id``: its id, when it was not told by
        its row)."""
        ids = [chunk[0] for chunk in self.chunks]
        at = self.at if ids[self.at : self.at + 1] == [entry_id] else ids.index(entry_id)
        return (self.chunks[at - 1] if at > 0 else None, self.chunks[at + 1] if at + 1 < len(ids) else None)


def _sql_name(dotted: str) -> str:
    return ".".join("`" + part.replace("`", "``") + "`" for part in dotted.split("."))


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


async def document_of(
    session: Session,
    entry: DatabaseEntry,
    entry_id: str,
    *,
    document_column: str | None = None,
    position_column: str | None = None,
    layout: DocumentLayout | None = None,
    with_reading: bool = False,
) -> Document:
    """The document of the chunk ``entry_id``, every chunk in order (the chunk itself included): by
    ``layout`` when the user chose one whole (the window), else by the columns named, each detected when
    not named (the command line). Where the table stores whole documents under one shared id (cosh's
    layout) and nothing else tells documents, an entry is its own document. ``with_reading``: also how
    much of each chunk the database's model reads (loading it)."""
    opened = await session.tables.open(entry.target)
    columns = opened.columns
    if layout is None:
        detected = detect_layout(opened.schema, (columns.id, columns.content, columns.vector))
        layout = DocumentLayout(
            document_column or detected.document_column, position_column or detected.position_column
        )
    layout = checked_layout(opened.schema, layout)
    found = await find_entry(session, entry.target, entry_id)
    repeats = await opened.id_repeats()
    row = {**found.hit.extra, "id": found.hit.id}
    whole = layout.document_column is None and document_from_id(found.hit.id) is None
    if whole and repeats.is_shared(found.hit.id):
        document = Document(found.label, layout, ((found.hit.id, found.hit.content),), 0, repeats)
        return await _with_reading(session, entry, document) if with_reading else document
    if layout.document_column is not None:
        key = _value(row, layout.document_column)
        if key is None:
            raise InvalidInputError(f'"{entry_id}" has no value in "{layout.document_column}"')
        where = f"{_sql_name(layout.document_column)} = {_sql_text(str(key))}"
    else:
        key = document_from_id(entry_id)
        if key is None or columns.id is None:
            raise InvalidInputError(
                f'no document can be told for "{entry_id}": no column names one, and its id has no '
                "#, : or _chunk part",
                hint="Name the column that holds the document with --document-column.",
            )
        where = f"starts_with({_sql_name(columns.id)}, {_sql_text(str(key))})"
    wanted = [name for name in (columns.id, columns.content) if name is not None]
    extra = [c.split(".")[0] for c in (layout.document_column, layout.position_column) if c is not None]
    rows = await read_query(
        opened.table.query().where(where).select(list(dict.fromkeys([*wanted, *extra]))).with_row_id(),
        f'reading the document of "{entry_id}"',
    )
    chunks = []
    for item in rows.to_pylist():
        chunk_id = str(item[columns.id]) if columns.id is not None else ""
        if layout.document_column is None and document_from_id(chunk_id) != key:
            continue  # starts_with also matched a longer document name
        place = _value(item, layout.position_column) if layout.position_column else None
        chunks.append((_order(place, chunk_id), chunk_id, str(item[columns.content]), item["_rowid"]))
    chunks.sort(key=lambda chunk: (chunk[0], chunk[1], chunk[3]))
    at = next((n for n, chunk in enumerate(chunks) if chunk[3] == found.hit.row_id), 0)
    document = Document(str(key), layout, tuple((i, c) for _o, i, c, _r in chunks), at, repeats)
    return await _with_reading(session, entry, document) if with_reading else document


async def _with_reading(session: Session, entry: DatabaseEntry, document: Document) -> Document:
    """``document`` with how much of each chunk the model reads (nothing for a cloud model, or a model
    that cannot load here)."""
    import asyncio

    try:
        reading = await session.models.reading(entry.embedder)
    except RecallError:  # the model is not here: the document is still shown, without it
        return document
    if reading is None:
        return document
    texts = [content for _id, content in document.chunks]
    extents = await asyncio.get_running_loop().run_in_executor(
        session.compute_executor, reading.extents, texts
    )
    return replace(document, reading=tuple(extents))


@dataclass(frozen=True)
class DocumentShare:
    """One document among a search's results: its best rank and how many of the results are its chunks."""

    key: str
    best_rank: int
    results: int
    share: float


def document_key(entry_id: str, columns: Mapping[str, Any], layout: DocumentLayout) -> str | None:
    """The document of one row (its id and its other columns), by ``layout``; ``None`` when none is told."""
    if layout.document_column is not None:
        value = _value(dict(columns), layout.document_column)
        return None if value is None else str(value)
    return document_from_id(entry_id)


def results_by_document(
    rows: Sequence[tuple[str, Mapping[str, Any]]], layout: DocumentLayout
) -> tuple[DocumentShare, ...]:
    """The documents of search results (each an id and its other columns, in rank order), best first; a row
    whose document cannot be told counts as a document of its own."""
    best: dict[str, int] = {}
    counts: dict[str, int] = {}
    for rank, (entry_id, columns) in enumerate(rows, start=1):
        key = document_key(entry_id, columns, layout) or entry_id
        best.setdefault(key, rank)
        counts[key] = counts.get(key, 0) + 1
    total = len(rows)
    return tuple(DocumentShare(key, best[key], counts[key], counts[key] / total) for key in best)
