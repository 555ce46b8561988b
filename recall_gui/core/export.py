"""Tables exported as CSV, JSON or clipboard text: the rows and columns a view shows, in its order.

Front ends collect the cells (the view decides order and columns); this module only writes them, so the
CSV, the JSON and the copied text of one view never disagree.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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


def to_csv(table: ExportTable) -> str:
    """RFC 4180 CSV with a header row; multi-line text stays in one quoted cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(table.headers)
    writer.writerows([_cell(value) for value in row] for row in table.rows)
    return buffer.getvalue()


def to_json(table: ExportTable) -> str:
    """A JSON array with one object per row, keyed by the column titles, in column order."""
    records = [dict(zip(table.headers, row, strict=True)) for row in table.rows]
    return json.dumps(records, ensure_ascii=False, indent=2) + "\n"


def to_clipboard_text(rows: Sequence[Sequence[Any]]) -> str:
    """Tab-separated rows (no header) that spreadsheets paste into cells; text with tabs or line breaks
    is quoted, so each cell stays one cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerows([_cell(value) for value in row] for row in rows)
    return buffer.getvalue()
