"""``filter_first_ms`` and ``filter_next_ms``: the agent's search with a Where filter, as the window and
``search --where`` run it, on a table of 6,000 rows.

A filter new to the session is first counted in the session's filter worker, a process of its own with a
memory bound (``core/storage/filter_guard.py``): LanceDB aborts its process when an allocation fails.

- ``filter_first_ms``: the first filtered search of a fresh session, after one search without a filter
  (the model loaded, the table open, as when a user types a filter): the worker is started by this
  filter, nothing warmed it before (goal: at most 1 s).
- ``filter_next_ms``: each later filter new to the session (the worker kept), beside the same searches
  without a filter in the same session (goal: at most 300 ms more).

Medians over :data:`SESSIONS` fresh sessions (each with its own worker) and their filters.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from bench import data
from bench.context import BenchContext
from bench.data import QUESTIONS
from bench.fresh_search import write_registry
from bench.results import Metric

TABLE_ROWS = 6_000
SESSIONS = 5
GOAL_FIRST_MS = 1000.0
GOAL_NEXT_EXTRA_MS = 300.0


def filters(rows: int) -> tuple[str, ...]:
    """Filters a user might type, each new to the session and each keeping rows of a table of ``rows``
    (the bench table's ids run doc-0000000 upwards)."""

    def row(number: int) -> str:
        return f"'doc-{number:07d}'"

    return (
        f"id < {row(rows // 2)}",
        f"id >= {row(rows // 4)}",
        "content LIKE '%the%'",
        f"id IN ({row(10)}, {row(20)}, {row(30)}, {row(rows - 1)})",
        "NOT (content LIKE '%repeated chunk%')",
        f"id BETWEEN {row(rows // 10)} AND {row(rows // 3)}",
    )


async def one_session(
    registry: Path, name: str, questions: list[str], wheres: tuple[str, ...]
) -> dict[str, Any]:
    """One fresh session: unfiltered searches, then the first filter, then the next ones (ms each)."""
    from recall_gui.core.search import Harness
    from recall_gui.core.session import Session

    session = Session()
    harness = Harness(registry, session=session)

    async def timed(query: str, where: str | None) -> float:
        started = time.perf_counter()
        report = await harness.search_database(entry, query, 5, where=where)
        if where is not None and not report.result.hits:
            raise RuntimeError(f"the filter {where!r} kept no row of {name}")
        return (time.perf_counter() - started) * 1000

    try:
        entry = harness.resolve_active(name)
        await harness.search_database(entry, "warm up: the model, the table, its vectors", 5)
        plain = [await timed(query, None) for query in questions]
        first = await timed(questions[0], wheres[0])
        following = [await timed(questions[i % len(questions)], where) for i, where in enumerate(wheres[1:])]
    finally:
        await harness.aclose()
        await session.aclose()
    return {"plain": plain, "first": first, "next": following}


def run(ctx: BenchContext) -> list[Metric]:
    table = ctx.table(TABLE_ROWS)
    registry = write_registry(table.db_dir, table.name, data.DATA_DIR / "filter_registry")
    wheres = filters(table.rows)
    questions = list(QUESTIONS)[: ctx.size.count(len(wheres))]
    sessions = [
        asyncio.run(one_session(registry, table.name, questions, wheres))
        for _ in range(ctx.size.count(SESSIONS))
    ]
    first = statistics.median(s["first"] for s in sessions)
    following = statistics.median(t for s in sessions for t in s["next"])
    plain = statistics.median(t for s in sessions for t in s["plain"])
    common = {"rows": table.rows, "sessions": len(sessions), "unfiltered_ms": round(plain, 1)}
    return [
        Metric(
            "filter_first_ms",
            first,
            "ms",
            None,
            f"<= {GOAL_FIRST_MS:g} ms",
            first <= GOAL_FIRST_MS,
            {**common, "scope": "the first filtered search of a fresh session (its filter worker cold)"},
        ),
        Metric(
            "filter_next_ms",
            following,
            "ms",
            None,
            f"<= unfiltered + {GOAL_NEXT_EXTRA_MS:g} ms",
            following - plain <= GOAL_NEXT_EXTRA_MS,
            {
                **common,
                "scope": "each later filter new to the session (its worker kept)",
                "filters": len(wheres) - 1,
            },
        ),
    ]
