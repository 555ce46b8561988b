"""The health report in process (``recall-gui health`` runs it in a command of its own:
tests/core/test_health_command.py): a table of several pages, an empty one, a table without ids or with ids
that repeat, advice, and what the report says when the model's reading cannot be known. LanceDB's own
statistics and an independent scan of the table are the oracles."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import BTree

from recall_gui.core.registry.registry_types import DatabaseEntry, EmbedderSpec
from recall_gui.core.search import health_scan
from recall_gui.core.search.health_scan import HealthReport, health_report
from recall_gui.core.session.session import Session
from tests.core.test_health_command import WIDTH, independent_scan, rows
from tests.core.test_legacy_fts import write_legacy_fts_index
from tests.foldertools import vector_column

MINILM = EmbedderSpec("local", "AllMiniLML6V2")


def entry_of(folder: Path, embedder: EmbedderSpec = MINILM) -> DatabaseEntry:
    return DatabaseEntry("kb", str(folder), "", embedder)


def report_of(
    session: Session, entry: DatabaseEntry, progress: list[tuple[int, int]] | None = None
) -> HealthReport:
    def on_progress(read: int, total: int) -> None:
        assert progress is not None
        progress.append((read, total))

    return asyncio.run(health_report(session, entry, on_progress if progress is not None else None))


def test_a_table_of_several_pages_is_scanned_whole_and_copies_are_found_across_pages(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of 8 rows: a small table is read as a large one is, page by page (3 pages, the last short).
    monkeypatch.setattr(health_scan, "SCAN_BATCH_ROWS", 8)
    count = 20
    data = rows(0, count, 5)
    contents = data.column("content").to_pylist()
    # copies whose rows lie on different pages: each group is read again from every page it spans
    contents[1] = contents[11] = "the same words on two pages"
    contents[2] = contents[17] = "other words, also twice"
    contents[3] = ""
    matrix = np.random.default_rng(6).normal(size=(count, WIDTH)).astype(np.float32)
    matrix[9] = 0
    matrix[5] = 1e-30  # its squared length underflows float32
    data = data.set_column(1, "content", pa.array(contents)).set_column(2, "vector", vector_column(matrix))
    table = lancedb.connect(str(tmp_path / "db")).create_table("kb", data)
    progress: list[tuple[int, int]] = []

    report = report_of(session, entry_of(tmp_path / "db"), progress)

    assert progress == [(8, 20), (16, 20), (20, 20)]
    assert report.rows == table.count_rows() == count
    scan = independent_scan(table)
    assert report.zero_norm == scan["zero_norm"] == ["row-9"]
    assert report.too_short == scan["too_short"] == ["row-5"]
    assert report.warnings[0].startswith("1 vector is too short for float32: they come first or last")
    assert report.empty == scan["empty"] == ["row-3"]
    assert report.duplicate_groups == scan["duplicate_groups"] == [["row-1", "row-11"], ["row-2", "row-17"]]
    # every page's texts were measured against what the model reads: every row, once
    assert report.reading is not None and report.reading.rows == count
    assert report.reading_text == "AllMiniLML6V2 reads the first 512 tokens of each entry: every row fits"


def test_an_empty_table_has_nothing_to_list(tmp_path: Path, session: Session) -> None:
    lancedb.connect(str(tmp_path / "db")).create_table("kb", rows(0, 3, 1).slice(0, 0))
    progress: list[tuple[int, int]] = []
    report = report_of(session, entry_of(tmp_path / "db"), progress)
    assert (report.rows, progress, report.duplicate_groups, report.empty) == (0, [], [], [])
    assert report.healthy


@pytest.mark.parametrize(
    ("embedder", "note"),
    [
        (EmbedderSpec("cloud", "text-embedding-3-small", "openai"), "a cloud model's tokenizer is not here"),
        (EmbedderSpec("unknown", ""), "no model is known for it"),
        (
            EmbedderSpec("local", "BGESmallENV15"),
            "the model cannot be loaded here (model BGESmallENV15 (BGE-Small-EN-v1.5 (384d)) is not on "
            "this machine (cosh's file Xenova/bge-small-en-v1.5 onnx/model.onnx was not found in any model "
            "cache))",
        ),
    ],
)
def test_what_the_model_reads_is_not_known_without_its_tokenizer(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch, embedder: EmbedderSpec, note: str
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "empty cache"))  # no copy of BGE here
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lancedb.connect(str(tmp_path / "db")).create_table("kb", rows(0, 5, 2))
    report = report_of(session, entry_of(tmp_path / "db", embedder))
    assert report.reading is None
    assert report.reading_text == f"what the model reads is not known: {note}"
    assert report.to_dict()["model_reads"] == {"unknown": note}
    # a model that cannot embed the queries is a search problem, listed as such
    assert report.search_problems and "model" in report.listed_kinds()


def test_rows_of_a_table_without_ids_are_named_by_their_numbers(tmp_path: Path, session: Session) -> None:
    matrix = np.random.default_rng(3).normal(size=(5, WIDTH)).astype(np.float32)
    matrix[2] = 0
    contents = ["the same text", " ", "a", "the same text", "b"]
    data = pa.table({"content": contents, "vector": vector_column(matrix)})
    lancedb.connect(str(tmp_path / "db")).create_table("kb", data)
    report = report_of(session, entry_of(tmp_path / "db"))
    assert (report.zero_norm, report.empty, report.duplicate_groups) == (["2"], ["1"], [["0", "3"]])


def test_rows_sharing_an_id_are_named_by_their_content(tmp_path: Path, session: Session) -> None:
    """cosh gives every row the id "content": the lists name each row by its content's sha256."""
    texts = ["first document", "second document", "first document", "   "]
    matrix = np.random.default_rng(4).normal(size=(4, WIDTH)).astype(np.float32)
    data = pa.table({"id": ["content"] * 4, "content": texts, "vector": vector_column(matrix)})
    lancedb.connect(str(tmp_path / "db")).create_table("kb", data)
    report = report_of(session, entry_of(tmp_path / "db"))

    def label(text: str) -> str:
        return "content·" + hashlib.sha256(text.encode()).hexdigest()[:8]

    assert report.duplicate_groups == [[label("first document"), label("first document")]]
    assert report.empty == [label("   ")]
    assert report.to_dict()["ids_repeat"]["rows"] == 4


