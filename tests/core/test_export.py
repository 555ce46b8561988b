"""Exported tables: CSV and JSON carry exactly the given cells, in order, whatever the text holds."""

from __future__ import annotations

import csv
import io
import json

import pytest

from recall_gui.core.tables.export import ExportSource, ExportTable, to_clipboard_text, to_csv, to_json

TRICKY = 'line one\nline two, with a comma, "quotes"\tand a tab — and ش 🚀'

TABLE = ExportTable(
    ("Rank", "ID", "Content", "Distance (squared L2)"),
    ((1, "pw-reset", TRICKY, 0.5312), (2, "a;b", "", None)),
)


def test_csv_round_trips_every_cell_and_the_header() -> None:
    rows = list(csv.reader(io.StringIO(to_csv(TABLE))))
    assert rows == [list(TABLE.headers), ["1", "pw-reset", TRICKY, "0.5312"], ["2", "a;b", "", ""]]


def test_json_keys_rows_by_column_title_in_order_and_keeps_numbers() -> None:
    records = json.loads(to_json(TABLE))
    assert records[0] == {"Rank": 1, "ID": "pw-reset", "Content": TRICKY, "Distance (squared L2)": 0.5312}
    assert list(records[0]) == list(TABLE.headers)
    assert records[1]["Distance (squared L2)"] is None


def test_clipboard_text_keeps_multiline_cells_in_one_cell() -> None:
    text = to_clipboard_text([row for row in TABLE.rows])
    parsed = list(csv.reader(io.StringIO(text), delimiter="\t"))
    assert parsed == [["1", "pw-reset", TRICKY, "0.5312"], ["2", "a;b", "", ""]]


def test_a_row_of_the_wrong_width_is_refused() -> None:
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        ExportTable(("a", "b"), (("only",),))


def test_a_source_is_said_in_a_csv_comment_line_and_a_json_object_beside_the_rows() -> None:
    source = ExportSource(
        "notes",
        "docs",
        7,
        latest=False,
        query="tides\nand moon",
        limit=5,
        model="AllMiniLML6V2, exact (cosh's file)",
        filter="moon",
        where="lang = 'en'",
        chosen=12,
    )
    comment, _, body = to_csv(TABLE, source).partition("\r\n")
    assert comment == (
        '# recall-gui export of notes (table docs, version 7, not the latest); search "tides\\nand moon", '
        'limit 5, model AllMiniLML6V2, exact (cosh\'s file); id or content containing "moon"; '
        "where lang = 'en'; 12 rows chosen on the map"
    )
    assert list(csv.reader(io.StringIO(body))) == list(csv.reader(io.StringIO(to_csv(TABLE))))
    written = json.loads(to_json(TABLE, source))
    assert written["rows"] == json.loads(to_json(TABLE))
    assert written["source"] == {
        "exported_by": "recall-gui",
        "database": "notes",
        "table": "docs",
        "version": 7,
        "latest": False,
        "query": "tides\nand moon",
        "limit": 5,
        "model": "AllMiniLML6V2, exact (cosh's file)",
        "filter": "moon",
        "where": "lang = 'en'",
        "chosen": 12,
    }
    assert json.loads(to_json(ExportTable(("A",), ()), source))["rows"] == []
