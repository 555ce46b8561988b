"""The exact search in memory: LanceDB's flat-search answer, from a cache that follows the table's version
and stays within the memory the user allows. Tables are embedded with the real model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.types import RecallSearchInput, SearchResult
from recall_gui.core.search.nearest import search_hits
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CACHE_ENV, NotCached, VectorCache
from recall_gui.core.storage.target import TableOptions, TableTarget
from tests.kbtools import PASSAGES, KnowledgeBase, snapshot_tree, write_lance_table

QUERIES = ("How do I change my password?", "capital cities of Europe", "coroutines and event loops")
METRICS = ("l2", "cosine", "dot")


@pytest.fixture(params=["from memory", "read by row id"])
def hits_source(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the hits' other columns kept in memory, and again with them read from the table."""
    from recall_gui.core.session import vector_cache

    if request.param == "read by row id":
        monkeypatch.setattr(vector_cache, "PAYLOAD_SHARE", 0.0)
    return str(request.param)


def run_search(
    session: Session, db_dir: Path, table: str, vector: Any, limit: int, metric: str | None = None
) -> SearchResult:
    """One search on the test's session: what it keeps (tables, vectors) stays for the next."""
    request = RecallSearchInput(str(db_dir), table, len(vector), "q", list(map(float, vector)), limit)
    return asyncio.run(search_hits(session, request, TableOptions(metric=metric)))


def lancedb_flat(
    db_dir: Path, table: str, vector: Any, limit: int, metric: str
) -> tuple[list[str], list[float]]:
    import lancedb

    rows = (
        lancedb.connect(str(db_dir))
        .open_table(table)
        .search(np.asarray(vector, np.float32))
        .distance_type(metric)
        .bypass_vector_index()
        .limit(limit)
        .to_arrow()
    )
    return rows.column("id").to_pylist(), rows.column("_distance").to_pylist()


def assert_same_as_lancedb(
    session: Session, db_dir: Path, table: str, vector: Any, limit: int, metric: str
) -> SearchResult:
    result = run_search(session, db_dir, table, vector, limit, metric)
    ids, distances = lancedb_flat(db_dir, table, vector, limit, metric)
    assert result.method == "exact"
    assert result.metric == metric
    assert [hit.id for hit in result.hits] == ids
    assert [hit.distance for hit in result.hits] == distances  # LanceDB's float32 distances, bit for bit
    return result


@pytest.fixture
def tied_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """The passages, then copies of two of them in a later fragment (ties at equal distance)."""
    import lancedb
    import pyarrow as pa

    ids, contents = list(PASSAGES), list(PASSAGES.values())
    db_dir = tmp_path / "tied"
    write_lance_table(db_dir, "notes", ids, contents, passage_vectors)
    copies = [ids.index("paris"), ids.index("asyncio")]
    copy_vectors = passage_vectors[copies].astype(np.float32)
    lancedb.connect(str(db_dir)).open_table("notes").add(
        pa.table(
            {
                "id": [f"{ids[i]}-copy" for i in copies],
                "content": [contents[i] for i in copies],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(copy_vectors.ravel()), 384),
            }
        )
    )
    all_ids = (*ids, *(f"{ids[i]}-copy" for i in copies))
    vectors = np.vstack([passage_vectors, copy_vectors])
    return KnowledgeBase(
        "notes", db_dir, tmp_path, all_ids, (*contents, *(contents[i] for i in copies)), vectors
    )


def build_large_kb(db_dir: Path, passage_vectors: Any) -> KnowledgeBase:
    """1,200 rows (about 1.8 MB of vectors): every passage a hundred times, interleaved, so that most
    distances are tied and the scan works on many blocks."""
    ids = [f"{name}#{copy}" for copy in range(100) for name in PASSAGES]
    contents = [text for _ in range(100) for text in PASSAGES.values()]
    vectors = np.tile(passage_vectors, (100, 1))
    write_lance_table(db_dir, "big", ids, contents, vectors)
    return KnowledgeBase("big", db_dir, db_dir, tuple(ids), tuple(contents), vectors)


@pytest.fixture
def large_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    return build_large_kb(tmp_path / "large", passage_vectors)


@pytest.mark.parametrize("metric", METRICS)
def test_exact_search_equals_lancedb_flat_search(
    session: Session, tied_kb: KnowledgeBase, embedder: Any, metric: str, hits_source: str
) -> None:
    for text in QUERIES:
        vector = embedder.embed_sync(text)
        for limit in (1, 3, len(tied_kb.ids)):
            assert_same_as_lancedb(session, tied_kb.db_dir, tied_kb.name, vector, limit, metric)


