"""Exact search answers in LanceDB's flat-search order, ties and near-ties included, for every metric.

LanceDB itself is the oracle: tables are written with LanceDB and searched with
``table.search(q).distance_type(m).limit(k)`` (no index), and every front end must give the same rows in
the same order: the core with and without the vectors in memory, an entry's rank, "more like this",
golden checks' one-pass ranking, the CLI's ``search``, ``rank`` and ``similar``, and the MCP server's
``recall_search``. The tables are made to be hard: copies of a vector differing in the last bit of a few
components (closer than float32 can tell apart in a distance), exact duplicates, copies scaled by 2 (an
exact cosine tie) and by 3 (a cosine near-tie), and zero vectors (no cosine distance).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_gui.core.base.types import RecallSearchInput
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import search_hits
from recall_gui.core.session.exact import VectorMatrix, nearest_rows, nearest_rows_many
from recall_gui.core.session.exact_rank import rank_of
from recall_gui.core.session.lance_arithmetic import lancedb_distances
from recall_gui.core.session.lance_distance import EMULATIONS, Measure
from recall_gui.core.session.session import Session
from recall_gui.core.session.vector_cache import CACHE_ENV
from recall_gui.core.storage.target import TableOptions
from recall_gui.mcp.server import call_recall_search
from tests import processor
from tests.core.test_cli import cli
from tests.kbtools import cosh_entry, write_lance_table, write_registry

METRICS = ("l2", "cosine", "dot")


def near_ties(bases: np.ndarray[Any, Any], rng: np.random.Generator, nudged: int = 6) -> np.ndarray[Any, Any]:
    """For each base vector: ``nudged`` copies moved by one float32 step in a quarter of their components,
    three exact duplicates, copies scaled by 2, 3 and 0.5; one zero vector; all shuffled."""
    rows: list[np.ndarray[Any, Any]] = []
    for base in np.asarray(bases, np.float32):
        for _ in range(nudged):
            copy = base.copy()
            picked = rng.choice(len(base), size=max(1, len(base) // 4), replace=False)
            toward = rng.choice([-np.inf, np.inf], size=len(picked)).astype(np.float32)
            copy[picked] = np.nextafter(copy[picked], toward)
            rows.append(copy)
        rows += [base, base, base, base * np.float32(2), base * np.float32(3), base * np.float32(0.5)]
    rows.append(np.zeros(bases.shape[1], np.float32))
    matrix = np.vstack(rows).astype(np.float32)
    return matrix[rng.permutation(len(matrix))]


def write_table(db_dir: Path, name: str, matrix: np.ndarray[Any, Any]) -> None:
    ids = [f"r{i}" for i in range(len(matrix))]
    write_lance_table(db_dir, name, ids, [f"row {i}" for i in range(len(matrix))], matrix)


def lance_search(
    db_dir: Path, name: str, query: Any, metric: str, k: int
) -> tuple[list[int], np.ndarray[Any, Any]]:
    """LanceDB's flat search (past any index): the row ids, nearest first, and the distances."""
    import lancedb

    table = lancedb.connect(str(db_dir)).open_table(name)
    search = table.search(np.asarray(query)).distance_type(metric).bypass_vector_index()
    found = search.limit(k).with_row_id(True).to_arrow()
    return found.column("_rowid").to_pylist(), found.column("_distance").to_numpy()


def emulation_matching_lancedb(db_dir: Path) -> Measure | None:
    """The first of the app's emulations that gives LanceDB's flat-search distances bit for bit on this
    processor, over random tables written to ``db_dir`` (an oracle apart from the app's own self-test:
    other tables, on disk, searched through LanceDB's search), or ``None``."""
    rng = np.random.default_rng(7)
    holding = list(EMULATIONS.values())
    for dim in (8, 9, 16, 24, 29, 100, 384):
        matrix = rng.standard_normal((64, dim)).astype(np.float32)
        write_table(db_dir, f"random{dim}", matrix)
        query = rng.standard_normal(dim)
        for metric in METRICS:
            row_ids, expected = lance_search(db_dir, f"random{dim}", query, metric, len(matrix))
            wanted = expected.astype(np.float32).tobytes()
            holding = [
                measure for measure in holding if measure(matrix[row_ids], query, metric).tobytes() == wanted
            ]
    return holding[0] if holding else None


