"""``exact_search_{10k,100k,1m}``: the core's ``search_hits`` top-5 on a table without an index, beside
the NumPy floor (``argpartition`` over ``X @ q`` or ``einsum``, whichever is faster here, over the same
vectors already in memory), and checked against LanceDB's own flat search (same ids in the same order,
for l2, cosine and dot, ties included)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.context import BenchContext
from bench.data import BenchTable
from bench.results import Metric
from bench.timing import side_by_side

if TYPE_CHECKING:
    from recall_gui.core.session.session import Session

TOP_K = 5
GOAL_RATIO = 2.0
#: (rows, timed queries, queries checked against LanceDB per metric, metrics checked)
SIZES = (
    (10_000, 100, 40, ("l2", "cosine", "dot")),
    (100_000, 100, 40, ("l2", "cosine", "dot")),
    (1_000_000, 30, 8, ("l2",)),
)


def run(ctx: BenchContext) -> list[Metric]:
    count = ctx.size.count
    return [
        asyncio.run(measure(ctx, rows, count(timed), count(checked), metrics))
        for rows, timed, checked, metrics in SIZES
    ]


def label(rows: int) -> str:
    return f"{rows // 1_000_000}m" if rows >= 1_000_000 else f"{rows // 1000}k"


def search_input(table: BenchTable, vector: Any, limit: int) -> Any:
    from recall_gui.core.base.types import RecallSearchInput

    return RecallSearchInput(str(table.db_dir), table.name, len(vector), "q", vector, limit)


async def measure(ctx: BenchContext, rows: int, timed: int, checked: int, metrics: tuple[str, ...]) -> Metric:
    from recall_gui.core.session.session import Session

    async with Session() as session:
        return await measure_in(session, ctx, rows, timed, checked, metrics)


async def measure_in(
    session: Session, ctx: BenchContext, rows: int, timed: int, checked: int, metrics: tuple[str, ...]
) -> Metric:
    from recall_gui.core.search.nearest import prepare, search_hits
    from recall_gui.core.storage.target import TableTarget

    table = ctx.table(rows)
    matrix = table.load_vectors()
    queries = ctx.queries(timed)
    started = time.perf_counter()
    first = await search_hits(session, search_input(table, queries[0], TOP_K))
    first_ms = (time.perf_counter() - started) * 1000
    not_ready = await prepare(session, TableTarget(str(table.db_dir), table.name))  # the read it began
    ready_ms = (time.perf_counter() - started) * 1000
    memory = session.vectors.used_bytes
    kernel = "-"
    for cached in session.vectors.cached_tables().values():
        kernel = cached.vectors.kernel
    print(
        f"  {table.name}: first search {first_ms:.0f} ms ({first.method}), vectors in memory after "
        f"{ready_ms:.0f} ms ({memory / 1024**2:.0f} MB){'; ' + not_ready if not_ready else ''}",
        flush=True,
    )

    def floor(query: np.ndarray[Any, Any]) -> Any:
        return np.argpartition(matrix @ query, TOP_K)[:TOP_K]

    def einsum_floor(query: np.ndarray[Any, Any]) -> Any:
        return np.argpartition(np.einsum("ij,j->i", matrix, query), TOP_K)[:TOP_K]

    # The floor is NumPy's fastest exact top-k here: matmul (BLAS) or einsum, whichever is faster.
    measured = await side_by_side(
        queries,
        lambda q: search_hits(session, search_input(table, q, TOP_K)),
        floor,
        rounds=2,
        others={"einsum": einsum_floor},
    )
    pair = dataclasses.replace(measured, floor_ms=min(measured.floor_ms, measured.others_ms["einsum"]))
    method = (await search_hits(session, search_input(table, queries[1], TOP_K))).method
    matmul = await side_by_side(queries[:20], lambda q: asyncio.sleep(0), lambda q: matrix @ q, rounds=2)
    # (at toy size ``rows`` stays the real run's, naming the metric; the table is smaller)
    identical, compared, lance_ms = await compare_with_lancedb(session, ctx, table, matrix, checked, metrics)
    print(f"  {table.name}: identical to LanceDB's flat search in {identical}/{compared} searches")
    name = f"exact_search_{label(rows)}"
    goal = f"ratio <= {GOAL_RATIO}, identical" if rows == 100_000 else "report"
    met = (pair.ratio <= GOAL_RATIO and identical == compared) if rows == 100_000 else None
    return Metric(
        name,
        pair.value_ms,
        "ms",
        pair.floor_ms,
        goal,
        met,
        {
            "method": method,
            "identical_to_lancedb": f"{identical}/{compared}",
            "lancedb_flat_ms": round(lance_ms, 1),
            "floor_matmul_ms": round(measured.floor_ms, 3),
            "floor_einsum_ms": round(measured.others_ms["einsum"], 3),
            "matmul_only_ms": round(matmul.floor_ms, 3),
            "kernel": kernel,
            "first_search_ms": round(first_ms, 1),
            "first_search_method": first.method,
            "vectors_ready_ms": round(ready_ms, 1),
            "cache_mb": round(memory / 1024**2, 1),
            "runs": pair.runs,
        },
    )


async def compare_with_lancedb(
    session: Session,
    ctx: BenchContext,
    table: BenchTable,
    matrix: np.ndarray[Any, Any],
    checked: int,
    metrics: tuple[str, ...],
) -> tuple[int, int, float]:
    """How many core searches return LanceDB's flat-search ids in LanceDB's order (limit 10).

    The queries are real questions, held-out vectors, and stored vectors that have an exact duplicate in
    the table (distance ties, which LanceDB orders by row id).
    """
    import lancedb

    from recall_gui.core.search.nearest import search_hits
    from recall_gui.core.storage.target import TableOptions

    duplicated = [matrix[i] for i in range(100, min(len(matrix), 100 * (checked // 4 + 1)), 100)]
    queries = ctx.queries(checked - len(duplicated)) + duplicated
    connection = await lancedb.connect_async(str(table.db_dir), read_consistency_interval=dt.timedelta(0))
    lance_table = await connection.open_table(table.name)
    identical = compared = 0
    lance_times: list[float] = []
    for metric in metrics:
        options = TableOptions(metric=metric)
        for query in queries:
            ours = await search_hits(session, search_input(table, query, 10), options)
            started = asyncio.get_running_loop().time()
            theirs = await (
                lance_table.query()
                .nearest_to(query)
                .distance_type(metric)
                .bypass_vector_index()
                .limit(10)
                .to_arrow()
            )
            lance_times.append((asyncio.get_running_loop().time() - started) * 1000)
            compared += 1
            same_ids = [hit.id for hit in ours.hits] == theirs.column("id").to_pylist()
            close = np.allclose(
                [hit.distance for hit in ours.hits],
                theirs.column("_distance").to_numpy(),
                rtol=1e-4,
                atol=1e-5,
            )
            if same_ids and close and ours.method == "exact":
                identical += 1
            else:
                theirs_ids = theirs.column("id").to_pylist()
                print(f"    differs ({metric}): {[h.id for h in ours.hits]} vs {theirs_ids}")
    return identical, compared, float(np.median(lance_times))
