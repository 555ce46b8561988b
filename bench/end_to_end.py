"""``end_to_end_100k_core``: query text -> the harness's ``SearchReport`` (embedding with the packaged
model, then the exact search with its hits), beside its floor: the same model embedding the same text
plus NumPy's fastest exact top-k (matmul or einsum), in the same process. ``end_to_end_100k`` itself,
up to the rows in the window's results model, is measured by :mod:`bench.window`."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from bench.context import BenchContext
from bench.data import QUESTIONS
from bench.results import Metric
from bench.timing import side_by_side

TOP_K = 5
GOAL_RATIO = 1.3


def run(ctx: BenchContext) -> list[Metric]:
    return [asyncio.run(measure(ctx))]


def floors(embedder: Any, matrix: np.ndarray[Any, Any]) -> tuple[Callable[[str], Any], Callable[[str], Any]]:
    """The end-to-end floors: embed the text with the same model, then NumPy's exact top-k over
    ``matrix`` by ``X @ q`` and by ``einsum`` (whichever is faster on this machine is the floor)."""

    def matmul_floor(text: str) -> Any:
        query = embedder.embed_sync(text)
        return np.argpartition(matrix @ query, TOP_K)[:TOP_K]

    def einsum_floor(text: str) -> Any:
        query = embedder.embed_sync(text)
        return np.argpartition(np.einsum("ij,j->i", matrix, query), TOP_K)[:TOP_K]

    return matmul_floor, einsum_floor


def write_registry(ctx: BenchContext, table_name: str) -> None:
    """A cosh registry listing the generated table as an active database (name = table name)."""
    ctx.registry_dir.mkdir(parents=True, exist_ok=True)
    entry = {
        "name": table_name,
        "uri": str(ctx.table(100_000).db_dir),
        "description": "benchmark rows derived from Python's documentation",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (ctx.registry_dir / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}, indent=2), encoding="utf-8")
    (ctx.registry_dir / "rag_active.json").write_text(json.dumps([table_name]), encoding="utf-8")


async def measure(ctx: BenchContext) -> Metric:
    from recall_gui.core.search.harness import Harness

    table = ctx.table(100_000)
    matrix = table.load_vectors()
    write_registry(ctx, table.name)
    harness = Harness(ctx.registry_dir)
    entry = harness.resolve_active(table.name)
    embedder = ctx.embedder
    await harness.search_database(entry, "warm up: load the model and the vectors", TOP_K)
    reports: list[Any] = []

    async def subject(text: str) -> None:
        reports.append(await harness.search_database(entry, text, TOP_K))

    floor, einsum_floor = floors(embedder, matrix)
    questions = list(QUESTIONS)[: ctx.size.count(len(QUESTIONS))]
    measured = await side_by_side(questions, subject, floor, rounds=3, others={"einsum": einsum_floor})
    pair = dataclasses.replace(measured, floor_ms=min(measured.floor_ms, measured.others_ms["einsum"]))
    await harness.aclose()
    return Metric(
        "end_to_end_100k_core",
        pair.value_ms,
        "ms",
        pair.floor_ms,
        f"ratio <= {GOAL_RATIO}",
        pair.ratio <= GOAL_RATIO,
        {
            "scope": "query text -> SearchReport (core, no window)",
            "embed_ms": round(float(np.median([r.embed_ms for r in reports])), 3),
            "search_ms": round(float(np.median([r.result.search_ms for r in reports])), 3),
            "method": reports[-1].result.method,
            "runs": pair.runs,
        },
    )