@pytest.fixture(scope="session")
def lance_measure(tmp_path_factory: pytest.TempPathFactory) -> Measure:
    """How the app measures exact search's candidates on this processor
    (``core/session/lance_arithmetic.py``): the NumPy emulation of the kernels LanceDB runs here, LanceDB
    itself where none holds. Either way the answers must be LanceDB's. Where LanceDB runs the kernels the
    emulations repeat, the right one must hold
    (:func:`test_the_emulation_of_the_kernels_lancedb_runs_here_holds`)."""
    return emulation_matching_lancedb(tmp_path_factory.mktemp("lance_here")) or lancedb_distances


def test_the_emulation_of_the_kernels_lancedb_runs_here_holds(lance_measure: Measure) -> None:
    """Elsewhere (ARM) the app measures with LanceDB and the emulation's own tests are skipped: on the
    processors they repeat, a change that breaks one must fail, not skip. Which kernels LanceDB runs is
    told by the processor's features (AVX-512, or AVX2 with FMA)."""
    kernels = processor.lancedb_kernels()
    if kernels is None:
        pytest.skip(f"LanceDB's kernels for this processor were not measured ({processor.vendor()!r})")
    assert lance_measure is EMULATIONS[kernels]


def skip_unless_emulated(lance_measure: Measure) -> None:
    if lance_measure is lancedb_distances:
        pytest.skip("LanceDB sums in another order on this processor, and the app measures with LanceDB here")


def in_memory(matrix: np.ndarray[Any, Any], rng: np.random.Generator) -> VectorMatrix:
    """The table's vectors as the cache holds them (row id = row position), rows in a shuffled order: the
    order of equal distances must come from the row ids, not from the positions."""
    shuffle = rng.permutation(len(matrix))
    return VectorMatrix.build(matrix[shuffle], shuffle.astype(np.uint64))


def ranked_row_ids(
    vectors: VectorMatrix, query: Any, metric: str, k: int, measure: Measure
) -> tuple[list[int], Any]:
    positions, found = nearest_rows(vectors, query, metric, k, measure=measure)
    return [int(row_id) for row_id in vectors.row_ids[positions]], found


@pytest.mark.parametrize("dim", [8, 13, 384])
def test_nearest_rows_and_ranks_are_lancedbs_order_and_distances(
    tmp_path: Path, dim: int, lance_measure: Measure
) -> None:
    rng = np.random.default_rng(dim)
    bases = rng.standard_normal((4, dim)).astype(np.float32)
    matrix = near_ties(bases, rng)
    write_table(tmp_path, "ties", matrix)
    vectors = in_memory(matrix, rng)
    everything = len(matrix)
    queries = [bases[0], bases[1] + np.float32(1e-3) * rng.standard_normal(dim), rng.standard_normal(dim)]
    for metric in METRICS:
        # Golden checks rank many queries in one pass: each answer is LanceDB's too.
        together = nearest_rows_many(
            vectors, np.stack(queries), metric, [everything] * len(queries), measure=lance_measure
        )
        for query, (positions, _) in zip(queries, together, strict=True):
            expected, _ = lance_search(tmp_path, "ties", query, metric, everything)
            assert vectors.row_ids[positions].tolist() == expected
        for query in queries:
            expected, lance_distances = lance_search(tmp_path, "ties", query, metric, everything)
            for k in (1, 5, 12, everything):
                got, found = ranked_row_ids(vectors, query, metric, k, lance_measure)
                assert got == expected[:k], (metric, k)
                assert found.tobytes() == lance_distances[:k].astype(np.float32).tobytes()
            # Every row's rank is its place in LanceDB's order; rows LanceDB leaves out have none.
            position_of = {int(row_id): i for i, row_id in enumerate(vectors.row_ids)}
            for place, row_id in enumerate(expected, start=1):
                ranked = rank_of(vectors, query, metric, position_of[row_id], measure=lance_measure)
                assert ranked == (place, float(lance_distances[place - 1])), (metric, place)
            for row_id in set(range(everything)) - set(expected):
                assert rank_of(vectors, query, metric, position_of[row_id], measure=lance_measure) is None