@pytest.mark.parametrize("metric", METRICS)
def test_equal_distances_are_ordered_by_row_id_as_lancedb_does(
    session: Session, tied_kb: KnowledgeBase, metric: str, hits_source: str
) -> None:
    vector = tied_kb.vectors[tied_kb.ids.index("paris")]
    result = assert_same_as_lancedb(session, tied_kb.db_dir, tied_kb.name, vector, 2, metric)
    assert [hit.id for hit in result.hits] == ["paris", "paris-copy"]
    assert result.hits[0].distance == result.hits[1].distance
    assert result.hits[0].row_id is not None and result.hits[1].row_id is not None
    assert result.hits[0].row_id < result.hits[1].row_id


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.slow
def test_many_ties_over_many_blocks_equal_lancedb(
    session: Session, large_kb: KnowledgeBase, embedder: Any, metric: str
) -> None:
    vector = embedder.embed_sync("what is the capital of Germany")
    for limit in (5, 150, 1200):
        assert_same_as_lancedb(session, large_kb.db_dir, large_kb.name, vector, limit, metric)


def test_hits_come_with_their_stored_vectors_and_columns(
    session: Session, make_kb: Callable[..., KnowledgeBase], embedder: Any, hits_source: str
) -> None:
    kb = make_kb(extra={"source": [f"file{i}.md" for i in range(12)], "page": list(range(12))})
    result = run_search(session, kb.db_dir, kb.name, embedder.embed_sync("ocean tides"), 3)
    assert result.method == "exact"
    top = result.hits[0]
    position = kb.ids.index("tides")
    assert (top.id, top.content, top.row_id) == ("tides", PASSAGES["tides"], position)
    assert top.extra == {"source": f"file{position}.md", "page": position}
    assert top.vector is not None
    assert np.array_equal(np.asarray(top.vector, np.float32), kb.vectors[position])


def test_null_and_zero_vectors_are_skipped_as_lancedb_skips_them(
    session: Session, tmp_path: Path, passage_vectors: Any, embedder: Any
) -> None:
    import lancedb
    import pyarrow as pa

    vectors = np.vstack([passage_vectors, np.zeros((2, 384), np.float32)]).astype(np.float32)
    mask = np.zeros(len(vectors), bool)
    mask[-1] = True
    ids = [*PASSAGES, "zero", "null"]
    table = pa.table(
        {
            "id": ids,
            "content": [*PASSAGES.values(), "", ""],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 384, mask=pa.array(mask)),
        }
    )
    lancedb.connect(str(tmp_path / "odd")).create_table("notes", table, on_bad_vectors="null")
    vector = embedder.embed_sync("photosynthesis in plants")
    for metric in METRICS:
        result = assert_same_as_lancedb(session, tmp_path / "odd", "notes", vector, len(ids), metric)
        found = {hit.id for hit in result.hits}
        assert "null" not in found
        assert ("zero" in found) == (metric != "cosine")


def test_rows_with_nan_are_left_out_of_the_matrix(passage_vectors: Any) -> None:
    """LanceDB refuses to write NaN vectors from Python, but other writers may; its search skips them."""
    import pyarrow as pa

    from recall_gui.core.session.vector_cache import _MatrixBuilder

    vectors = passage_vectors[:4].astype(np.float32).copy()
    vectors[2, 5] = np.nan
    batch = pa.record_batch(
        {
            "id": ["a", "b", "c", "d"],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 384),
            "_rowid": pa.array([10, 11, 12, 13], pa.uint64()),
        }
    )
    builder = _MatrixBuilder(4, 384, "vector", payload_limit=1024 * 1024)
    builder.add(batch)
    table = builder.finish()
    assert table.vectors.row_ids.tolist() == [10, 11, 13]
    assert np.array_equal(table.vectors.matrix, vectors[[0, 1, 3]])
    assert table.payload is not None and table.payload.column("id").to_pylist() == ["a", "b", "d"]


def test_other_columns_are_kept_only_when_they_fit(
    session: Session, tmp_path: Path, passage_vectors: Any, embedder: Any
) -> None:
    """Content bigger than the vectors is not held in memory; the hits are then read from the table."""
    long_contents = [f"{text} " * 400 for text in PASSAGES.values()]  # ~25 kB a row, vectors 1.5 kB
    write_lance_table(tmp_path / "long", "notes", list(PASSAGES), long_contents, passage_vectors)
    write_lance_table(tmp_path / "short", "notes", list(PASSAGES), list(PASSAGES.values()), passage_vectors)
    vector = embedder.embed_sync("capital of France")
    for name, contents, kept in (("long", long_contents, False), ("short", list(PASSAGES.values()), True)):
        result = run_search(session, tmp_path / name, "notes", vector, 1)
        assert result.method == "exact"
        assert (result.hits[0].id, result.hits[0].content) == (
            "paris",
            contents[list(PASSAGES).index("paris")],
        )

        async def cached(db: Path = tmp_path / name) -> Any:
            return await session.vectors.get(await session.tables.open(TableTarget(str(db), "notes")))

        assert (asyncio.run(cached()).payload is not None) == kept
    assert session.vectors.used_bytes < 2 * 1024 * 1024


