"""``checks_1000_batched``: 1,000 golden checks' rankings on 100k x 384 in memory through the batched path
(:func:`recall_gui.core.session.exact.nearest_rows_many`), beside the NumPy floor for 1,000 queries (``Q @
X.T``
and a top-k per query), and checked identical to one exact search per query and to LanceDB's flat search."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from bench.context import BenchContext
from bench.results import Metric

ROWS, CHECKS, TOP_K = 100_000, 1_000, 5
GOAL_RATIO = 2.0
#: Queries compared with one search each, and with LanceDB's flat search.
COMPARED, WITH_LANCEDB = 100, 10


def run(ctx: BenchContext) -> list[Metric]:
    return [measure(ctx, ROWS, CHECKS if not ctx.size.toy else 20)]


def best_of(rounds: int, work: Any) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def measure(ctx: BenchContext, rows: int, checks: int) -> Metric:
    import lancedb

    from recall_gui.core.session.exact import VectorMatrix, nearest_rows, nearest_rows_many

    table = ctx.table(rows)
    matrix = table.load_vectors()
    vectors = VectorMatrix.build(matrix, np.arange(table.rows, dtype=np.uint64))
    queries = np.stack(ctx.queries(checks)).astype(np.float32)
    ks = [TOP_K] * len(queries)

    def floor() -> None:
        scores = queries @ matrix.T
        np.argpartition(scores, TOP_K, axis=1)[:, :TOP_K]

    batched: list[Any] = []
    value_ms = best_of(
        2, lambda: batched.__setitem__(slice(None), nearest_rows_many(vectors, queries, "l2", ks))
    )
    floor_ms = best_of(2, floor)
    compared, with_lancedb = min(COMPARED, checks), min(WITH_LANCEDB, checks)
    same = sum(
        np.array_equal(batched[n][0], nearest_rows(vectors, queries[n], "l2", TOP_K)[0])
        for n in range(compared)
    )
    lance = lancedb.connect(str(table.db_dir)).open_table(table.name)
    agrees = 0
    for n in range(with_lancedb):
        found = lance.search(queries[n]).distance_type("l2").limit(TOP_K).with_row_id(True).to_list()
        agrees += [row["_rowid"] for row in found] == [int(p) for p in batched[n][0]]
    identical = same == compared and agrees == with_lancedb
    print(
        f"  {checks} checks on {table.rows:,} rows: {value_ms:.0f} ms batched, floor {floor_ms:.0f} ms; "
        f"identical to one search each in {same}/{compared}, to LanceDB in {agrees}/{with_lancedb}",
        flush=True,
    )
    return Metric(
        f"checks_{checks}_batched",
        value_ms,
        "ms",
        floor_ms,
        f"ratio <= {GOAL_RATIO}, identical",
        value_ms / floor_ms <= GOAL_RATIO and identical,
        {
            "identical_to_one_search_each": f"{same}/{compared}",
            "identical_to_lancedb": f"{agrees}/{with_lancedb}",
        },
    )
