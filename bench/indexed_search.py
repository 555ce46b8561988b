"""``indexed_search_100k``: the core's ``search_hits`` (top-10) on a table with an ANN index, beside
LanceDB's raw indexed query with its default settings (cosh's query), in the same process. The core must
answer as that query does (``same_as_raw``: the share of queries whose ids are the raw query's, goal 1);
recall@10 against the exact top-10 of the same rows is the index's, reported. The reference index is
``IvfHnswSq`` (cosine); ``IvfPq``, whose recall with LanceDB's defaults is poor, is reported beside it
(``indexed_search_100k_ivfpq``)."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import TYPE_CHECKING, Any

import numpy as np

from bench.context import BenchContext
from bench.exact_search import search_input
from bench.results import Metric
from bench.timing import side_by_side

if TYPE_CHECKING:
    from recall_gui.core.session.session import Session

LIMIT = 10
GOAL_RATIO = 1.1
QUERIES = 200
#: (metric name, index type, distance the index was built for)
CASES = (
    ("indexed_search_100k", "IvfHnswSq", "cosine"),
    ("indexed_search_100k_ivfpq", "IvfPq", "l2"),
)


def run(ctx: BenchContext) -> list[Metric]:
    return [asyncio.run(measure(ctx, *case)) for case in CASES]


async def measure(ctx: BenchContext, name: str, index: str, metric: str) -> Metric:
    from recall_gui.core.session.session import Session

    async with Session() as session:
        return await measure_in(session, ctx, name, index, metric)


async def measure_in(session: Session, ctx: BenchContext, name: str, index: str, metric: str) -> Metric:
    import lancedb

    from recall_gui.core.search.nearest import search_hits
    from recall_gui.core.storage.target import TableOptions

    exact_table = ctx.table(100_000)
    table = ctx.table(100_000, index)
    queries = ctx.queries(ctx.size.count(QUERIES))
    options = TableOptions(metric=metric)
    connection = await lancedb.connect_async(str(table.db_dir), read_consistency_interval=dt.timedelta(0))
    raw_table = await connection.open_table(table.name)

    def raw_query(query: np.ndarray[Any, Any]) -> Any:
        return raw_table.query().nearest_to(query).distance_type(metric).limit(LIMIT).to_arrow()

    # Recall: the exact top-10 (the core's exact path on the same rows without an index) is the truth.
    ours_recall: list[float] = []
    raw_recall: list[float] = []
    same_as_raw = 0
    method = ""
    for query in queries:
        truth = {
            h.id for h in (await search_hits(session, search_input(exact_table, query, LIMIT), options)).hits
        }
        ours = await search_hits(session, search_input(table, query, LIMIT), options)
        method = ours.method
        raw_ids = (await raw_query(query)).column("id").to_pylist()
        ours_recall.append(len(truth & {h.id for h in ours.hits}) / LIMIT)
        raw_recall.append(len(truth & set(raw_ids)) / LIMIT)
        same_as_raw += [h.id for h in ours.hits] == raw_ids

    pair = await side_by_side(
        queries,
        lambda q: search_hits(session, search_input(table, q, LIMIT), options),
        raw_query,
        rounds=3,
    )
    same = same_as_raw / len(queries)
    reference = index == "IvfHnswSq"
    return Metric(
        name,
        pair.value_ms,
        "ms",
        pair.floor_ms,
        f"ratio <= {GOAL_RATIO}, same_as_raw = 1" if reference else "report",
        (pair.ratio <= GOAL_RATIO and same == 1.0) if reference else None,
        {
            "same_as_raw": round(same, 3),
            "recall_at_10": round(float(np.mean(ours_recall)), 3),
            "raw_recall_at_10": round(float(np.mean(raw_recall)), 3),
            "method": method,
            "runs": pair.runs,
        },
    )
