"""``reach_100k``: the reach report of 100,000 entries x 384 (each entry's own pseudo-query embedded with the
packaged model in bulk, then searched as the agent searches, 100 deep), wall time; and ``reach_100k_search``:
its search part beside a batched NumPy floor on the same query vectors (``Q @ X.T`` a chunk of queries at a
time, and the first 100 of each row by ``argpartition``), with LanceDB's flat search agreeing on a sample.

The table is built once (cached in bench/data): row ``i`` holds "Item i of the notes: " and a real
passage, with a vector blended from the passages as the other groups' rows are, so that every entry has a
query of its own (the embedding of 100,000 distinct texts is most of the wall time).
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import data
from bench.context import BenchContext
from bench.results import Metric

ROWS, LIMIT, DEPTH = 100_000, 5, 100
GOAL_RATIO = 2.0
#: Queries per chunk of the floor's matrix product.
FLOOR_CHUNK = 1024
#: Queries checked against LanceDB's own flat search.
WITH_LANCEDB = 10
NAME = "reach"


def run(ctx: BenchContext) -> list[Metric]:
    return asyncio.run(measure(ctx, ctx.size.rows(ROWS)))


def build(ctx: BenchContext, rows: int) -> tuple[Path, np.ndarray[Any, np.dtype[np.float32]]]:
    """The table (built if missing or stale) and its registry; returns the registry and the vectors."""
    import lancedb
    import pyarrow as pa

    texts, base = ctx.base
    folder = data.DATA_DIR / f"reach_{rows}"
    stamp = {"version": data.DATA_VERSION, "rows": rows, "base": len(base)}
    vectors_path = folder / "vectors.npy"
    stamp_path = folder / "stamp.json"
    if stamp_path.exists() and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
        return folder / "registry", np.load(vectors_path)
    print(f"  building the reach table ({rows:,} rows) ...", flush=True)
    vectors, main = data.blended_vectors(base, rows, np.random.default_rng(data.SEED + 7))
    contents = [f"Item {i} of the notes: {texts[m]}" for i, m in enumerate(main)]
    table = pa.table(
        {
            "id": pa.array([f"item-{i:06d}" for i in range(rows)], pa.utf8()),
            "content": pa.array(contents, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
        }
    )
    lancedb.connect(str(folder / "lancedb")).create_table(NAME, table, mode="overwrite")
    registry = folder / "registry"
    registry.mkdir(parents=True, exist_ok=True)
    entry = {
        "name": NAME,
        "uri": str(folder / "lancedb"),
        "description": "benchmark entries for the reach report",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (registry / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}), encoding="utf-8")
    (registry / "rag_active.json").write_text(json.dumps([NAME]), encoding="utf-8")
    np.save(vectors_path, vectors)
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    return registry, vectors


def floor_ms(matrix: np.ndarray[Any, Any], queries: np.ndarray[Any, Any]) -> float:
    """NumPy's batched top-``DEPTH`` by L2 over the same vectors for the same queries."""
    started = time.perf_counter()
    sq_norms = np.einsum("ij,ij->i", matrix, matrix)
    for start in range(0, len(queries), FLOOR_CHUNK):
        scores = queries[start : start + FLOOR_CHUNK] @ matrix.T
        scores *= -2
        scores += sq_norms
        np.argpartition(scores, min(DEPTH, len(matrix) - 1), axis=1)[:, :DEPTH]
    return (time.perf_counter() - started) * 1000


async def measure(ctx: BenchContext, rows: int) -> list[Metric]:
    import lancedb

    from recall_gui.core.reach.reach import find_reach
    from recall_gui.core.reach.reach_search import rank_queries
    from recall_gui.core.search.harness import Harness

    registry, matrix = build(ctx, rows)
    captured: dict[str, Any] = {"queries": [], "search_ms": 0.0, "results": []}

    async def timed_ranker(*args: Any, **kwargs: Any) -> Any:
        """The report ranks its entries part by part: every part's queries, time and results, in order."""
        started = time.perf_counter()
        ranking = await rank_queries(*args, **kwargs)
        captured["search_ms"] += (time.perf_counter() - started) * 1000
        captured["queries"].append(args[2])
        captured["results"] += ranking.results
        return ranking

    harness = Harness(registry)
    try:
        entry = harness.registry.get(NAME)
        assert entry is not None
        started = time.perf_counter()
        report = await find_reach(harness, entry, limit=LIMIT, depth=DEPTH, ranker=timed_ranker)
        wall_s = time.perf_counter() - started
    finally:
        await harness.aclose()
    queries = np.ascontiguousarray(np.vstack(captured["queries"]), dtype=np.float32)
    floor = min(floor_ms(matrix, queries) for _ in range(2))
    search_ms = captured["search_ms"]
    table = lancedb.connect(str(registry.parent / "lancedb")).open_table(NAME)
    agrees = 0
    for number in range(min(WITH_LANCEDB, len(queries))):
        found = table.search(queries[number]).distance_type("l2").limit(LIMIT).with_row_id(True).to_list()
        agrees += [row["_rowid"] for row in found] == captured["results"][number].tolist()
    checked = min(WITH_LANCEDB, len(queries))
    print(
        f"  {report.entries:,} entries: {wall_s:.1f} s in all (embedding {report.embed_s:.1f} s, search "
        f"{search_ms / 1000:.2f} s, floor {floor / 1000:.2f} s); {report.reachable:,} reachable; "
        f"LanceDB agrees on {agrees}/{checked}",
        flush=True,
    )
    facts = {
        "entries": report.entries,
        "embed_s": round(report.embed_s, 3),
        "model": None if report.model is None else report.model.to_json(),
    }
    return [
        Metric("reach_100k", wall_s * 1000, "ms", extra=facts),
        Metric(
            "reach_100k_search",
            search_ms,
            "ms",
            floor,
            f"ratio <= {GOAL_RATIO}, identical",
            search_ms / floor <= GOAL_RATIO and agrees == checked,
            {"identical_to_lancedb": f"{agrees}/{checked}", "queries": len(queries), "depth": DEPTH},
        ),
    ]
