"""Tables exported as CSV, JSON or clipboard text: the rows and columns a view shows, in its order.

Front ends collect the cells (the view decides order and columns); this module only writes them, so the
CSV, the JSON and the copied text of one view never disagree.
"""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, TextIO

from recall_gui.core.base.control_chars import printable
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


@dataclass(frozen=True)
class ExportSource:
    """Where exported rows come from, said in the file: the first line of a CSV file (a ``#`` comment),
    the ``source`` object of a JSON file. ``query``, ``limit`` and ``model`` for a search's results;
    ``filter`` (the text filter), ``where`` (the SQL filter) and ``chosen`` (rows chosen on the map) for
    the view that was narrowed; ``version``: the table's version the rows were read from."""

    database: str
    table: str
    version: int | None = None
    latest: bool = True
    query: str | None = None
    limit: int | None = None
    model: str | None = None
    filter: str | None = None
    where: str | None = None
    chosen: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"exported_by": "recall-gui", **asdict(self)}

    def comment(self) -> str:
        """One line for the top of a CSV file, starting with ``#``."""
        version = "version ?" if self.version is None else f"version {self.version}"
        if not self.latest:
            version += ", not the latest"
        parts = [f"# recall-gui export of {self.database} (table {self.table}, {version})"]
        if self.query is not None:
            parts.append(
                f"search {json_text(self.query, ensure_ascii=False)}, limit {self.limit}, model {self.model}"
            )
        else:
            parts.append("every row")
        if self.filter:
            parts.append(f"id or content containing {json_text(self.filter, ensure_ascii=False)}")
        if self.where:
            parts.append(f"where {self.where}")
        if self.chosen is not None:
            parts.append(f"{self.chosen:,} rows chosen on the map")
        return " ".join(printable("; ".join(parts)).splitlines())


class RowWriter(Protocol):
    """Writes a table to a text stream a few rows at a time: the header on creation, rows as they come,
    the end on :meth:`close`. The whole table is never held."""

    def write(self, rows: Iterable[Sequence[Any]]) -> None: ...

    def close(self) -> None: ...


class CsvRows:
    """RFC 4180 CSV with a header row; multi-line text stays in one quoted cell. With a ``source``, a
    comment line saying where the rows come from comes first."""

    def __init__(self, stream: TextIO, headers: Sequence[str], source: ExportSource | None = None) -> None:
        if source is not None:
            stream.write(source.comment() + "\r\n")  # the csv module's own line ending
        self._writer = csv.writer(stream)
        self._writer.writerow(headers)

    def write(self, rows: Iterable[Sequence[Any]]) -> None:
        self._writer.writerows([_cell(value) for value in row] for row in rows)

    def close(self) -> None:
        pass


class JsonRows:
    """A JSON array with one object per row, keyed by the column titles, in column order (the text
    ``json.dumps(records, indent=2)`` gives, written one record at a time; a number that is not finite as
    a string: :mod:`recall_gui.core.base.json_output`). With a ``source``, an object instead: where the
    rows come from (``source``) and the array (``rows``)."""

    def __init__(self, stream: TextIO, headers: Sequence[str], source: ExportSource | None = None) -> None:
        self._stream = stream
        self._headers = tuple(headers)
        self._written = 0
        self._indent = "  " if source is None else "    "
        if source is None:
            stream.write("[")
        else:
            said = textwrap.indent(json_text(source.to_dict(), ensure_ascii=False, indent=2), "  ").lstrip()
            stream.write(f'{{\n  "source": {said},\n  "rows": [')
        self._close = "]\n" if source is None else "]\n}\n"

    def write(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            record = json_text(dict(zip(self._headers, row, strict=True)), ensure_ascii=False, indent=2)
            self._stream.write(
                ("\n" if self._written == 0 else ",\n") + textwrap.indent(record, self._indent)
            )
            self._written += 1

    def close(self) -> None:
        end = "\n" + self._indent[:-2] if self._written else ""
        self._stream.write(end + self._close)


def row_writer(
    fmt: ExportFormat, stream: TextIO, headers: Sequence[str], source: ExportSource | None = None
) -> RowWriter:
    return CsvRows(stream, headers, source) if fmt == "csv" else JsonRows(stream, headers, source)


def _written(fmt: ExportFormat, table: ExportTable, source: ExportSource | None) -> str:
    buffer = io.StringIO()
    writer = row_writer(fmt, buffer, table.headers, source)
    writer.write(table.rows)
    writer.close()
    return buffer.getvalue()


def to_csv(table: ExportTable, source: ExportSource | None = None) -> str:
    """RFC 4180 CSV with a header row; multi-line text stays in one quoted cell. ``source``: where the
    rows come from, said in a comment line first."""
    return _written("csv", table, source)


def to_json(table: ExportTable, source: ExportSource | None = None) -> str:
    """A JSON array with one object per row, keyed by the column titles, in column order; with a
    ``source``, an object of ``source`` and the array as ``rows``."""
    return _written("json", table, source)


def to_clipboard_text(rows: Sequence[Sequence[Any]]) -> str:
    """Tab-separated rows (no header) that spreadsheets paste into cells; text with tabs or line breaks
    is quoted, so each cell stays one cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerows([_cell(value) for value in row] for row in rows)
    return buffer.getvalue()
