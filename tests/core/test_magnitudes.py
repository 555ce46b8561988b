"""Which rows and queries exact search's float32 bounds hold for (core/session/magnitudes.py): rows of zeros
and rows too short or too long are set apart; a query is refused when too long, and for cosine when too
short. LanceDB's distance kernels refuse what is no matrix and a metric they do not know."""

from __future__ import annotations

import numpy as np
import pytest

from recall_gui.core.session.lance_distance import distances
from recall_gui.core.session.magnitudes import HIGH, low, query_in_range, split_rows


def test_rows_of_zeros_and_rows_out_of_range_are_set_apart() -> None:
    matrix = np.array(
        [
            [0.6, 0.8, 0.0],  # in range
            [0.0, 0.0, 0.0],  # zeros
            [1e-30, 0.0, 0.0],  # too short: its square underflows float32's normal range
            [3e30, 0.0, 0.0],  # too long: its square overflows float32
            [0.0, 0.0, 0.0],  # zeros
        ],
        np.float32,
    )
    squares = (matrix.astype(np.float64) ** 2).sum(axis=1)
    zeros, extreme = split_rows(matrix, squares)
    assert zeros.tolist() == [1, 4]
    assert extreme.tolist() == [2, 3]


def test_a_matrix_with_every_row_in_range_has_none_set_apart() -> None:
    matrix = np.eye(4, dtype=np.float32)
    zeros, extreme = split_rows(matrix, np.ones(4))
    assert zeros.tolist() == [] and extreme.tolist() == []


@pytest.mark.parametrize(
    ("query", "metric", "within"),
    [
        ([0.6, 0.8], "cosine", True),
        ([0.0, 0.0], "cosine", False),  # no direction to compare
        ([1e-30, 0.0], "cosine", False),  # too short for a float32 cosine
        ([0.0, 0.0], "l2", True),  # l2 and dot err absolutely: a short query is fine
        ([1e-30, 0.0], "dot", True),
        ([3e30, 0.0], "l2", False),  # too long for any metric
        ([3e30, 0.0], "cosine", False),
    ],
)
def test_a_query_is_within_the_bounds_of_its_metric(query: list[float], metric: str, within: bool) -> None:
    assert query_in_range(np.array(query, np.float32), metric) is within


def test_the_bounds_are_those_of_float32() -> None:
    assert low(384) == 384 * 2.0**-126  # float32's smallest normal number, once per dimension
    assert HIGH == 2.0**120  # with room below float32's largest, 2**128


def test_lances_kernels_refuse_what_is_no_matrix_and_an_unknown_metric() -> None:
    with pytest.raises(ValueError, match="rows must be a matrix"):
        distances(np.zeros(3, np.float32), np.zeros(3, np.float32), "l2")
    with pytest.raises(ValueError, match="unknown metric 'hamming'"):
        distances(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), "hamming")
