"""The search pipeline's pre-filter (a LanceDB SQL predicate) and version pin, and a search by a stored
vector: each through the harness, against real tables embedded with the real model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import ConnectError, FilterError
from recall_gui.core.search.harness import Harness
from recall_gui.core.session.session import Session
from tests.kbtools import (
    PASSAGES,
    KnowledgeBase,
    cosh_entry,
    snapshot_tree,
    write_lance_table,
    write_registry,
)

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

QUERY = "What is the capital of France?"
SOURCES = [f"doc{i % 3}.md" for i in range(len(PASSAGES))]


@pytest.fixture
def meta_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """The passages with a string, a number and a nested metadata column."""
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    extra = {
        "source": SOURCES,
        "page": list(range(len(ids))),
        "meta": [{"lang": "en" if i % 2 else "fr"} for i in range(len(ids))],
    }
    write_lance_table(tmp_path / "db", "notes", ids, texts, passage_vectors, extra=extra)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    return KnowledgeBase("notes", tmp_path / "db", registry, tuple(ids), tuple(texts), passage_vectors)


def search(kb: KnowledgeBase, session: Session, **kwargs: Any) -> Any:
    async def go() -> Any:
        harness = Harness(kb.registry_dir, session=session)
        return await harness.search_database(harness.resolve_active(kb.name), QUERY, 20, **kwargs)

    return asyncio.run(go())


def lancedb_prefiltered(kb: KnowledgeBase, vector: Any, where: str) -> list[str]:
    import lancedb

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    found = table.search(np.asarray(vector, np.float32)).where(where, prefilter=True).limit(20).to_arrow()
    return list(found.column("id").to_pylist())


@pytest.mark.parametrize("where", ["source = 'doc1.md'", "page < 5 AND page >= 2", "meta.lang = 'en'"])
def test_a_filter_keeps_only_matching_rows_as_lancedb_does(
    meta_kb: KnowledgeBase, session: Session, embedder: Any, where: str
) -> None:
    before = snapshot_tree(meta_kb.db_dir)
    report = search(meta_kb, session, where=where)
    assert report.result.method == "exact"
    ids = [hit.id for hit in report.result.hits]
    assert ids == lancedb_prefiltered(meta_kb, embedder.embed_sync(QUERY), where)
    assert 0 < len(ids) < len(PASSAGES)
    assert snapshot_tree(meta_kb.db_dir) == before


def test_a_bad_filter_says_why_and_names_the_columns(meta_kb: KnowledgeBase, session: Session) -> None:
    with pytest.raises(FilterError) as caught:
        search(meta_kb, session, where="nope = 1")
    assert "there is no column named nope" in caught.value.message
    assert caught.value.hint and "source, page, meta" in caught.value.hint
    with pytest.raises(FilterError, match="not one expression"):
        search(meta_kb, session, where="1=1; DROP TABLE notes")
    assert search(meta_kb, session, where="source = 'a;b'").result.hits == ()  # ';' inside a string


def test_an_older_version_is_searched_read_only_as_it_was(
    kb: KnowledgeBase, session: Session, embedder: Any
) -> None:
    import lancedb
    import pyarrow as pa

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    old = table.version
    text = QUERY  # a row that is the query itself comes first
    vector = embedder.embed_sync(text).astype(np.float32)
    table.add(
        pa.table(
            {
                "id": ["paris-2"],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), 384),
            }
        )
    )
    before = snapshot_tree(kb.db_dir)
    latest = search(kb, session)
    pinned = search(kb, session, version=old)
    assert latest.result.hits[0].id == "paris-2" and latest.result.table_version == old + 1
    assert "paris-2" not in [hit.id for hit in pinned.result.hits]
    assert pinned.result.table_version == old and pinned.result.method == "exact"
    assert search(kb, session).result.hits[0].id == "paris-2"  # the pin did not move the latest
    assert snapshot_tree(kb.db_dir) == before  # nothing restored, tagged or written
    with pytest.raises(ConnectError, match="opening version 999 of table"):
        search(kb, session, version=999)


def test_a_stored_vector_finds_its_own_row_first(kb: KnowledgeBase, session: Session) -> None:
    async def go() -> Any:
        harness = Harness(kb.registry_dir, session=session)
        entry = harness.resolve_active(kb.name)
        return await harness.search_vector(entry, kb.vectors[2], 3, label="row paris")

    report = asyncio.run(go())
    assert report.result.hits[0].id == kb.ids[2]
    assert report.result.hits[0].distance == pytest.approx(0.0, abs=1e-5)
    assert report.model_used == "row paris"


def test_browsing_applies_the_filter_and_the_text_search_together(
    meta_kb: KnowledgeBase, session: Session
) -> None:
    from recall_gui.core.tables.browse import fetch_page

    async def go(**kwargs: Any) -> Any:
        return await fetch_page(session, meta_kb.target, offset=0, limit=50, **kwargs)

    by_source = asyncio.run(go(where="source = 'doc0.md'"))
    assert [row.id for row in by_source.rows] == [
        i for i, s in zip(PASSAGES, SOURCES, strict=True) if s == "doc0.md"
    ]
    narrowed = asyncio.run(go(where="source = 'doc0.md'", filter_text="capital"))
    assert narrowed.total == 1 and narrowed.rows[0].id == "berlin"
    with pytest.raises(FilterError, match="no column named"):
        asyncio.run(go(where="nope = 1"))
