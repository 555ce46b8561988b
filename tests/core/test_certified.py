"""The int8 scan's candidates always hold the exact top k: against a float64 NumPy ranking on matrices made
to be hard for the bound (near-ties below float32 resolution, exact duplicates, rows of zero length, wide
magnitudes), against LanceDB's flat search on small tables, and through the core, whose answers must be the
same with and without the codes. (The float32 path is tested in test_exact_ranking.py.)"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_gui.core.base.types import RecallSearchInput, SearchResult
from recall_gui.core.search.nearest import search_hits
from recall_gui.core.session.certified import Int8Codes, candidates
from recall_gui.core.session.exact import VectorMatrix, nearest_rows
from recall_gui.core.session.session import Session
from recall_gui.core.storage.target import TableOptions
from tests.kbtools import KnowledgeBase, write_lance_table

METRICS = ("l2", "cosine", "dot")


def float64_top_k(matrix: Any, query: Any, metric: str, k: int, allowed: Any = None) -> list[int]:
    """The k nearest rows in LanceDB's order (distance in float64, rounded to float32, then row id; here
    the row id is the position); rows of zero length have no cosine distance."""
    x, q = matrix.astype(np.float64), query.astype(np.float64)
    if metric == "l2":
        distances = ((x - q) ** 2).sum(axis=1)
    elif metric == "cosine":
        with np.errstate(divide="ignore", invalid="ignore"):
            distances = 1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q))
    else:
        distances = 1 - x @ q
    rounded = distances.astype(np.float32)
    order = [int(i) for i in np.lexsort((np.arange(len(x)), rounded)) if not np.isnan(rounded[i])]
    if allowed is not None:
        order = [i for i in order if allowed[i]]
    return order[:k]


@st.composite
def hard_cases(draw: st.DrawFn, max_rows: int = 400, max_dim: int = 40) -> tuple[Any, Any, str, int]:
    """A matrix, a query, a metric and k: rows in clusters of varied spread down to 1e-9 (closer than
    float32 can tell apart), copies of rows (ties), rows of zero length, magnitudes from 1e-3 to 1e3."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    rows = draw(st.integers(1, max_rows))
    dim = draw(st.integers(1, max_dim))
    spread = draw(st.sampled_from([1.0, 1e-2, 1e-5, 1e-7, 1e-9]))
    centers = rng.standard_normal((draw(st.integers(1, 5)), dim))
    matrix = centers[rng.integers(0, len(centers), rows)] + spread * rng.standard_normal((rows, dim))
    if draw(st.booleans()):
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix *= draw(st.sampled_from([1e-3, 1.0, 1e3]))
    matrix = matrix.astype(np.float32)
    copies = draw(st.integers(0, rows // 2))
    if copies:
        matrix[rng.integers(0, rows, copies)] = matrix[rng.integers(0, rows, copies)]
    zeros = draw(st.integers(0, max(0, rows // 10)))
    matrix[rng.integers(0, rows, zeros)] = 0
    query_kind = draw(st.sampled_from(["center", "row", "random"]))
    if query_kind == "center":
        query = centers[0] * float(np.abs(matrix).max(initial=1.0) or 1.0)
    elif query_kind == "row":
        query = matrix[rng.integers(0, rows)].astype(np.float64) + spread * rng.standard_normal(dim)
    else:
        query = rng.standard_normal(dim)
    metric = draw(st.sampled_from(METRICS))
    k = draw(st.integers(1, 20))
    return matrix, query.astype(np.float32), metric, k


def coded(matrix: Any, folder: Path) -> VectorMatrix:
    return VectorMatrix.build(matrix, np.arange(len(matrix), dtype=np.uint64)).with_codes(folder)


def searchable_k(matrix: Any, query: Any, metric: str, k: int) -> int:
    if metric != "cosine":
        return min(k, len(matrix))
    if not np.any(query):
        return 0
    return min(k, int(np.count_nonzero(np.any(matrix != 0, axis=1))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hard_cases(), filtered=st.booleans())
def test_candidates_hold_the_exact_top_k(
    tmp_path: Path, case: tuple[Any, Any, str, int], filtered: bool
) -> None:
    matrix, query, metric, k = case
    allowed = np.random.default_rng(len(matrix)).random(len(matrix)) < 0.5 if filtered else None
    expected = float64_top_k(matrix, query, metric, k, allowed)
    codes = Int8Codes.build(matrix, tmp_path)
    k_asked = len(expected)
    if k_asked == 0:
        return
    found = set(candidates(codes, query, k_asked, metric, allowed).tolist())
    assert set(expected) <= found
    if allowed is not None:
        assert all(allowed[i] for i in found)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hard_cases())
def test_search_through_codes_equals_the_float32_path(
    tmp_path: Path, case: tuple[Any, Any, str, int]
) -> None:
    """The same rows in the same order with their distances, with and without codes: the final ranking is
    one function, so only a missing candidate could change it."""
    matrix, query, metric, k = case
    plain = VectorMatrix.build(matrix, np.arange(len(matrix), dtype=np.uint64))
    positions, distances = nearest_rows(plain.with_codes(tmp_path), query, metric, k)
    expected_positions, expected_distances = nearest_rows(plain, query, metric, k)
    assert positions.tolist() == expected_positions.tolist()
    # The ranking computes distances in float64 over the candidates as one batch, and BLAS may sum a batch
    # of another size in another order: a distance that cancels to almost nothing can differ in its last
    # float64 bits, so in float32 by one step. Any other difference is a wrong distance.
    scale = 1.0 + float(np.abs(matrix).max(initial=0.0)) ** 2 * len(query) + float(query @ query)
    np.testing.assert_allclose(distances, expected_distances, rtol=1e-6, atol=1e-14 * scale)
    assert len(positions) == searchable_k(matrix, query, metric, k)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=hard_cases(max_rows=60, max_dim=16))
def test_candidates_hold_lancedbs_flat_search_ids(tmp_path: Path, case: tuple[Any, Any, str, int]) -> None:
    import lancedb

    matrix, query, metric, k = case
    db_dir = Path(tempfile.mkdtemp(dir=tmp_path))  # one database per example
    names = [str(i) for i in range(len(matrix))]
    write_lance_table(db_dir, "t", names, names, matrix)
    rows = (
        lancedb.connect(str(db_dir))
        .open_table("t")
        .search(query)
        .distance_type(metric)
        .bypass_vector_index()
        .limit(k)
        .to_arrow()
    )
    lancedb_ids = [int(i) for i in rows.column("id").to_pylist()]
    k_asked = searchable_k(matrix, query, metric, k)
    assert len(lancedb_ids) == k_asked
    if k_asked:
        found = set(candidates(Int8Codes.build(matrix, tmp_path), query, k_asked, metric).tolist())
        assert set(lancedb_ids) <= found


@pytest.mark.parametrize("metric", METRICS)
def test_a_hard_matrix_is_ranked_as_without_codes(metric: str, tmp_path: Path) -> None:
    """20,000 rows over several chunks of the scan: duplicates, a cluster tighter than float32, zero rows.
    The oracle is the float32 path, which tests/core/test_lance_order.py holds to LanceDB's own order."""
    rng = np.random.default_rng(7)
    distinct = rng.standard_normal((12_000, 48)).astype(np.float32)
    center = rng.standard_normal(48).astype(np.float32)
    cluster = (center + rng.standard_normal((4_000, 48)) * 1e-5).astype(np.float32)
    matrix = np.vstack([distinct, distinct[rng.integers(0, 12_000, 4_000)], cluster])[rng.permutation(20_000)]
    matrix[::997] = 0
    vectors = coded(matrix, tmp_path)
    plain = VectorMatrix.build(matrix, vectors.row_ids)
    for query in (center, distinct[5], rng.standard_normal(48).astype(np.float32)):
        for k in (1, 10, 100):
            positions, distances = nearest_rows(vectors, query, metric, k)
            expected, expected_distances = nearest_rows(plain, query, metric, k)
            assert positions.tolist() == expected.tolist()
            assert distances.tobytes() == expected_distances.tobytes()


def test_codes_hold_about_a_quarter_of_the_float32_matrix(tmp_path: Path) -> None:
    matrix = np.random.default_rng(1).standard_normal((5_000, 384)).astype(np.float32)
    plain = VectorMatrix.build(matrix, np.arange(5_000, dtype=np.uint64))
    with_codes = plain.with_codes(tmp_path)
    assert with_codes.nbytes <= 0.35 * matrix.nbytes
    assert np.array_equal(with_codes.matrix, matrix)
    assert list(tmp_path.iterdir()) == []  # the float32 copy's file is gone once it is mapped


# --- through the core: the same answers with and without the codes ----------------------------------------


def search(session: Session, kb: KnowledgeBase, vector: Any, limit: int, metric: str) -> SearchResult:
    request = RecallSearchInput(str(kb.db_dir), kb.name, len(vector), "q", list(map(float, vector)), limit)
    return asyncio.run(search_hits(session, request, TableOptions(metric=metric)))


@pytest.fixture
def clustered_kb(tmp_path: Path, passage_vectors: Any) -> KnowledgeBase:
    """3,000 rows around the real passages' embeddings (normalised), and exact copies of some (ties)."""
    rng = np.random.default_rng(5)
    picks = rng.integers(0, len(passage_vectors), 3_000)
    vectors = passage_vectors[picks] + 0.05 * rng.standard_normal((3_000, passage_vectors.shape[1]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[2_900:] = vectors[:100]
    ids = [f"row{i}" for i in range(3_000)]
    write_lance_table(tmp_path / "clustered", "notes", ids, ids, vectors)
    return KnowledgeBase("notes", tmp_path / "clustered", tmp_path, tuple(ids), tuple(ids), vectors)


@pytest.mark.parametrize("metric", METRICS)
def test_search_through_the_core_is_the_same_with_and_without_codes(
    clustered_kb: KnowledgeBase, embedder: Any, metric: str
) -> None:
    queries = ["How do I change my password?", "capital cities of Europe", "coroutines and event loops"]

    async def both() -> list[tuple[SearchResult, SearchResult]]:
        async with Session() as coded_session, Session(int8_codes=False) as plain_session:
            pairs = []
            for text in queries:
                vector = list(map(float, embedder.embed_sync(text)))
                request = RecallSearchInput(
                    str(clustered_kb.db_dir), clustered_kb.name, 384, text, vector, 25
                )
                options = TableOptions(metric=metric)
                pairs.append(
                    (
                        await search_hits(coded_session, request, options),
                        await search_hits(plain_session, request, options),
                    )
                )
            assert coded_session.vectors.used_bytes < 0.5 * plain_session.vectors.used_bytes
            return pairs

    for with_codes, without in asyncio.run(both()):
        assert with_codes.method == without.method == "exact"
        assert with_codes.note is None
        assert [(h.id, h.row_id, h.distance) for h in with_codes.hits] == [
            (h.id, h.row_id, h.distance) for h in without.hits
        ]
        assert [np.asarray(h.vector).tolist() for h in with_codes.hits] == [
            np.asarray(h.vector).tolist() for h in without.hits
        ]


def test_when_the_float32_copy_cannot_be_written_the_search_says_so(
    tmp_path: Path, clustered_kb: KnowledgeBase, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("RECALL_GUI_CACHE_DIR", str(blocker))
    vector = embedder.embed_sync("capital cities of Europe")
    blocked, plain = Session(), Session(int8_codes=False)
    try:
        result = search(blocked, clustered_kb, vector, 10, "cosine")
        expected = search(plain, clustered_kb, vector, 10, "cosine")
    finally:
        asyncio.run(blocked.aclose())
        asyncio.run(plain.aclose())
    assert result.method == "exact"
    assert result.note is not None
    assert "could not be written" in result.note and str(blocker) in result.note
    assert [h.id for h in result.hits] == [h.id for h in expected.hits]


def test_a_coded_table_searched_with_a_filter_equals_the_float32_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((70_000, 32)).astype(np.float32)  # two chunks of the scan
    plain = VectorMatrix.build(matrix, rng.permutation(70_000).astype(np.uint64))
    with_codes = plain.with_codes(tmp_path)
    allowed = rng.random(70_000) < 0.1
    for metric in METRICS:
        query = matrix[17] + 0.1 * rng.standard_normal(32).astype(np.float32)
        expected = nearest_rows(plain, query, metric, 15, allowed)
        found = nearest_rows(with_codes, query, metric, 15, allowed)
        assert found[0].tolist() == expected[0].tolist()
        assert found[1].tolist() == expected[1].tolist()


@pytest.mark.parametrize("metric", METRICS)
def test_wide_vectors_whose_integer_products_exceed_float32_are_still_bounded(
    metric: str, tmp_path: Path
) -> None:
    """Above 1,040 dimensions a row's integer dot product can exceed 2**24, where float32 stops being
    exact: the scan then works in float64."""
    rng = np.random.default_rng(9)
    # components of nearly equal size: codes near +-127, so a row's product with itself is near 127**2 * 1500
    signs = rng.choice([-1.0, 1.0], (500, 1_500))
    matrix = (signs * (1 + 0.01 * rng.random((500, 1_500)))).astype(np.float32)
    matrix[250:] = matrix[:250] + 1e-6 * rng.standard_normal((250, 1_500)).astype(np.float32)
    codes = Int8Codes.build(matrix, tmp_path)
    assert int(codes.codes[3].astype(np.int64) @ codes.codes[3].astype(np.int64)) > 2**24
    for query in (matrix[3], rng.standard_normal(1_500).astype(np.float32)):
        expected = float64_top_k(matrix, query, metric, 12)
        assert set(expected) <= set(candidates(codes, query, 12, metric).tolist())


# --- edges of the scan ---------------------------------------------------------------------------------


def test_an_empty_matrix_or_k_of_zero_has_no_candidates(tmp_path: Path) -> None:
    empty = Int8Codes.build(np.empty((0, 8), np.float32), tmp_path)
    query = np.ones(8, np.float32)
    assert candidates(empty, query, 3, "l2").tolist() == []
    rows = Int8Codes.build(np.eye(8, dtype=np.float32), tmp_path)
    assert candidates(rows, query, 0, "l2").tolist() == []
    assert list(tmp_path.iterdir()) == []


def test_a_query_too_long_for_the_bound_makes_every_row_allowed_a_candidate(tmp_path: Path) -> None:
    """Its rounding slack would overflow float32: no row can be left out, but for a row of zeros with
    cosine (no distance) and rows a filter drops."""
    matrix = np.vstack([np.eye(4, dtype=np.float32), np.zeros((1, 4), np.float32)])
    codes = Int8Codes.build(matrix, tmp_path)
    huge = np.full(4, 1e38, np.float32)
    assert candidates(codes, huge, 1, "l2").tolist() == [0, 1, 2, 3, 4]
    assert candidates(codes, huge, 1, "cosine").tolist() == [0, 1, 2, 3]
    allowed = np.array([True, False, True, False, True])
    assert candidates(codes, huge, 1, "dot", allowed).tolist() == [0, 2, 4]


def test_a_metric_the_bound_does_not_know_is_refused(tmp_path: Path) -> None:
    codes = Int8Codes.build(np.eye(3, dtype=np.float32), tmp_path)
    with pytest.raises(ValueError, match="unknown metric 'hamming'"):
        candidates(codes, np.ones(3, np.float32), 1, "hamming")


def test_chunks_scanned_on_the_sessions_threads_or_after_they_stopped_keep_the_top_k(tmp_path: Path) -> None:
    """Two chunks of the scan go to the session's threads; once the session has stopped them (it is
    closing), the scan runs on the calling thread instead."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(4)
    matrix = rng.standard_normal((70_000, 8)).astype(np.float32)
    query = matrix[69_999] + np.float32(0.01) * rng.standard_normal(8).astype(np.float32)
    workers = ThreadPoolExecutor(2)
    codes = Int8Codes.build(matrix, tmp_path, workers)
    for metric in METRICS:
        expected = set(float64_top_k(matrix, query, metric, 10))
        assert expected <= set(candidates(codes, query, 10, metric).tolist())
        workers.shutdown()
        assert expected <= set(candidates(codes, query, 10, metric).tolist())


def test_a_float32_copy_that_cannot_be_mapped_leaves_no_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import mmap

    def no_address_space(*args: Any, **kwargs: Any) -> Any:  # an exhausted address space cannot be made
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", no_address_space)
    with pytest.raises(OSError, match="Cannot allocate memory"):
        Int8Codes.build(np.eye(4, dtype=np.float32), tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []
