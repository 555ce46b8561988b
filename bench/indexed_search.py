"""``indexed_search_100k``: the core's ``search_hits`` (top-10) on a table with an ANN index, beside
LanceDB's raw indexed query with its default settings, in the same process; recall@10 against the exact
top-10 of the same rows. The reference index is ``IvfHnswSq`` (cosine); ``IvfPq`` with LanceDB's
defaults, whose raw recall is poor, is reported beside it (``indexed_search_100k_ivfpq``)."""

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
GOAL_RECALL = 0.95
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

    from recall_gui.core.search.nearest import _tune, search_hits
    from recall_gui.core.storage.target import TableOptions, TableTarget

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
    method = ""
    for query in queries:
        truth = {
            h.id for h in (await search_hits(session, search_input(exact_table, query, LIMIT), options)).hits
        }
        ours = await search_hits(session, search_input(table, query, LIMIT), options)
        method = ours.method
        raw = await raw_query(query)
        ours_recall.append(len(truth & {h.id for h in ours.hits}) / LIMIT)
        raw_recall.append(len(truth & set(raw.column("id").to_pylist())) / LIMIT)
    opened = await session.tables.open(TableTarget(str(table.db_dir), table.name, options))

    def raw_tuned(query: np.ndarray[Any, Any]) -> Any:
        tuned = _tune(raw_table.query().nearest_to(query).distance_type(metric), opened, LIMIT)
        return tuned.limit(LIMIT).to_arrow()

    pair = await side_by_side(
        queries,
        lambda q: search_hits(session, search_input(table, q, LIMIT), options),
        raw_query,
        rounds=3,
        others={"raw_with_core_settings": raw_tuned},
    )
    recall = float(np.mean(ours_recall))
    reference = index == "IvfHnswSq"
    return Metric(
        name,
        pair.value_ms,
        "ms",
        pair.floor_ms,
        f"ratio <= {GOAL_RATIO}, recall@10 >= {GOAL_RECALL}" if reference else "report",
        (pair.ratio <= GOAL_RATIO and recall >= GOAL_RECALL) if reference else None,
        {
            "recall_at_10": round(recall, 3),
            "raw_recall_at_10": round(float(np.mean(raw_recall)), 3),
            "raw_with_core_settings_ms": round(pair.others_ms["raw_with_core_settings"], 3),
            "method": method,
            "runs": pair.runs,
        },
    )
