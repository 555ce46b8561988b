"""``duplicates_100k``: the core's near-duplicate search over a 100k x 384 table (``find_duplicates``:
every pair compared, in steps on the session's compute thread, through its pre-filter; groups joined and
measured, their rows read) beside a NumPy floor: the blocked all-pairs product of the same vectors, already
in memory and already normalised, over the same upper triangle in tiles of the same size, keeping the pairs
above the threshold's similarity (no exact re-check, no groups). Checked: the core's pairs are the floor's.

Both run on one BLAS thread (``OPENBLAS_NUM_THREADS=1``, as the app sets it), alternately, twice."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from bench.context import BenchContext
from bench.results import Metric

ROWS = 100_000
ROUNDS = 2
#: The pre-filter must make the exact search faster than NumPy's plain all-pairs.
GOAL_RATIO = 1.0


def run(ctx: BenchContext) -> list[Metric]:
    return [asyncio.run(measure(ctx))]


def floor_pairs(unit: np.ndarray[Any, Any], threshold: float, tile_rows: int, tile_columns: int) -> int:
    """NumPy's blocked all-pairs: the pairs ``i < j`` whose cosine distance is within ``threshold``."""
    rows = len(unit)
    similar = np.float32(1.0 - threshold)
    found = 0
    for start in range(0, rows, tile_rows):
        block = unit[start : start + tile_rows]
        for column in range(start, rows, tile_columns):
            scores = block @ unit[column : column + tile_columns].T
            first, second = np.divmod(np.flatnonzero(scores >= similar), scores.shape[1])
            found += int(np.count_nonzero(first + start < second + column))
    return found


async def measure(ctx: BenchContext) -> Metric:
    from recall_gui.core.inspect.duplicate_threshold import DEFAULT_THRESHOLDS
    from recall_gui.core.inspect.duplicates import find_duplicates
    from recall_gui.core.inspect.near_duplicates import TILE_COLUMNS, TILE_ROWS
    from recall_gui.core.search.nearest import prepare
    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableTarget

    table = ctx.table(ROWS)
    threshold = DEFAULT_THRESHOLDS["cosine"]
    matrix = table.load_vectors()
    unit = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    target = TableTarget(str(table.db_dir), table.name)
    value_s: list[float] = []
    floor_s: list[float] = []
    async with Session() as session:
        started = time.perf_counter()
        await prepare(session, target)  # the vectors read into memory, as after choosing the database
        read_s = time.perf_counter() - started
        report: Any = None
        floor_found = 0
        for round_number in range(ROUNDS):
            for which in ("subject", "floor") if round_number % 2 == 0 else ("floor", "subject"):
                started = time.perf_counter()
                if which == "subject":
                    report = await find_duplicates(session, target, threshold=threshold)
                    value_s.append(time.perf_counter() - started)
                else:
                    floor_found = floor_pairs(unit, threshold, TILE_ROWS, TILE_COLUMNS)
                    floor_s.append(time.perf_counter() - started)
                print(f"  {which}: {time.perf_counter() - started:.1f} s", flush=True)
    value, floor = float(np.median(value_s)), float(np.median(floor_s))
    grouped = sum(len(group.entries) for group in report.groups)
    same = report.pairs == floor_found
    print(
        f"  {report.pairs} pairs ({floor_found} by the floor), {len(report.groups)} groups of {grouped} "
        f"rows; vectors read in {read_s:.1f} s",
        flush=True,
    )
    return Metric(
        f"duplicates_{ROWS // 1000}k",
        value,
        "s",
        floor,
        f"ratio <= {GOAL_RATIO}, same pairs",
        value / floor <= GOAL_RATIO and same,
        {
            "threshold": threshold,
            "metric": "cosine",
            "pairs": report.pairs,
            "floor_pairs": floor_found,
            "groups": len(report.groups),
            "grouped_rows": grouped,
            "vectors_read_s": round(read_s, 2),
            "runs_s": [round(x, 1) for x in value_s],
            "floor_runs_s": [round(x, 1) for x in floor_s],
        },
    )
