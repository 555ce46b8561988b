"""``registry_load_50k``: reading a cosh registry of 50,000 active databases (both files, every entry
checked) beside its floor: ``json.loads`` of the same two files, in the same process.

A registry that large is unusual, but an MCP client waits for it at ``initialize`` and the window on F5;
the cost must grow with the entries, not with their square.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from bench import data
from bench.context import BenchContext
from bench.results import Metric
from bench.timing import side_by_side

ENTRIES = 50_000
GOAL_RATIO = 6.0


def write_big_registry(directory: Path, count: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    entries = [
        {
            "name": f"db-{i}",
            "uri": f"/data/db-{i}",
            "description": f"notes {i}",
            "embedder": {"Local": {"model": "AllMiniLML6V2"}},
            "created_at": 1_760_000_000_000,
        }
        for i in range(count)
    ]
    (directory / "rag_dbs.json").write_text(json.dumps({"dbs": entries}, indent=2), encoding="utf-8")
    names = [entry["name"] for entry in entries]
    (directory / "rag_active.json").write_text(json.dumps(names), encoding="utf-8")
    return directory


def run(ctx: BenchContext) -> list[Metric]:
    from recall_gui.core.registry.registry import load_registry

    entries = ctx.size.rows(ENTRIES)
    directory = write_big_registry(data.DATA_DIR / f"registry-{entries}", entries)

    def floor(_: int) -> None:
        json.loads((directory / "rag_dbs.json").read_text(encoding="utf-8"))
        json.loads((directory / "rag_active.json").read_text(encoding="utf-8"))

    async def subject(_: int) -> None:
        load_registry(directory)

    pair = asyncio.run(side_by_side(range(ctx.size.count(5)), subject, floor))
    return [
        Metric(
            f"registry_load_{ENTRIES // 1000}k",
            pair.value_ms,
            "ms",
            pair.floor_ms,
            goal=f"ratio <= {GOAL_RATIO}",
            met=pair.ratio <= GOAL_RATIO,
            extra={"entries": entries},
        )
    ]