@pytest.mark.parametrize("dim", [3, 8, 13, 16, 17, 24, 29, 31, 33, 40, 100, 384])
def test_distances_are_lancedbs_bit_for_bit(tmp_path: Path, dim: int, lance_measure: Measure) -> None:
    """The emulation that holds here, at widths that take each of its paths (8 and 16 lanes, AVX2's chunk
    of 8 after the 16s, leftovers)."""
    skip_unless_emulated(lance_measure)
    rng = np.random.default_rng(100 + dim)
    matrix = near_ties(rng.standard_normal((2, dim)) * rng.uniform(0.1, 10), rng, nudged=3)
    matrix = np.vstack([matrix, rng.standard_normal((20, dim)).astype(np.float32)])
    write_table(tmp_path, "ties", matrix)
    query = rng.standard_normal(dim)  # float64: LanceDB casts it to float32, and so must we
    for metric in METRICS:
        row_ids, expected = lance_search(tmp_path, "ties", query, metric, len(matrix))
        assert (
            lance_measure(matrix[row_ids], query, metric).tobytes() == expected.astype(np.float32).tobytes()
        )
        left_out = sorted(set(range(len(matrix))) - set(row_ids))
        assert np.isnan(lance_measure(matrix[left_out], query, metric)).all()


@pytest.mark.parametrize(
    ("scale", "metric"),
    [(1e-25, "cosine"), (1e-21, "cosine"), (1e30, "cosine"), (1e20, "l2"), (1e37, "dot")],
    ids=[
        "cosine, |q|^2 underflows",
        "cosine, |q|^2 subnormal",
        "cosine, |q|^2 overflows",
        "l2 overflows",
        "dot, huge",
    ],
)
def test_queries_whose_distances_degenerate_are_ordered_as_lancedb_orders_them(
    tmp_path: Path, scale: float, metric: str, lance_measure: Measure
) -> None:
    """LanceDB's float32 arithmetic turns distances into infinities or one shared value: all tie, and the
    row ids order them."""
    rng = np.random.default_rng(3)
    matrix = near_ties(rng.standard_normal((3, 24)).astype(np.float32), rng)
    write_table(tmp_path, "ties", matrix)
    vectors = in_memory(matrix, rng)
    query = (rng.standard_normal(24) * scale).astype(np.float32)
    expected, lance_distances = lance_search(tmp_path, "ties", query, metric, len(matrix))
    for k in (1, 5, len(matrix)):
        assert ranked_row_ids(vectors, query, metric, k, lance_measure)[0] == expected[:k]
    position_of = {int(row_id): i for i, row_id in enumerate(vectors.row_ids)}
    for place, row_id in enumerate(expected, start=1):
        ranked = rank_of(vectors, query, metric, position_of[row_id], measure=lance_measure)
        assert ranked == (place, float(lance_distances[place - 1]))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    dim=st.sampled_from([5, 8, 12, 16, 20, 40]),
    metric=st.sampled_from(METRICS),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    spread=st.sampled_from([0.0, 1e-7, 1e-5]),
    k=st.integers(1, 40),
)
def test_random_near_tie_sets_come_out_in_lancedbs_order(
    tmp_path_factory: pytest.TempPathFactory,
    lance_measure: Measure,
    seed: int,
    dim: int,
    metric: str,
    scale: float,
    spread: float,
    k: int,
) -> None:
    rng = np.random.default_rng(seed)
    center = rng.standard_normal(dim)
    cloud = center * (1 + spread * rng.standard_normal((40, dim)))  # closer than float32 at 1e-7
    matrix = np.vstack([near_ties(center[None, :] * scale, rng, nudged=4), cloud * scale]).astype(np.float32)
    db_dir = tmp_path_factory.mktemp("random")
    write_table(db_dir, "ties", matrix)
    query = (center + rng.standard_normal(dim) * rng.choice([0.0, 1e-4, 1.0])) * scale
    expected, _ = lance_search(db_dir, "ties", query, metric, k)
    assert ranked_row_ids(in_memory(matrix, rng), query, metric, k, lance_measure)[0] == expected


# --- the front ends, on a table of the real model's vectors ---------------------------------------

QUERY = "How do I change my password?"


@pytest.fixture(scope="module")
def tie_kb(
    tmp_path_factory: pytest.TempPathFactory, embedder: Any, passage_vectors: Any
) -> tuple[Path, Path]:
    """Near-ties around the query's own vector and around each passage, registered three times over one
    table: as databases "l2", "cosine" and "dot" (the registry's metric)."""
    root = tmp_path_factory.mktemp("tie_kb")
    rng = np.random.default_rng(5)
    query_vector = np.asarray(embedder.embed_sync(QUERY), np.float32)
    write_table(root / "db", "ties", near_ties(np.vstack([query_vector, passage_vectors]), rng))
    entries = [{**cosh_entry(metric, root / "db"), "table": "ties", "metric": metric} for metric in METRICS]
    return root / "db", write_registry(root / "registry", entries)


