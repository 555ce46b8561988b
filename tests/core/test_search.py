"""The low-level search against real LanceDB tables embedded with the real model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import ColumnError, ConnectError, DimensionMismatchError, InvalidInputError
from recall_gui.core.base.types import RecallSearchInput
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableOptions, TableTarget
from tests.core.test_lance_order import lance_search
from tests.coretools import in_session, search, search_hits
from tests.kbtools import KnowledgeBase, snapshot_tree, write_lance_table


def query_input(
    kb: KnowledgeBase, vector: Any, limit: int | None = None, table: str | None = None
) -> RecallSearchInput:
    return RecallSearchInput(
        str(kb.db_dir), table or kb.name, len(vector), "q", list(map(float, vector)), limit
    )


def test_nearest_entry_comes_first(kb: KnowledgeBase, embedder: Any) -> None:
    vector = embedder.embed_sync("How do I change my password?")
    output = search(query_input(kb, vector, 3))
    assert output.results[0].id == "pw-reset"
    assert len(output.results) == 3


def test_missing_limit_returns_five(kb: KnowledgeBase, embedder: Any) -> None:
    output = search(query_input(kb, embedder.embed_sync("cities")))
    assert len(output.results) == 5


def test_results_are_lancedbs_flat_search(kb: KnowledgeBase, embedder: Any) -> None:
    vector = embedder.embed_sync("event loops and coroutines")
    result = search_hits(query_input(kb, vector, len(kb.ids)))
    expected, distances = lance_search(kb.db_dir, kb.name, vector, "l2", len(kb.ids))
    assert [hit.row_id for hit in result.hits] == expected
    assert result.metric == "l2"
    assert [hit.distance for hit in result.hits] == [float(distance) for distance in distances]


def test_limit_zero_returns_nothing(kb: KnowledgeBase, embedder: Any) -> None:
    assert search(query_input(kb, embedder.embed_sync("x"), 0)).results == ()


def test_limit_larger_than_the_table_returns_every_row(kb: KnowledgeBase, embedder: Any) -> None:
    output = search(query_input(kb, embedder.embed_sync("x"), 10_000))
    assert len(output.results) == len(kb.ids)


def test_dimension_mismatch_names_both_dimensions(kb: KnowledgeBase) -> None:
    bad = RecallSearchInput(str(kb.db_dir), kb.name, 768, "q", [0.0] * 768, 5)
    with pytest.raises(DimensionMismatchError) as caught:
        search(bad)
    assert str(caught.value) == "vector dimension mismatch: input has 768, but table schema has 384"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_query_vector_with_nan_or_infinity_is_refused(kb: KnowledgeBase, embedder: Any, bad: float) -> None:
    vector = [float(value) for value in embedder.embed_sync("coffee")]
    vector[7] = bad
    with pytest.raises(InvalidInputError) as caught:
        search(RecallSearchInput(str(kb.db_dir), kb.name, 384, "coffee", vector, 5))
    assert str(caught.value) == "the query vector contains NaN or infinite values"


def test_missing_database_folder_is_reported_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-db"
    with pytest.raises(ConnectError) as caught:
        search(RecallSearchInput(str(missing), "t", 3, "q", [0.0, 0.0, 0.0]))
    assert str(caught.value).startswith("failed to connect to vector db: ")
    assert caught.value.kind == "path"
    assert not missing.exists()


def test_missing_table_is_reported_with_the_tables_there(kb: KnowledgeBase) -> None:
    with pytest.raises(ConnectError) as caught:
        search(RecallSearchInput(str(kb.db_dir), "other", 384, "q", [0.0] * 384))
    assert str(caught.value).startswith("failed to connect to vector db: ")
    assert f"tables there: {kb.name}" in str(caught.value)
    assert caught.value.kind == "table"


def test_search_writes_nothing(kb: KnowledgeBase, embedder: Any) -> None:
    before = snapshot_tree(kb.db_dir)
    for text in ("password", "Paris", "yield"):
        search(query_input(kb, embedder.embed_sync(text), 3))
    assert snapshot_tree(kb.db_dir) == before


def test_hits_carry_row_ids_metadata_and_vectors(
    make_kb: Callable[..., KnowledgeBase], embedder: Any
) -> None:
    kb = make_kb(extra={"source": [f"file{i}.md" for i in range(12)]})
    result = search_hits(query_input(kb, embedder.embed_sync("capital of France"), 2))
    top = result.hits[0]
    assert top.id == "paris"
    assert top.extra == {"source": f"file{kb.ids.index('paris')}.md"}
    assert top.vector is not None and len(top.vector) == 384
    assert top.row_id == kb.ids.index("paris")


def test_other_column_names_are_detected(tmp_path: Path, kb: KnowledgeBase, embedder: Any) -> None:
    write_lance_table(
        tmp_path / "lc", "docs", kb.ids, kb.contents, kb.vectors, column_names=("doc_id", "text", "embedding")
    )
    vector = embedder.embed_sync("tides and the moon")
    request = RecallSearchInput(str(tmp_path / "lc"), "docs", 384, "q", list(map(float, vector)), 1)
    assert search(request).results[0].id == "tides"


def test_explicit_columns_override_detection(tmp_path: Path, kb: KnowledgeBase, embedder: Any) -> None:
    write_lance_table(
        tmp_path / "odd", "docs", kb.ids, kb.contents, kb.vectors, column_names=("ref", "body_text", "v")
    )
    vector = embedder.embed_sync("tides and the moon")
    request = RecallSearchInput(str(tmp_path / "odd"), "docs", 384, "q", list(map(float, vector)), 1)
    from recall_gui.core.storage.columns import ColumnOverrides

    options = TableOptions(columns=ColumnOverrides(id="ref", content="body_text", vector="v"))
    assert search(request, options).results[0].id == "tides"
    with pytest.raises(ColumnError, match='content column "nope" is not in the table'):
        search(request, TableOptions(columns=ColumnOverrides(content="nope")))


def test_a_row_added_by_another_program_is_seen_by_the_next_search(
    session: Session, kb: KnowledgeBase, embedder: Any
) -> None:
    import lancedb
    import pyarrow as pa

    from recall_gui.core.search.nearest import search as search_in

    vector = embedder.embed_sync("volcano eruption lava")
    asyncio.run(search_in(session, query_input(kb, vector, 1)))  # opens and keeps the table
    new = embedder.embed_sync("A volcano erupts when magma and lava rise to the surface.")
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.add(
        pa.table(
            {
                "id": ["volcano"],
                "content": ["A volcano erupts when magma and lava rise to the surface."],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(new.astype(np.float32)), 384),
            }
        )
    )
    assert asyncio.run(search_in(session, query_input(kb, vector, 1))).results[0].id == "volcano"


def test_a_query_slower_than_the_storage_timeout_says_it_timed_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Queries run with LanceDB's own timeout (``read_query``); its error reads like every other timeout.
    The table is large enough that no search of it can finish within the timeout's first check."""
    import lancedb
    import pyarrow as pa

    from recall_gui.core.base.errors import StorageError
    from recall_gui.core.storage.lance_calls import TIMEOUT_ENV, read_query

    matrix = np.random.default_rng(3).normal(size=(50_000, 64)).astype(np.float32)
    vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), 64)
    ids = [f"row-{n}" for n in range(len(matrix))]
    lancedb.connect(str(tmp_path)).create_table(
        "big", pa.table({"id": ids, "content": ids, "vector": vectors})
    )

    async def run(session: Session) -> Any:
        opened = await session.tables.open(TableTarget(str(tmp_path), "big"))
        monkeypatch.setenv(TIMEOUT_ENV, "0.000001")
        query = opened.table.query().nearest_to(matrix[0]).bypass_vector_index().with_row_id()
        return await read_query(query, 'searching "big"')

    with pytest.raises(StorageError, match=r'searching "big" timed out after 1e-06 s'):
        in_session(run)