def test_uncovered_rows_small_fragments_and_a_legacy_full_text_index_are_advice(
    tmp_path: Path, session: Session
) -> None:
    """An index built before rows were added, twelve small fragments and a legacy index are advised
    about; an index that covers every row is not."""
    table = lancedb.connect(str(tmp_path / "db")).create_table("kb", rows(0, 1, 7))
    table.create_index("content", config=BTree())  # before the rows below: they are not in it
    for start in range(1, 12):
        table.add(rows(start, 1, 7 + start))
    table.create_index("id", config=BTree())  # covers every row
    write_legacy_fts_index(table, tmp_path / "db" / "kb.lance" / "_indices" / "fts")
    stats = table.stats()["fragment_stats"]
    assert stats["num_small_fragments"] == stats["num_fragments"] == 12
    uncovered = {
        index.name: table.index_stats(index.name).num_unindexed_rows for index in table.list_indices()
    }
    assert sorted(uncovered.values()) == [0, 11]

    report = report_of(session, entry_of(tmp_path / "db"))

    assert {index.name: index.unindexed_rows for index in report.indices} == uncovered
    assert report.advice[0] == (
        '11 rows are not in the index "content_idx" (added after it was built): searches scan them one by '
        "one; re-index the table to cover them"
    )
    assert report.advice[1] == (
        "12 of 12 fragments are small: searches read many files; an optimize is recommended "
        "(table.optimize() in LanceDB; this app never runs it)"
    )
    legacy = tmp_path / "db" / "kb.lance" / "_indices" / "fts"
    assert report.advice[2].startswith(f"the table has a legacy (Tantivy) full-text index, {legacy}: ")
    assert len(report.advice) == 3 and report.warnings == report.advice
    assert report.listed_kinds() == {"advice"}
    assert report.to_dict()["indices"][0] == {
        "name": report.indices[0].name,
        "type": "BTree",
        "columns": list(report.indices[0].columns),
        "unindexed_rows": uncovered[report.indices[0].name],
    }


def test_rows_added_while_the_report_starts_are_counted_but_the_scan_keeps_its_version(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program adds rows after the table was opened: LanceDB's statistics count them, the scan
    reads the version it opened, and stops at its end."""
    table = lancedb.connect(str(tmp_path / "db")).create_table("kb", rows(0, 10, 8))
    statistics = health_scan._statistics

    async def rows_added_first(native: Any, report: HealthReport) -> None:
        # the other program's write, at the one moment a test cannot otherwise reach
        table.add(rows(10, 5, 9))
        await statistics(native, report)

    monkeypatch.setattr(health_scan, "_statistics", rows_added_first)
    progress: list[tuple[int, int]] = []
    report = report_of(session, entry_of(tmp_path / "db"), progress)
    assert report.rows == table.count_rows() == 15
    assert progress == [(10, 15)]
    assert report.reading is not None and report.reading.rows == 10
