"""``recall-gui health``'s scan of one table, in a process of its own (``bench.health_scan`` starts it), so
its memory is measured alone: the resident size sampled every few milliseconds during the scan, against
the size just before it (the table open, the model loaded: what the scan itself holds is measured). Then
LanceDB's bare read of the same columns, timed, as the floor.

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.health_child --db DIR --table NAME
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from typing import Any

SAMPLE_S = 0.005


class PeakMemory:
    """The largest resident size of this process while it runs, sampled on a thread of its own."""

    def __init__(self) -> None:
        import psutil

        self._process = psutil.Process()
        self.baseline = self._process.memory_info().rss
        self.peak = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._process.memory_info().rss)


async def measure(db: str, table_name: str) -> dict[str, Any]:
    import lancedb
    import numpy  # noqa: F401  (the scan's libraries, loaded before the baseline)
    import pyarrow.compute  # noqa: F401

    from recall_gui.core.search import check_health, health_report
    from recall_gui.core.session import Session
    from recall_gui.core.tables import open_table

    async with Session() as session:
        entry = (await open_table(session, db, table=table_name)).entry
        opened = await session.tables.open(entry.target)  # opened before the baseline: not the scan's
        await check_health(session, entry)  # the report's last step, not the scan
        await session.models.reading(entry.embedder)  # the model loaded: its weights are not the scan's
        columns = [opened.columns.id, opened.columns.content, opened.columns.vector]
        with PeakMemory() as memory:
            started = time.perf_counter()
            report = await health_report(session, entry)
            scan_s = time.perf_counter() - started
    table = await (await lancedb.connect_async(db)).open_table(table_name)
    started = time.perf_counter()
    rows = 0
    async for batch in await table.query().select([c for c in columns if c]).to_batches():
        rows += batch.num_rows
    floor_s = time.perf_counter() - started
    table.close()
    return {
        "rows": report.rows,
        "rows_read": rows,
        "scan_s": scan_s,
        "floor_s": floor_s,
        "baseline_mb": memory.baseline / 2**20,
        "growth_mb": (memory.peak - memory.baseline) / 2**20,
        "listed": {
            "zero_norm": len(report.zero_norm),
            "missing": len(report.missing),
            "empty": len(report.empty),
            "duplicate_groups": len(report.duplicate_groups),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True)
    parser.add_argument("--table", required=True)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.db, args.table))))


if __name__ == "__main__":
    main()
