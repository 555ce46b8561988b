"""``first_search_while_checking``: the first exact search of a fresh session on 10k x 384 where the
self-test of LanceDB's arithmetic has not run yet (no verdict remembered: candidates measured by LanceDB
itself; the test starts once the search has answered), against the same first search with the verdict
remembered; both checked identical to LanceDB's flat search.
``arithmetic_self_test``: the self-test alone (:mod:`recall_gui.core.session.lance_arithmetic`)."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.context import BenchContext
from bench.results import Metric

ROWS, TOP_K = 10_000, 10
GOAL_RATIO = 1.2


def run(ctx: BenchContext) -> list[Metric]:
    import lancedb
    import numpy as np

    from recall_gui.core.session.lance_arithmetic import LanceArithmetic, holding_emulation

    table = ctx.table(ROWS)
    query = np.asarray(ctx.queries(1)[0], np.float32)
    self_test = []
    for _ in range(ctx.size.count(3)):
        started = time.perf_counter()
        holding = holding_emulation() or "none"
        self_test.append((time.perf_counter() - started) * 1000)
    checking, known, answers = [], [], []
    with tempfile.TemporaryDirectory(prefix="recall-gui-bench-arithmetic-") as scratch:
        remembered = Path(scratch) / "remembered"
        LanceArithmetic(remembered).wait()
        for number in range(ctx.size.count(5)):  # alternately, each in a fresh session
            fresh = Path(scratch) / f"fresh-{number}"
            for folder, times in ((fresh, checking), (remembered, known)):
                spent, row_ids = asyncio.run(_first_search(table, query, folder))
                times.append(spent)
                answers.append(row_ids)
    lance = lancedb.connect(str(table.db_dir)).open_table(table.name)
    found = lance.search(query).distance_type("l2").limit(TOP_K).with_row_id(True).to_arrow()
    expected = found.column("_rowid").to_pylist()
    identical = sum(answer == expected for answer in answers)
    value, floor = statistics.median(checking), statistics.median(known)
    print(
        f"  self-test {statistics.median(self_test):.0f} ms (the emulation that holds: {holding}); first "
        f"search {value:.0f} ms with no verdict yet, {floor:.0f} ms with it remembered; identical to LanceDB "
        f"in {identical}/{len(answers)}",
        flush=True,
    )
    return [
        Metric("arithmetic_self_test", statistics.median(self_test), "ms", goal="(reported; its own thread)"),
        Metric(
            "first_search_while_checking",
            value,
            "ms",
            floor,
            f"ratio <= {GOAL_RATIO}, identical",
            value / floor <= GOAL_RATIO and identical == len(answers),
            {"identical_to_lancedb": f"{identical}/{len(answers)}", "emulation_holding": holding},
        ),
    ]


async def _first_search(table: Any, query: Any, folder: Path) -> tuple[float, list[int]]:
    from recall_gui.core.base.types import RecallSearchInput
    from recall_gui.core.search.nearest import prepare, search_hits
    from recall_gui.core.session.lance_arithmetic import LanceArithmetic
    from recall_gui.core.session.session import Session
    from recall_gui.core.storage.target import TableOptions, TableTarget

    options = TableOptions(metric="l2")
    async with Session() as session:
        session.arithmetic = LanceArithmetic(folder)
        started = time.perf_counter()
        await prepare(session, TableTarget(str(table.db_dir), table.name, options))  # as a database is chosen
        request = RecallSearchInput(str(table.db_dir), table.name, len(query), "q", query, TOP_K)
        result = await search_hits(session, request, options)
        spent = (time.perf_counter() - started) * 1000
    return spent, [hit.row_id for hit in result.hits]
