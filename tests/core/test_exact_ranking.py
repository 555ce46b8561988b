"""The in-memory ranking kernel against LanceDB's own flat search, on a matrix made to be hard for it:
thousands of rows (so the block bound is used), many exact duplicates (ties), a cluster of rows closer
together than float32 can tell apart, rows of zero length, and row ids in no particular order. (Search on
real embeddings is tested in test_exact_search.py, near-ties through every front end in
test_lance_order.py.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.session.exact import VectorMatrix, nearest_rows
from recall_gui.core.session.lance_distance import Measure
from tests.core.test_lance_order import lance_measure, lance_search, write_table  # noqa: F401 (lance_measure: a fixture)


@pytest.fixture(scope="module")
def hard_table(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any, Path]:
    """20,000 rows: distinct ones, exact duplicates (ties), a cluster of rows closer together than float32
    can tell apart in a dot product, and rows of zero length; written to LanceDB, and held in memory in
    a shuffled order (the positions say nothing about the row ids)."""
    rng = np.random.default_rng(7)
    distinct = rng.standard_normal((12_000, 48)).astype(np.float32)
    duplicates = distinct[rng.integers(0, len(distinct), 4_000)]
    center = rng.standard_normal(48).astype(np.float32)
    cluster = (center + rng.standard_normal((4_000, 48)) * 1e-5).astype(np.float32)
    matrix = np.vstack([distinct, duplicates, cluster])[rng.permutation(20_000)]
    matrix[::997] = 0
    db_dir = tmp_path_factory.mktemp("hard")
    write_table(db_dir, "hard", matrix)
    shuffle = rng.permutation(len(matrix))
    return matrix[shuffle], shuffle.astype(np.uint64), center, db_dir


@pytest.mark.parametrize("kernel", ["matmul", "einsum"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_nearest_rows_equal_lancedbs_flat_search(
    hard_table: tuple[Any, Any, Any, Path],
    kernel: str,
    metric: str,
    lance_measure: Measure,  # noqa: F811
) -> None:
    matrix, row_ids, center, db_dir = hard_table
    vectors = dataclasses.replace(VectorMatrix.build(matrix, row_ids), kernel=kernel)
    rng = np.random.default_rng(11)
    duplicated = matrix[np.flatnonzero((matrix == matrix[12]).all(axis=1))[0]]
    queries = [rng.standard_normal(48).astype(np.float32), center, duplicated, matrix[3] * 1e-3]
    for query in queries:
        expected, expected_distances = lance_search(db_dir, "hard", query, metric, len(matrix))
        for k in (1, 7, 150, len(matrix)):
            positions, distances = nearest_rows(vectors, query, metric, k, measure=lance_measure)
            assert row_ids[positions].tolist() == expected[:k]
            assert distances.tobytes() == expected_distances[:k].astype(np.float32).tobytes()


def test_a_zero_query_has_no_cosine_neighbours(hard_table: tuple[Any, Any, Any, Path]) -> None:
    matrix, row_ids, _, db_dir = hard_table
    zero = np.zeros(48, np.float32)
    positions, _ = nearest_rows(VectorMatrix.build(matrix, row_ids), zero, "cosine", 5)
    assert len(positions) == 0 == len(lance_search(db_dir, "hard", zero, "cosine", 5)[0])
    assert len(nearest_rows(VectorMatrix.build(matrix, row_ids), zero, "l2", 5)[0]) == 5
