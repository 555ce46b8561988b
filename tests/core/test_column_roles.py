"""Column roles named in a registry entry: a column that cannot play the role is refused with a clear
reason, where the table is described (so ``list`` and the window say it), never a traceback later."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from recall_gui.core.base.errors import ColumnError
from recall_gui.core.search.harness import Harness
from recall_gui.core.storage.columns import ColumnOverrides, detect_columns
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, cosh_entry, write_lance_table, write_registry

SCHEMA = pa.schema(
    [
        pa.field("id", pa.utf8()),
        pa.field("content", pa.utf8()),
        pa.field("vector", pa.list_(pa.float32(), 4)),
        pa.field("count", pa.int64()),
        pa.field("tags", pa.list_(pa.utf8())),
        pa.field("meta", pa.struct([pa.field("lang", pa.utf8())])),
        pa.field("blob", pa.binary()),
    ]
)


@pytest.mark.parametrize(
    ("overrides", "said"),
    [
        (ColumnOverrides(content="vector"), 'content column "vector" is the vector column'),
        (ColumnOverrides(id="vector"), 'id column "vector" is the vector column'),
        (ColumnOverrides(id="content"), 'id column "content" is the content column'),
        (ColumnOverrides(id="body", content="body"), None),  # not in the table: its own message
        (ColumnOverrides(id="id", content="id"), 'id column "id" is the content column'),
        (ColumnOverrides(content="count"), 'content column "count" holds int64, not text'),
        (ColumnOverrides(content="tags"), 'content column "tags" holds list<item: string>, not text'),
        (ColumnOverrides(content="blob"), 'content column "blob" holds binary, not text'),
        (ColumnOverrides(id="tags"), 'id column "tags" holds list<item: string>, not a single value'),
        (ColumnOverrides(id="meta"), 'id column "meta" holds struct<lang: string>, not a single value'),
        (ColumnOverrides(vector="content"), 'column "content" is not a fixed-size list of floats'),
    ],
)
def test_a_column_that_cannot_play_its_role_is_refused(overrides: ColumnOverrides, said: str | None) -> None:
    with pytest.raises(ColumnError) as caught:
        detect_columns(SCHEMA, overrides)
    assert said is None or said in caught.value.message
    assert caught.value.hint


def test_ids_and_text_of_other_types_still_work() -> None:
    mapping = detect_columns(SCHEMA, ColumnOverrides(id="count", content="content"))
    assert (mapping.id, mapping.content, mapping.vector, mapping.vector_dim) == (
        "count",
        "content",
        "vector",
        4,
    )
    # The id column named as the text, with no id named: rows are numbered instead.
    assert detect_columns(SCHEMA, ColumnOverrides(content="id")).id is None
    large = pa.schema([pa.field("text", pa.large_utf8()), pa.field("embedding", pa.list_(pa.float32(), 2))])
    assert detect_columns(large).content == "text"


def test_a_column_named_like_text_that_holds_no_text_is_not_taken_for_it() -> None:
    schema = pa.schema(
        [
            pa.field("text", pa.list_(pa.float32(), 3)),  # LanceDB's embedding API: vectors of "text"
            pa.field("body_text", pa.utf8()),
            pa.field("vector", pa.list_(pa.float32(), 3)),
        ]
    )
    mapping = detect_columns(schema, ColumnOverrides(vector="vector"))
    assert mapping.content == "body_text"


@pytest.mark.process
def test_the_vector_column_named_as_content_is_reported_by_list_and_search(
    kb: KnowledgeBase, tmp_path: Path, passage_vectors: Any
) -> None:
    entry = {**cosh_entry(kb.name, kb.db_dir), "content_column": "vector"}
    registry_dir = write_registry(tmp_path / "registry", [entry])
    listed = cli("list", "--registry", str(registry_dir), "--json")
    assert "Traceback" not in listed.stderr
    (row,) = json.loads(listed.stdout)
    assert any('content column "vector" is the vector column' in p for p in row["problems"])

    async def search() -> None:
        harness = Harness(registry_dir)
        try:
            await harness.run({"db_name": kb.name, "query": "x"})
        finally:
            await harness.aclose()

    with pytest.raises(ColumnError, match='content column "vector" is the vector column'):
        asyncio.run(search())


@pytest.mark.process
def test_an_id_column_named_as_content_is_refused_not_ignored(tmp_path: Path, passage_vectors: Any) -> None:
    db = tmp_path / "db"
    write_lance_table(db, "notes", ["a", "b"], ["one", "two"], passage_vectors[:2])
    entry = {**cosh_entry("notes", db), "id_column": "content"}
    registry_dir = write_registry(tmp_path / "registry", [entry])
    listed = cli("list", "--registry", str(registry_dir), "--json")
    (row,) = json.loads(listed.stdout)
    assert any('id column "content" is the content column' in p for p in row["problems"])