def test_infinite_values_are_searched_by_lancedb_with_a_note(
    session: Session, tmp_path: Path, passage_vectors: Any, embedder: Any
) -> None:
    vectors = passage_vectors.astype(np.float32).copy()
    vectors[3, 0] = np.inf
    write_lance_table(tmp_path / "inf", "notes", list(PASSAGES), list(PASSAGES.values()), vectors)
    vector = embedder.embed_sync("capital of France")
    result = run_search(session, tmp_path / "inf", "notes", vector, 3)
    assert result.method == "flat"
    assert result.note is not None and "infinite" in result.note
    assert [hit.id for hit in result.hits] == lancedb_flat(tmp_path / "inf", "notes", vector, 3, "l2")[0]


def test_a_new_version_is_read_again_and_its_rows_found(
    session: Session, kb: KnowledgeBase, embedder: Any
) -> None:
    import lancedb
    import pyarrow as pa

    vector = embedder.embed_sync("volcano eruption lava")
    before = run_search(session, kb.db_dir, kb.name, vector, 1)
    assert before.method == "exact"
    key = (str(kb.db_dir), kb.name, "vector", None)  # None: it follows the latest version
    assert session.vectors.cached_versions()[key] == before.table_version
    text = "A volcano erupts when magma and lava rise to the surface."
    new = embedder.embed_sync(text).astype(np.float32)
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.add(
        pa.table(
            {
                "id": ["volcano"],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(new), 384),
            }
        )
    )
    after = run_search(session, kb.db_dir, kb.name, vector, 1)
    assert after.method == "exact"
    assert [hit.id for hit in after.hits] == ["volcano"]
    assert after.table_version is not None and before.table_version is not None
    assert after.table_version > before.table_version
    assert session.vectors.cached_versions()[key] == after.table_version
    table.delete("id = 'volcano'")
    assert run_search(session, kb.db_dir, kb.name, vector, 1).hits[0].id != "volcano"


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tables whose vectors are read from now on (one entry per read)."""
    reads: list[str] = []
    original = VectorCache._read

    async def counting_read(self: Any, key: Any, opened: Any, limit: int, size: Any) -> Any:
        reads.append(opened.name)
        return await original(self, key, opened, limit, size)

    monkeypatch.setattr(VectorCache, "_read", counting_read)
    return reads


def test_concurrent_first_searches_read_the_vectors_once(
    session: Session, kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = count_reads(monkeypatch)
    vectors = [embedder.embed_sync(text) for text in QUERIES]

    async def three_at_once() -> list[SearchResult]:
        requests = [RecallSearchInput(str(kb.db_dir), kb.name, 384, "q", v, 2) for v in vectors]
        return list(await asyncio.gather(*(search_hits(session, r) for r in requests)))

    results = asyncio.run(three_at_once())
    assert reads == [kb.name]
    assert [r.method for r in results] == ["exact"] * 3
    assert [r.hits[0].id for r in results] == ["pw-reset", "berlin", "asyncio"]


def test_a_table_above_the_memory_bound_is_searched_by_lancedb(
    session: Session, large_kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    vector = embedder.embed_sync("espresso and coffee beans")
    exact = run_search(session, large_kb.db_dir, large_kb.name, vector, 5)
    assert exact.method == "exact" and exact.note is None
    session.vectors.forget()
    monkeypatch.setenv(CACHE_ENV, "1")  # 1 MB: less than the table's 1.8 MB of vectors
    result = run_search(session, large_kb.db_dir, large_kb.name, vector, 5)
    assert result.method == "flat"
    assert result.note is not None and CACHE_ENV in result.note and "2 MB" in result.note
    expected = lancedb_flat(large_kb.db_dir, large_kb.name, vector, 5, result.metric)[0]
    assert [hit.id for hit in result.hits] == [hit.id for hit in exact.hits] == expected
    assert session.vectors.used_bytes == 0


def test_a_big_table_is_read_in_the_background_while_lancedb_answers(
    session: Session, large_kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.search.nearest import prepare
    from recall_gui.core.session import vector_cache

    monkeypatch.setattr(vector_cache, "WAIT_FOR_READ_BYTES", 1024 * 1024)  # the table has 1.8 MB
    reads = count_reads(monkeypatch)
    vector = embedder.embed_sync("espresso and coffee beans")

    async def search_then_wait_for_the_read() -> tuple[SearchResult, str | None, SearchResult]:
        request = RecallSearchInput(str(large_kb.db_dir), large_kb.name, 384, "q", vector, 5)
        first = await search_hits(session, request)
        ready = await prepare(
            session, TableTarget(str(large_kb.db_dir), large_kb.name)
        )  # waits for the read the search began
        return first, ready, await search_hits(session, request)

    first, ready, second = asyncio.run(search_then_wait_for_the_read())
    assert first.method == "flat"
    assert first.note is not None and "being read into memory" in first.note
    assert ready is None
    assert second.method == "exact" and second.note is None
    assert [hit.id for hit in first.hits] == [hit.id for hit in second.hits]
    assert reads == [large_kb.name]


def test_prepare_explains_why_a_table_will_be_searched_slowly(
    session: Session, large_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.search.nearest import prepare

    monkeypatch.setenv(CACHE_ENV, "1")
    note = asyncio.run(prepare(session, TableTarget(str(large_kb.db_dir), large_kb.name)))
    assert note is not None and "more than the 1 MB allowed" in note


@pytest.mark.parametrize(("setting", "words"), [("0", "off"), ("lots", "not a whole number")])
def test_the_exact_path_can_be_turned_off_and_a_bad_setting_is_explained(
    session: Session,
    kb: KnowledgeBase,
    embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    words: str,
) -> None:
    monkeypatch.setenv(CACHE_ENV, setting)
    result = run_search(session, kb.db_dir, kb.name, embedder.embed_sync("git history"), 1)
    assert result.method == "flat"
    assert result.note is not None and words in result.note
    assert result.hits[0].id == "git-rebase"


def test_least_recently_searched_tables_make_room(
    session: Session,
    large_kb: KnowledgeBase,
    tmp_path: Path,
    passage_vectors: Any,
    embedder: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    other = build_large_kb(tmp_path / "other", passage_vectors)
    # Reading a table holds its 1.8 MB of float32 vectors; its int8 codes then take under 0.6 MB. In
    # 2 MB one table is read, but not beside another one's codes.
    monkeypatch.setenv(CACHE_ENV, "2")
    vector = embedder.embed_sync("tides")
    assert run_search(session, large_kb.db_dir, large_kb.name, vector, 1).method == "exact"
    assert run_search(session, other.db_dir, other.name, vector, 1).method == "exact"
    assert {key[0] for key in session.vectors.cached_versions()} == {str(other.db_dir)}
    assert session.vectors.used_bytes <= 2 * 1024 * 1024
    assert run_search(session, large_kb.db_dir, large_kb.name, vector, 1).method == "exact"
    assert {key[0] for key in session.vectors.cached_versions()} == {str(large_kb.db_dir)}


def test_exact_search_and_rereading_write_nothing(session: Session, kb: KnowledgeBase, embedder: Any) -> None:
    before = snapshot_tree(kb.db_dir)
    for metric in METRICS:
        for text in QUERIES:
            assert (
                run_search(session, kb.db_dir, kb.name, embedder.embed_sync(text), 3, metric).method
                == "exact"
            )
    session.vectors.forget()
    run_search(session, kb.db_dir, kb.name, embedder.embed_sync("again"), 3)
    assert snapshot_tree(kb.db_dir) == before


def test_hits_that_vanished_after_ranking_are_not_returned(
    session: Session, kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row deleted between ranking and reading the hits: the search must not return stale rows."""
    import lancedb

    from recall_gui.core.search.nearest import _exact_hits
    from recall_gui.core.session import vector_cache
    from recall_gui.core.session.exact import nearest_rows

    monkeypatch.setattr(vector_cache, "PAYLOAD_SHARE", 0.0)  # the hits are read from the table

    async def rank_then_delete() -> Any:
        opened = await session.tables.open(TableTarget(str(kb.db_dir), kb.name))
        cached = await session.vectors.get(opened)
        assert not isinstance(cached, vector_cache.NotCached)
        ranking = nearest_rows(cached.vectors, embedder.embed_sync("capital of France"), "l2", 2)
        lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete("id = 'paris'")
        return await _exact_hits(opened, cached, *ranking)

    assert asyncio.run(rank_then_delete()) is None
    after = run_search(session, kb.db_dir, kb.name, embedder.embed_sync("capital of France"), 2)
    assert "paris" not in [hit.id for hit in after.hits]


