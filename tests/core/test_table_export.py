"""Exporting a whole table (or every row a filter keeps): every row, in the order browsing shows them, written
as it is read, appearing under its name only when complete; a cancelled or failed export leaves nothing."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import ExportError
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_page
from recall_gui.core.tables.export import ExportColumn, ExportTable, to_csv, to_json
from recall_gui.core.tables.table_export import BATCH_ROWS, export_table
from tests.kbtools import KnowledgeBase, write_lance_table
from tests.waiting import wait_until

COLUMNS = (
    ExportColumn("Row", "row"),
    ExportColumn("ID", "id"),
    ExportColumn("Content", "content"),
    ExportColumn("lang", "metadata", "lang"),
    ExportColumn("tags", "metadata", "tags"),
)


def long_columns(kb: KnowledgeBase, rows: int, text_chars: int = 60) -> dict[str, list[Any]]:
    """``rows`` rows of the knowledge base's real passages, repeated, with two metadata columns; contents
    padded to ``text_chars`` characters."""
    n = len(kb.ids)
    contents = [(kb.contents[i % n] + " ") * (text_chars // len(kb.contents[i % n]) + 1) for i in range(rows)]
    return {
        "id": [f"{kb.ids[i % n]}~{i}" for i in range(rows)],
        "content": [text[:text_chars] for text in contents],
        "lang": ["en" if i % 3 else "de" for i in range(rows)],
        "tags": [[f"t{i % 5}"] for i in range(rows)],
    }


def long_table(kb: KnowledgeBase, rows: int, text_chars: int = 60, name: str = "long") -> TableTarget:
    """The table of :func:`long_columns`, with the knowledge base's real vectors."""
    made = long_columns(kb, rows, text_chars)
    vectors = np.asarray(kb.vectors)[np.arange(rows) % len(kb.ids)]
    extra = {"lang": made["lang"], "tags": made["tags"]}
    write_lance_table(kb.db_dir, name, made["id"], made["content"], vectors, extra=extra)
    return TableTarget(str(kb.db_dir), name)


def written_rows(kb: KnowledgeBase, rows: int, keep: str = "") -> list[tuple[Any, ...]]:
    """What an export of :func:`long_table` holds, worked out from what the test wrote (in writing order,
    numbered among the rows whose id or content holds ``keep``, case aside)."""
    made = long_columns(kb, rows)
    kept = [
        (made["id"][i], made["content"][i], made["lang"][i], json.dumps(made["tags"][i]))
        for i in range(rows)
        if keep.lower() in made["id"][i].lower() or keep.lower() in made["content"][i].lower()
    ]
    return [(number, *row) for number, row in enumerate(kept, start=1)]


def export(target: TableTarget, path: Path, fmt: str, **kwargs: Any) -> int:
    async def go() -> int:
        async with Session() as session:
            return await export_table(session, target, path, fmt, COLUMNS, **kwargs)  # type: ignore[arg-type]

    return asyncio.run(go())


def browsed(target: TableTarget, filter_text: str = "") -> list[tuple[Any, ...]]:
    """Every row as the browse table shows it, page by page."""

    async def go() -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        async with Session() as session:
            while True:
                page = await fetch_page(
                    session, target, offset=len(rows), limit=1000, filter_text=filter_text
                )
                for row in page.rows:
                    tags = json.dumps(row.extra["tags"])
                    rows.append((row.offset + 1, row.id, row.content, row.extra["lang"], tags))
                if len(rows) >= page.total:
                    return rows

    return asyncio.run(go())


def test_every_row_is_written_in_browsing_order_as_csv_and_json(kb: KnowledgeBase, tmp_path: Path) -> None:
    target = long_table(kb, 10_000)
    expected = browsed(target)
    assert expected == written_rows(kb, 10_000)
    headers = tuple(column.title for column in COLUMNS)
    assert export(target, tmp_path / "all.json", "json") == 10_000
    text = (tmp_path / "all.json").read_text(encoding="utf-8")
    assert text == to_json(ExportTable(headers, tuple(expected)))  # byte for byte the window's JSON
    assert export(target, tmp_path / "all.csv", "csv") == 10_000
    written = (tmp_path / "all.csv").read_bytes().decode("utf-8")
    assert written == to_csv(ExportTable(headers, tuple(expected)))
    assert list(csv.reader(io.StringIO(written)))[10_000][1] == expected[-1][1]


def test_a_filter_exports_every_row_it_keeps_numbered_among_them(kb: KnowledgeBase, tmp_path: Path) -> None:
    target = long_table(kb, 6_000)
    expected = browsed(target, "CAPITAL")
    assert expected == written_rows(kb, 6_000, "CAPITAL") and 0 < len(expected) < 6_000
    assert export(target, tmp_path / "f.json", "json", filter_text="CAPITAL") == len(expected)
    records = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))
    assert [tuple(record.values()) for record in records] == expected
    assert [record["Row"] for record in records] == list(range(1, len(expected) + 1))


