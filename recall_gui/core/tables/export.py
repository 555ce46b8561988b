"""Tables exported as CSV, JSON or clipboard text: the rows and columns a view shows, in its order.

Front ends collect the cells (the view decides order and columns); this module only writes them, so the
CSV, the JSON and the copied text of one view never disagree.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TextIO

from recall_gui.core.base.json_output import json_text

ExportFormat = Literal["csv", "json"]


@dataclass(frozen=True)
class ExportTable:
    """Column titles and rows of cells (str, int, float or None), as a view shows them."""

    headers: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    def __post_init__(self) -> None:
        for number, row in enumerate(self.rows, start=1):
            if len(row) != len(self.headers):
                raise ValueError(f"row {number} has {len(row)} cells for {len(self.headers)} columns")


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def plain_value(value: Any) -> Any:
    """A metadata value as JSON can hold it: scalars as they are, anything else as readable text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    try:
        return json_text(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True)
class ExportColumn:
    """One column of a whole-table export: its title, and what it holds (a metadata column by ``name``);
    the row number is the row's position among the rows exported; ``content_sha256`` tells apart rows
    that share an id."""

    title: str
    role: Literal["row", "id", "content", "content_sha256", "metadata"]
    name: str = ""


class RowWriter(Protocol):
    """Writes a table to a text stream a few rows at a time: the header on creation, rows as they come,
    the end on :meth:`close`. The whole table is never held."""

    def write(self, rows: Iterable[Sequence[Any]]) -> None: ...

    def close(self) -> None: ...


class CsvRows:
    """RFC 4180 CSV with a header row; multi-line text stays in one quoted cell."""

    def __init__(self, stream: TextIO, headers: Sequence[str]) -> None:
        self._writer = csv.writer(stream)
        self._writer.writerow(headers)

    def write(self, rows: Iterable[Sequence[Any]]) -> None:
        self._writer.writerows([_cell(value) for value in row] for row in rows)

    def close(self) -> None:
        pass


class JsonRows:
    """A JSON array with one object per row, keyed by the column titles, in column order (the text
    ``json.dumps(records, indent=2)`` gives, written one record at a time; a number that is not finite as
    a string: :mod:`recall_gui.core.base.json_output`)."""

    def __init__(self, stream: TextIO, headers: Sequence[str]) -> None:
        self._stream = stream
        self._headers = tuple(headers)
        self._written = 0
        stream.write("[")

    def write(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            record = json_text(dict(zip(self._headers, row, strict=True)), ensure_ascii=False, indent=2)
            self._stream.write(("\n" if self._written == 0 else ",\n") + textwrap.indent(record, "  "))
            self._written += 1

    def close(self) -> None:
        self._stream.write("\n]\n" if self._written else "]\n")


def row_writer(fmt: ExportFormat, stream: TextIO, headers: Sequence[str]) -> RowWriter:
    return CsvRows(stream, headers) if fmt == "csv" else JsonRows(stream, headers)


def _written(fmt: ExportFormat, table: ExportTable) -> str:
    buffer = io.StringIO()
    writer = row_writer(fmt, buffer, table.headers)
    writer.write(table.rows)
    writer.close()
    return buffer.getvalue()


def to_csv(table: ExportTable) -> str:
    """RFC 4180 CSV with a header row; multi-line text stays in one quoted cell."""
    return _written("csv", table)


def to_json(table: ExportTable) -> str:
    """A JSON array with one object per row, keyed by the column titles, in column order."""
    return _written("json", table)


def to_clipboard_text(rows: Sequence[Sequence[Any]]) -> str:
    """Tab-separated rows (no header) that spreadsheets paste into cells; text with tabs or line breaks
    is quoted, so each cell stays one cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerows([_cell(value) for value in row] for row in rows)
    return buffer.getvalue()