def test_a_search_whose_hits_vanish_after_ranking_is_answered_by_lancedbs_flat_scan(
    session: Session, kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program deletes the nearest row between the ranking in memory and the reading of the
    hits: the search answers with LanceDB's flat scan of the table as it now is, and says why."""
    import lancedb

    from recall_gui.core.search import nearest
    from recall_gui.core.session import vector_cache

    monkeypatch.setattr(vector_cache, "PAYLOAD_SHARE", 0.0)  # the hits are read from the table
    read_hits = nearest._exact_hits

    async def delete_then_read(*args: Any, **kwargs: Any) -> Any:
        lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete("id = 'paris'")
        return await read_hits(*args, **kwargs)

    monkeypatch.setattr(nearest, "_exact_hits", delete_then_read)
    vector = embedder.embed_sync("capital of France")
    result = run_search(session, kb.db_dir, kb.name, vector, 3, "l2")
    assert (result.method, result.note) == (
        "flat",
        "the table changed during the search, so LanceDB's flat scan answered it",
    )
    ids, distances = lancedb_flat(kb.db_dir, kb.name, vector, 3, "l2")
    assert "paris" not in ids
    assert [hit.id for hit in result.hits] == ids
    assert [hit.distance for hit in result.hits] == distances


@pytest.mark.parametrize(
    ("index_type", "metric"), [("IvfHnswSq", "cosine"), ("IvfPq", "l2"), ("IvfHnswPq", "l2")]
)
def test_indexed_tables_are_searched_as_cosh_searches_them_for_any_limit(
    session: Session, large_kb: KnowledgeBase, embedder: Any, index_type: str, metric: str
) -> None:
    """Through the index with LanceDB's defaults, as cosh's ``nearest_to(v).limit(n)`` does: the hits are
    LanceDB's ``search(v).limit(n)`` with nothing else set, for small and large limits."""
    import lancedb
    from lancedb import index

    config = getattr(index, index_type)(distance_type=metric, num_partitions=2)
    table = lancedb.connect(str(large_kb.db_dir)).open_table(large_kb.name)
    table.create_index("vector", config=config)
    vector = embedder.embed_sync("the capital of France")
    for limit in (1, 10, 60):
        result = run_search(session, large_kb.db_dir, large_kb.name, vector, limit)
        assert result.method == f"index:{index_type}"
        assert result.metric == metric
        lance = table.search(vector).limit(limit).to_list()
        assert [hit.id for hit in result.hits] == [row["id"] for row in lance]
        assert [hit.distance for hit in result.hits] == [row["_distance"] for row in lance]
    assert session.vectors.used_bytes == 0


def test_a_row_added_to_an_indexed_table_is_found_by_the_next_search(
    session: Session, large_kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An indexed search skips the core's version check for a while (``INDEX_RECHECK_S``); LanceDB's own
    check on every query still finds a row another program added in between."""
    import lancedb
    import pyarrow as pa
    from lancedb.index import IvfFlat

    from recall_gui.core.search import nearest

    monkeypatch.setattr(nearest, "INDEX_RECHECK_S", 3600.0)  # however slow this machine is right now
    table = lancedb.connect(str(large_kb.db_dir)).open_table(large_kb.name)
    table.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=2))
    query = embedder.embed_sync("volcano eruption lava")
    before = run_search(session, large_kb.db_dir, large_kb.name, query, 1)
    assert before.method == "index:IvfFlat" and before.hits[0].id != "volcano"
    text = "A volcano erupts when magma and lava rise to the surface."
    vector = embedder.embed_sync(text).astype(np.float32)
    table.add(
        pa.table(
            {
                "id": ["volcano"],
                "content": [text],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vector), 384),
            }
        )
    )
    skipped = session.tables.opened_recently(TableTarget(str(large_kb.db_dir), large_kb.name), 3600.0)
    assert skipped is not None and skipped.version == before.table_version  # the next search skips it
    after = run_search(session, large_kb.db_dir, large_kb.name, query, 1)
    assert after.hits[0].id == "volcano"


def test_an_empty_table_answers_with_no_hits(session: Session, tmp_path: Path, embedder: Any) -> None:
    write_lance_table(tmp_path / "empty", "notes", [], [], np.empty((0, 384), np.float32))
    result = run_search(session, tmp_path / "empty", "notes", embedder.embed_sync("anything"), 5)
    assert result.hits == ()
    assert result.method == "exact"


def test_a_table_replaced_with_another_width_while_its_vectors_are_read_is_not_cached(
    session: Session, kb: KnowledgeBase
) -> None:
    """Another program overwrites the table (8-d vectors now) between opening it and reading its
    vectors: the read must stop with a reason, not fail on a reshape (it did, 1 run in 22)."""
    import lancedb
    import pyarrow as pa

    from recall_gui.core.session.vector_cache import NotCached

    async def open_then_read() -> Any:
        opened = await session.tables.open(TableTarget(str(kb.db_dir), kb.name))
        narrow = np.ones((3, 8), np.float32)
        replacement = pa.table(
            {
                "id": ["a", "b", "c"],
                "content": ["x", "y", "z"],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(narrow.ravel()), 8),
            }
        )
        lancedb.connect(str(kb.db_dir)).create_table(kb.name, replacement, mode="overwrite")
        return await session.vectors.get(opened)

    outcome = asyncio.run(open_then_read())
    assert isinstance(outcome, NotCached)
    assert "changed while it was read" in outcome.reason and "384 to 8 dimensions" in outcome.reason
    assert session.vectors.used_bytes == 0


def test_the_scan_and_the_rank_refuse_a_metric_they_do_not_know() -> None:
    from recall_gui.core.session.exact import VectorMatrix, nearest_rows
    from recall_gui.core.session.exact_rank import rank_of

    vectors = VectorMatrix.build(np.eye(3, dtype=np.float32), np.arange(3, dtype=np.uint64))
    query = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="unknown metric 'hamming'"):
        nearest_rows(vectors, query, "hamming", 2)

    def any_distance(rows: Any, _query: Any, _metric: str) -> Any:  # past LanceDB's kernel, which refuses too
        return np.zeros(len(rows), np.float32)

    with pytest.raises(ValueError, match="unknown metric 'hamming'"):
        rank_of(vectors, query, "hamming", 0, measure=any_distance)


# --- the vector cache's own bookkeeping (vectors made with NumPy: nothing here ranks a query) -----------


def numbered_table(db_dir: Path, rows: int, dim: int, seed: int = 0) -> Any:
    """A table of ``rows`` random ``dim``-wide vectors (ids "0", "1", ...), and the vectors."""
    vectors = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    write_lance_table(db_dir, "t", [str(i) for i in range(rows)], ["text"] * rows, vectors)
    return vectors


def open_table(session: Session, db_dir: Path, version: int | None = None) -> Any:
    async def opening() -> Any:
        return await session.tables.open(TableTarget(str(db_dir), "t", version=version))

    return opening()


def test_rows_added_after_the_count_are_read_with_the_others(session: Session, tmp_path: Path) -> None:
    """Another program adds rows between the table's count and the read of its vectors: the matrix grows
    to hold them (the next version's read would find them anyway)."""
    import lancedb
    import pyarrow as pa

    first = numbered_table(tmp_path / "grow", 20, 8)
    added = np.full((30, 8), 2.0, np.float32)

    async def count_add_read() -> Any:
        opened = await open_table(session, tmp_path / "grow")
        assert await opened.count_rows() == 20
        lancedb.connect(str(tmp_path / "grow")).open_table("t").add(
            pa.table(
                {
                    "id": [f"new{i}" for i in range(30)],
                    "content": ["added"] * 30,
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(added.ravel()), 8),
                }
            )
        )
        return await session.vectors.get(opened, wait=True)

    cached = asyncio.run(count_add_read())
    assert not isinstance(cached, NotCached)
    assert np.array_equal(cached.vectors.matrix, np.vstack([first, added]))
    assert len(np.unique(cached.vectors.row_ids)) == 50


@pytest.mark.parametrize("value_type", ["float64", "float16"])
def test_vectors_stored_as_other_than_float32_are_left_to_lancedb(
    session: Session, tmp_path: Path, value_type: str
) -> None:
    import lancedb
    import pyarrow as pa

    kind = pa.float64() if value_type == "float64" else pa.float16()
    table = pa.table(
        {
            "id": ["a", "b"],
            "content": ["x", "y"],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(16), kind), 8),
        }
    )
    lancedb.connect(str(tmp_path / "wide")).create_table("t", table)

    async def get() -> Any:
        return await session.vectors.get(await open_table(session, tmp_path / "wide"), wait=True)

    name = "double" if value_type == "float64" else "halffloat"
    assert asyncio.run(get()) == NotCached(
        f"vectors stored as fixed_size_list<item: {name}>[8] are searched by LanceDB's flat scan "
        "(the exact path reads float32)"
    )
    assert session.vectors.used_bytes == 0