@pytest.mark.process
def test_the_metadata_filter_and_rows_chosen_by_hand_export_only_what_they_keep(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    target = long_table(kb, 5_000)
    assert export(target, tmp_path / "de.json", "json", where="lang = 'de'", filter_text="capital") > 0
    records = json.loads((tmp_path / "de.json").read_text(encoding="utf-8"))
    assert records and all(r["lang"] == "de" and "capital" in r["Content"].lower() for r in records)
    chosen = np.array([3, 10, 4_999], np.uint64)  # row ids, as the map hands them over
    assert export(target, tmp_path / "chosen.json", "json", row_ids=chosen) == 3
    ids = [r["ID"] for r in json.loads((tmp_path / "chosen.json").read_text(encoding="utf-8"))]
    assert ids == [f"{kb.ids[i % len(kb.ids)]}~{i}" for i in (3, 10, 4_999)]


def test_rows_are_written_as_they_are_read_and_the_file_appears_only_whole(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    target = long_table(kb, 5 * BATCH_ROWS)
    folder = tmp_path / "exports"
    folder.mkdir()
    path = folder / "out.csv"
    seen: list[tuple[int, int, bool, int]] = []

    def progress(done: int, total: int) -> None:
        partial = [p for p in folder.iterdir() if p.name.startswith(".out.csv.")]
        size = partial[0].stat().st_size if partial else -1
        seen.append((done, total, path.exists(), size))

    assert export(target, path, "csv", progress=progress) == 5 * BATCH_ROWS
    assert len(seen) >= 3 and seen[-1][:2] == (5 * BATCH_ROWS, 5 * BATCH_ROWS)
    assert [done for done, *_ in seen] == sorted({done for done, *_ in seen})  # rising, batch by batch
    assert not any(exists for _d, _t, exists, _s in seen)  # never under its name before the end
    sizes = [size for *_r, size in seen[:-1]]
    assert sizes[0] >= 0 and sizes == sorted(sizes) and sizes[-1] > sizes[0]  # written as it goes
    assert sorted(p.name for p in folder.iterdir()) == ["out.csv"]


@pytest.mark.slow
def test_memory_holds_a_batch_not_the_table(kb: KnowledgeBase, tmp_path: Path) -> None:
    """Python's peak memory while exporting does not grow with the table: a table four times as long
    costs the same."""
    peaks, sizes = [], []
    for rows in (2 * BATCH_ROWS, 8 * BATCH_ROWS):
        target = long_table(kb, rows, text_chars=1_000, name=f"long{rows}")
        tracemalloc.start()
        try:
            export(target, tmp_path / f"{rows}.json", "json")
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        sizes.append((tmp_path / f"{rows}.json").stat().st_size)
    assert sizes[1] > 30_000_000 and sizes[1] > 3.9 * sizes[0]
    assert peaks[1] < 1.3 * peaks[0], (peaks, sizes)


def test_a_cancelled_export_leaves_no_file_and_an_older_one_untouched(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    target = long_table(kb, 4 * BATCH_ROWS)
    folder = tmp_path / "exports"
    folder.mkdir()
    path = folder / "kept.json"
    path.write_text("an older export", encoding="utf-8")

    async def go() -> None:
        async with Session() as session:
            task: asyncio.Task[int] | None = None

            def progress(done: int, _total: int) -> None:
                assert task is not None
                task.cancel()

            task = asyncio.create_task(
                export_table(session, target, path, "json", COLUMNS, progress=progress)
            )
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(go())
    # The temporary file is removed once the write in progress on the worker ends.
    wait_until(lambda: sorted(p.name for p in folder.iterdir()) == ["kept.json"], "only kept.json is left")
    assert path.read_text(encoding="utf-8") == "an older export"


def test_a_folder_that_cannot_be_written_is_a_clear_error(kb: KnowledgeBase, tmp_path: Path) -> None:
    target = long_table(kb, 100)
    with pytest.raises(ExportError) as caught:
        export(target, tmp_path / "no-such-folder" / "x.csv", "csv")
    assert caught.value.message.startswith(f"could not write {tmp_path / 'no-such-folder' / 'x.csv'}: ")
    assert caught.value.hint and "Nothing was written" in caught.value.hint
    if os.geteuid() != 0:  # root writes anywhere
        (tmp_path / "ro").mkdir(mode=0o500)
        with pytest.raises(ExportError):
            export(target, tmp_path / "ro" / "x.csv", "csv")
