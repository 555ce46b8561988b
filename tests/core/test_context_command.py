"""`recall-gui context`: a chunk's document in order, by a document column, a LangChain metadata field or
the id's prefix; the expected documents are written out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from tests.core.test_cli import cli
from tests.kbtools import snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


def vectors(count: int) -> pa.FixedSizeListArray:
    matrix = np.random.default_rng(count).normal(size=(count, 8)).astype(np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), 8)


def table(folder: Path, columns: dict[str, Any]) -> None:
    count = len(columns["id"])
    lancedb.connect(str(folder)).create_table("kb", pa.table({**columns, "vector": vectors(count)}))


def context(folder: Path, entry_id: str, *extra: str) -> Any:
    done = cli("context", "--path", str(folder), "--table", "kb", "--id", entry_id, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_chunks_of_a_source_column_come_in_the_order_of_their_position_column(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    table(
        folder,
        {
            "id": ["c2", "x0", "c0", "c1"],
            "content": ["third", "other", "first", "second"],
            "source": ["a.md", "b.md", "a.md", "a.md"],
            "chunk_index": [2, 0, 0, 1],
        },
    )
    before = snapshot_tree(folder)
    assert context(folder, "c1") == {
        "document": "a.md",
        "chunks": [
            {"id": "c0", "content": "first"},
            {"id": "c1", "content": "second"},
            {"id": "c2", "content": "third"},
        ],
    }
    assert snapshot_tree(folder) == before


def test_without_a_column_the_ids_prefix_names_the_document_and_its_number_orders_it(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    table(
        folder,
        {
            "id": ["guide.md#10", "guide.md#1", "guide.md.bak#0", "guide.md#0", "guide.md#2"],
            "content": ["ten", "one", "backup", "zero", "two"],
        },
    )
    assert [c["id"] for c in context(folder, "guide.md#2")["chunks"]] == [
        "guide.md#0",
        "guide.md#1",
        "guide.md#2",
        "guide.md#10",
    ]


def test_a_langchain_metadata_source_is_found_inside_the_struct(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    metadata = pa.array(
        [{"source": "s.txt", "page": 1}, {"source": "s.txt", "page": 0}, {"source": "t.txt", "page": 0}]
    )
    table(folder, {"id": ["p1", "p0", "t0"], "text": ["page one", "page zero", "t"], "metadata": metadata})
    found = context(folder, "p1")
    assert found["document"] == "s.txt"
    assert [c["id"] for c in found["chunks"]] == ["p0", "p1"]


def test_columns_the_user_names_win_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    table(
        folder,
        {
            "id": ["a", "b", "c"],
            "content": ["x", "y", "z"],
            "source": ["s", "s", "s"],
            "book": ["one", "two", "one"],
        },
    )
    assert [c["id"] for c in context(folder, "c", "--document-column", "book")["chunks"]] == ["a", "c"]
    done = cli("context", "--path", str(folder), "--table", "kb", "--id", "a", "--document-column", "nope")
    assert done.returncode == 1
    assert 'the table has no column "nope"' in done.stderr


def test_a_text_position_column_the_user_names_orders_the_chunks_by_its_text(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    table(
        folder,
        {
            "id": ["n#0", "n#1", "n#2", "n#3"],
            "content": ["w", "x", "y", "z"],
            "source": ["n.md"] * 4,
            "written": ["2024-03-01", "2024-01-15", None, "2024-02-10"],
        },
    )
    found = context(folder, "n#1", "--position-column", "written")
    # By the date's text, the chunk without one last.
    assert [c["id"] for c in found["chunks"]] == ["n#1", "n#3", "n#0", "n#2"]