def test_a_vector_with_a_missing_component_is_left_to_lancedb(session: Session, tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    components = pa.array([1.0] * 7 + [None] + [1.0] * 8, pa.float32())
    table = pa.table(
        {"id": ["a", "b"], "content": ["x", "y"], "vector": pa.FixedSizeListArray.from_arrays(components, 8)}
    )
    lancedb.connect(str(tmp_path / "holes")).create_table("t", table)

    async def get() -> Any:
        return await session.vectors.get(await open_table(session, tmp_path / "holes"), wait=True)

    assert asyncio.run(get()) == NotCached(
        "comparing all rows in memory is not possible: some vectors have missing components"
    )


def test_a_batch_without_the_vector_column_voids_the_read() -> None:
    """LanceDB refuses a read of a column the table no longer has before any batch comes; the builder
    still refuses a batch without it rather than fail on a missing column."""
    import pyarrow as pa

    from recall_gui.core.session.vector_cache import _MatrixBuilder, _TableChanged

    builder = _MatrixBuilder(1, 8, "vector", payload_limit=0)
    with pytest.raises(_TableChanged, match=r'^its column "vector" vanished while it was read$'):
        builder.add(pa.record_batch({"id": ["a"], "_rowid": pa.array([0], pa.uint64())}))


def test_a_table_removed_after_it_was_opened_reports_lancedbs_error(session: Session, tmp_path: Path) -> None:
    import shutil

    from recall_gui.core.base.errors import StorageError

    numbered_table(tmp_path / "gone", 4, 8)

    async def open_remove_read() -> Any:
        opened = await open_table(session, tmp_path / "gone")
        opened.row_counts.clear()  # not counted yet: the read counts the rows first
        shutil.rmtree(tmp_path / "gone" / "t.lance")
        return await session.vectors.get(opened, wait=True)

    with pytest.raises(StorageError, match=r'^reading table "t" failed: .*Not found'):
        asyncio.run(open_remove_read())
    assert session.vectors.used_bytes == 0


def test_without_the_machines_memory_size_the_bound_is_2048_mb(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from recall_gui.core.session.vector_cache import cache_limit, default_limit_mb

    def no_sysconf(name: str) -> int:  # Windows has no sysconf: what a test here can make of that
        raise ValueError(f"unrecognized configuration name {name!r}")

    monkeypatch.setattr(os, "sysconf", no_sysconf)
    monkeypatch.delenv(CACHE_ENV, raising=False)
    assert default_limit_mb() == 2048
    assert cache_limit() == 2048 * 1024 * 1024


def test_vectors_too_wide_for_int8_codes_are_scanned_as_float32_with_a_note(
    session: Session, tmp_path: Path
) -> None:
    dim = 254**2 + 1
    vectors = numbered_table(tmp_path / "widest", 2, dim)

    async def get() -> Any:
        return await session.vectors.get(await open_table(session, tmp_path / "widest"), wait=True)

    cached = asyncio.run(get())
    assert not isinstance(cached, NotCached)
    assert cached.note == (
        f"{dim}-dimensional vectors are too wide for the int8 codes' bound, so exact search scans the "
        "float32 vectors"
    )
    assert cached.vectors.codes is None and np.array_equal(cached.vectors.matrix, vectors)


@pytest.fixture
def gate() -> Iterator[tuple[Any, threading.Event]]:
    """A compute thread kept busy until the test sets the event: a read waits at its first copy."""
    from concurrent.futures import ThreadPoolExecutor

    release = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(release.wait, 30)
        yield pool, release
        release.set()


def test_forgetting_a_version_stops_its_read_in_the_background(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: tuple[Any, threading.Event],
) -> None:
    from recall_gui.core.session import vector_cache

    monkeypatch.setattr(vector_cache, "WAIT_FOR_READ_BYTES", 0)  # every read goes on in the background
    vectors = numbered_table(tmp_path / "pinned", 20, 8)
    pool, release = gate
    cache = VectorCache(pool)

    async def search_forget_search() -> tuple[Any, int, int, Any]:
        opened = await open_table(session, tmp_path / "pinned", version=1)
        first = await cache.get(opened)
        reserved = cache.used_bytes
        cache.forget_version(str(tmp_path / "pinned"), "t", 1)
        forgotten = cache.used_bytes
        release.set()
        return first, reserved, forgotten, await cache.get(opened, wait=True)

    first, reserved, forgotten, again = asyncio.run(search_forget_search())
    assert isinstance(first, NotCached) and "being read into memory" in first.reason
    assert (reserved, forgotten) == (20 * (8 * 4 + 16), 0)
    assert not isinstance(again, NotCached) and np.array_equal(again.vectors.matrix, vectors)


def test_forgetting_one_version_keeps_the_others(session: Session, tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    numbered_table(tmp_path / "versions", 5, 8)
    lancedb.connect(str(tmp_path / "versions")).open_table("t").add(
        pa.table(
            {
                "id": ["new"],
                "content": ["added"],
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(np.ones(8, np.float32)), 8),
            }
        )
    )
    cache = session.vectors
    uri = str(tmp_path / "versions")

    async def keep_both() -> None:
        for version in (1, 2):
            cached = await cache.get(await open_table(session, tmp_path / "versions", version), wait=True)
            assert not isinstance(cached, NotCached)

    asyncio.run(keep_both())
    assert cache.cached_versions() == {(uri, "t", "vector", 1): 1, (uri, "t", "vector", 2): 2}
    cache.forget_version(uri, "t", 1)
    assert cache.cached_versions() == {(uri, "t", "vector", 2): 2}
    assert [len(table.vectors.row_ids) for table in cache.cached_tables().values()] == [6]


def test_forgetting_a_version_stops_its_read_while_it_counts_the_rows(
    session: Session, tmp_path: Path
) -> None:
    """The search that began the read was given up, and the version is then forgotten while LanceDB
    still counts the rows: the count is abandoned, and a later search reads the version afresh."""
    numbered_table(tmp_path / "pinned", 5, 8)
    cache = session.vectors
    abandoned: list[bool] = []

    async def give_up_then_forget() -> Any:
        opened = await open_table(session, tmp_path / "pinned", version=1)
        opened.row_counts.clear()
        real, counting, answer = opened.native, asyncio.Event(), asyncio.Event()

        class SlowCount:  # a count that has not answered yet (a slow store): held here until then
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            async def count_rows(self, where: str | None = None) -> int:
                counting.set()
                try:
                    await answer.wait()
                except asyncio.CancelledError:
                    abandoned.append(True)
                    raise
                return int(await real.count_rows(where))

        opened.native = SlowCount()
        search = asyncio.create_task(cache.get(opened))
        await counting.wait()
        search.cancel()
        with pytest.raises(asyncio.CancelledError):
            await search
        cache.forget_version(str(tmp_path / "pinned"), "t", 1)
        for _ in range(100):  # the cancel reaches the count within a few turns of the loop
            if abandoned:
                break
            await asyncio.sleep(0)
        answer.set()
        return await cache.get(opened, wait=True)

    again = asyncio.run(give_up_then_forget())
    assert abandoned == [True]
    assert not isinstance(again, NotCached) and len(again.vectors.row_ids) == 5


def test_a_version_forgotten_before_its_read_began_is_read_afresh_later(
    session: Session, tmp_path: Path
) -> None:
    numbered_table(tmp_path / "pinned", 5, 8)
    cache = session.vectors

    async def give_up_at_once() -> Any:
        opened = await open_table(session, tmp_path / "pinned", version=1)
        search = asyncio.create_task(cache.get(opened))
        await asyncio.sleep(0)  # the search has begun the read; the read itself has not run yet
        search.cancel()
        cache.forget_version(str(tmp_path / "pinned"), "t", 1)
        with pytest.raises(asyncio.CancelledError):
            await search
        assert cache.used_bytes == 0 and cache.cached_versions() == {}
        return await cache.get(opened, wait=True)

    again = asyncio.run(give_up_at_once())
    assert not isinstance(again, NotCached) and len(again.vectors.row_ids) == 5


def test_two_tables_read_side_by_side_stay_within_the_bound_together(
    session: Session,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: tuple[Any, threading.Event],
) -> None:
    """Each fits alone (0.6 MB) but not both (1.2 MB, the bound is 1 MB): both searches get their rows
    in memory, and once both reads are done only the table read last stays."""
    monkeypatch.setenv(CACHE_ENV, "1")
    for name in ("one", "two"):
        numbered_table(tmp_path / name, 400, 384)
    pool, release = gate
    cache = VectorCache(pool)
    need = 400 * (384 * 4 + 16)

    async def both_at_once() -> tuple[list[Any], int]:
        opened = [await open_table(session, tmp_path / name) for name in ("one", "two")]
        reads = [asyncio.create_task(cache.get(table, wait=True)) for table in opened]
        for _ in range(3000):  # until both reads hold their room (each waits for the compute thread)
            if cache.used_bytes == 2 * need:
                break
            await asyncio.sleep(0.01)
        reserved = cache.used_bytes
        release.set()
        return list(await asyncio.gather(*reads)), reserved

    results, reserved = asyncio.run(both_at_once())
    assert reserved == 2 * need
    assert [isinstance(result, NotCached) for result in results] == [False, False]
    assert len(cache.cached_versions()) == 1
    assert cache.used_bytes <= 1024 * 1024