def query_vector(embedder: Any) -> np.ndarray[Any, Any]:
    return np.asarray(embedder.embed_sync(QUERY), np.float32)


@pytest.mark.parametrize("in_memory_cache", [True, False], ids=["vectors in memory", "flat scan"])
def test_the_core_search_gives_lancedbs_order_with_and_without_the_vectors_in_memory(
    tie_kb: tuple[Path, Path], embedder: Any, monkeypatch: pytest.MonkeyPatch, in_memory_cache: bool
) -> None:
    db_dir, _ = tie_kb
    if not in_memory_cache:
        monkeypatch.setenv(CACHE_ENV, "0")
    vector = query_vector(embedder)
    for metric in METRICS:
        expected, expected_distances = lance_search(db_dir, "ties", vector, metric, 30)
        request = RecallSearchInput(str(db_dir), "ties", len(vector), QUERY, vector, 30)

        async def go(request: RecallSearchInput = request, metric: str = metric) -> Any:
            async with Session() as session:
                return await search_hits(session, request, TableOptions(metric=metric))

        result = asyncio.run(go())
        assert result.method == ("exact" if in_memory_cache else "flat")
        assert [hit.row_id for hit in result.hits] == expected
        assert [hit.distance for hit in result.hits] == [float(d) for d in expected_distances]


def test_recall_search_and_more_like_this_give_lancedbs_order(
    tie_kb: tuple[Path, Path], embedder: Any
) -> None:
    db_dir, registry = tie_kb
    vector = query_vector(embedder)

    async def go() -> dict[str, tuple[Any, Any, Any]]:
        from recall_gui.core.search.similar import find_entry, more_like

        harness = Harness(registry)
        answers = {}
        try:
            for metric in METRICS:
                called = await call_recall_search(harness, {"db_name": metric, "query": QUERY, "limit": 25})
                entry = harness.resolve_active(metric)
                found = await find_entry(harness.session, entry.target, "r7")
                answers[metric] = (called, found.hit, await more_like(harness, entry, found.hit, 25))
        finally:
            await harness.aclose()
        return answers

    for metric, (called, hit, like) in asyncio.run(go()).items():
        assert called.is_error is False
        expected, _ = lance_search(db_dir, "ties", vector, metric, 25)
        assert [result["id"] for result in json.loads(called.content[0].text)["results"]] == [
            f"r{row_id}" for row_id in expected
        ]
        expected_like, like_distances = lance_search(db_dir, "ties", hit.vector, metric, 25)
        assert like.result.method == "exact"
        assert [found.row_id for found in like.result.hits] == expected_like
        assert [found.distance for found in like.result.hits] == [float(d) for d in like_distances]


@pytest.mark.process
def test_the_commands_give_lancedbs_order(tie_kb: tuple[Path, Path], embedder: Any) -> None:
    import lancedb

    db_dir, registry = tie_kb
    vector = query_vector(embedder)
    table = lancedb.connect(str(db_dir)).open_table("ties").to_arrow()
    stored = np.vstack(table.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
    by_dot, dot_distances = lance_search(db_dir, "ties", vector, "dot", 200)
    place = 9  # among the near-ties of the query's own vector
    where = ("--registry", str(registry))
    commands = {
        "search": ("search", *where, "--db", "l2", "--limit", "20", QUERY),
        "similar": ("similar", *where, "--db", "cosine", "--id", "r3", "--limit", "20"),
        "rank": ("rank", *where, "--db", "dot", "--id", f"r{by_dot[place - 1]}", QUERY),
    }
    with ThreadPoolExecutor(len(commands)) as pool:  # three processes at once: a third of the wait
        done = dict(zip(commands, pool.map(lambda args: cli(*args), commands.values()), strict=True))
    for name, finished in done.items():
        assert finished.returncode == 0, (name, finished.stderr)

    expected, _ = lance_search(db_dir, "ties", vector, "l2", 20)
    assert [r["id"] for r in json.loads(done["search"].stdout)["results"]] == [f"r{i}" for i in expected]

    expected, expected_distances = lance_search(db_dir, "ties", stored[3], "cosine", 20)
    results = json.loads(done["similar"].stdout)["results"]
    assert [r["id"] for r in results] == [f"r{row_id}" for row_id in expected]
    assert [r["distance"] for r in results] == [float(d) for d in expected_distances]

    verdict = json.loads(done["rank"].stdout)
    assert (verdict["rank"], verdict["distance"]) == (place, float(dot_distances[place - 1]))
