"""The in-memory ranking kernel against a plain float64 ranking, on matrices made to be hard for it:
thousands of rows (so the block bound is used), many exact duplicates (ties), rows of zero length, and
row ids in no particular order. (Search on real embeddings is tested in test_exact_search.py.)"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from recall_gui.core.exact import VectorMatrix, exact_distances, nearest_rows


def reference_ranking(matrix: Any, row_ids: Any, query: Any, metric: str) -> list[int]:
    """Every row scored with LanceDB's distance in float64, rounded to float32, ties by row id; rows
    without a distance left out. What the fast path must reproduce is this selection and order."""
    rounded = exact_distances(matrix, query, metric).astype(np.float32)
    order = np.lexsort((row_ids, rounded))
    return [int(i) for i in order if not np.isnan(rounded[i])]


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_exact_distances_are_lancedbs_formulas(metric: str) -> None:
    rng = np.random.default_rng(3)
    x, q = rng.standard_normal((50, 48)), rng.standard_normal(48)
    expected = {
        "l2": ((x - q) ** 2).sum(axis=1),
        "cosine": 1 - (x @ q) / (np.linalg.norm(x, axis=1) * np.linalg.norm(q)),
        "dot": 1 - x @ q,
    }[metric]
    assert exact_distances(x.astype(np.float32), q.astype(np.float32), metric) == pytest.approx(
        expected, rel=1e-5, abs=1e-5
    )


@pytest.fixture(scope="module")
def hard_matrix() -> tuple[Any, Any, Any]:
    """20,000 rows: distinct ones, exact duplicates (ties), a cluster of rows closer together than float32
    can tell apart in a dot product (only the float64 re-scoring orders them), and rows of zero length."""
    rng = np.random.default_rng(7)
    distinct = rng.standard_normal((12_000, 48)).astype(np.float32)
    duplicates = distinct[rng.integers(0, len(distinct), 4_000)]
    center = rng.standard_normal(48).astype(np.float32)
    cluster = (center + rng.standard_normal((4_000, 48)) * 1e-5).astype(np.float32)
    matrix = np.vstack([distinct, duplicates, cluster])[rng.permutation(20_000)]
    matrix[::997] = 0
    row_ids = (rng.permutation(len(matrix)).astype(np.uint64) * 3 + (1 << 32)).astype(np.uint64)
    return matrix, row_ids, center


@pytest.mark.parametrize("kernel", ["matmul", "einsum"])
@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
def test_nearest_rows_equal_a_float64_ranking(
    hard_matrix: tuple[Any, Any, Any], kernel: str, metric: str
) -> None:
    matrix, row_ids, center = hard_matrix
    vectors = dataclasses.replace(VectorMatrix.build(matrix, row_ids), kernel=kernel)
    rng = np.random.default_rng(11)
    duplicated = matrix[np.flatnonzero((matrix == matrix[12]).all(axis=1))[0]]
    queries = [rng.standard_normal(48).astype(np.float32), center, duplicated, matrix[3] * 1e-3]
    for query in queries:
        expected = reference_ranking(matrix, row_ids, query, metric)
        for k in (1, 7, 150, len(matrix)):
            positions, distances = nearest_rows(vectors, query, metric, k)
            assert positions.tolist() == expected[:k]
            assert np.all(np.diff(distances) >= 0)


def test_a_zero_query_has_no_cosine_neighbours(hard_matrix: tuple[Any, Any, Any]) -> None:
    matrix, row_ids, _ = hard_matrix
    positions, _ = nearest_rows(VectorMatrix.build(matrix, row_ids), np.zeros(48, np.float32), "cosine", 5)
    assert len(positions) == 0
    assert len(nearest_rows(VectorMatrix.build(matrix, row_ids), np.zeros(48, np.float32), "l2", 5)[0]) == 5
