"""``mcp_first_call_after_idle`` and ``mcp_first_call_immediate``: an agent's first ``recall_search``
through ``recall-gui mcp`` on the 100k table, driven by the MCP SDK's own client as an agent drives it.

- after idle: start the server, ``initialize``, ``tools/list``, wait :data:`IDLE_S` (an agent thinking),
  then call; the call's time beside the median of the calls that follow it (warm calls). Goal: at most
  twice a warm call. The server's resident memory is read right after ``initialize`` (before its preload
  has done much) and after the idle wait (preloaded).
- immediate: start the server, ``initialize`` and call at once; from the server's start to the result,
  beside a fresh ``recall-gui search`` process from its start to its printed result (the same search
  without a server). Goal: no more than the same server without its preload (within :data:`NOISE`).

Each is also measured with the preload turned off (``RECALL_GUI_MCP_PRELOAD=0``, the server as it was),
alternating with it, and so is the time ``initialize`` takes to answer.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import fresh_search
from bench.context import BenchContext
from bench.data import QUESTIONS
from bench.results import Metric

RUNS = 3
IDLE_S = 5.0
WARM_CALLS = 10
GOAL_AFTER_IDLE = 2.0
#: An immediate call must cost no more than without the preload; runs differ by about this much here.
NOISE = 1.1


def _server_rss_mb() -> float | None:
    import psutil

    servers = [child for child in psutil.Process().children(recursive=True) if "mcp" in child.cmdline()]
    return servers[-1].memory_info().rss / 1024**2 if servers else None


def session_facts(
    registry: Path, name: str, env: dict[str, str], *, idle_s: float, warm_calls: int
) -> dict[str, Any]:
    """One server from start to its last call (its log discarded)."""
    with open(os.devnull, "w") as log:
        return asyncio.run(one_session(registry, name, env, log, idle_s=idle_s, warm_calls=warm_calls))


async def one_session(
    registry: Path, name: str, env: dict[str, str], log: Any, *, idle_s: float, warm_calls: int
) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command = fresh_search.recall_gui_command()
    parameters = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp", "--registry", str(registry)], env=env
    )
    facts: dict[str, Any] = {}
    started = time.perf_counter()
    async with (
        stdio_client(parameters, errlog=log) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        facts["initialize_ms"] = (time.perf_counter() - started) * 1000
        facts["rss_before_mb"] = _server_rss_mb()
        if idle_s:
            await session.list_tools()
            await asyncio.sleep(idle_s)
            facts["rss_after_mb"] = _server_rss_mb()

        async def call(i: int) -> float:
            arguments = {"db_name": name, "query": QUESTIONS[i % len(QUESTIONS)], "limit": 5}
            called = time.perf_counter()
            result = await session.call_tool("recall_search", arguments)
            assert not result.is_error, result.content
            return (time.perf_counter() - called) * 1000

        facts["first_ms"] = await call(0)
        facts["spawn_to_result_ms"] = (time.perf_counter() - started) * 1000
        facts["warm_ms"] = [await call(i + 1) for i in range(warm_calls)]
        facts["rss_end_mb"] = _server_rss_mb()
    return facts


def run(ctx: BenchContext) -> list[Metric]:
    folder, name = fresh_search.table_folder(ctx)
    registry = fresh_search.write_registry(folder, name)
    home = Path(tempfile.mkdtemp(prefix="mcp-first-call-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {
        "RECALL_GUI_CONFIG_DIR": str(home / "config"),
        "RECALL_GUI_DATA_DIR": str(home / "data"),
    }
    modes = {"preload": env, "no_preload": env | {"RECALL_GUI_MCP_PRELOAD": "0"}}
    search = [*fresh_search.recall_gui_command(), "search", "--registry", str(registry), "--db", name]
    idle: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    immediate: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    fresh: list[float] = []
    fresh_search.time_process([*search, QUESTIONS[0]], env, '"results"')  # untimed: bytecode, page cache
    # A toy run idles a second: long enough for the preload to begin, not to end.
    idle_s, warm_calls = (1.0, 2) if ctx.size.toy else (IDLE_S, WARM_CALLS)
    for i in range(1 if ctx.size.toy else RUNS):
        order = list(modes) if i % 2 == 0 else list(modes)[::-1]
        for mode in order:
            idle[mode].append(
                session_facts(registry, name, modes[mode], idle_s=idle_s, warm_calls=warm_calls)
            )
        for mode in order:
            immediate[mode].append(session_facts(registry, name, modes[mode], idle_s=0, warm_calls=0))
        fresh.append(fresh_search.time_process([*search, QUESTIONS[i % len(QUESTIONS)]], env, '"results"'))

    def median(runs: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in runs if r.get(key) is not None)

    first = median(idle["preload"], "first_ms")
    warm = statistics.median(ms for r in idle["preload"] for ms in r["warm_ms"])
    spawn_to_result = median(immediate["preload"], "spawn_to_result_ms")
    without = median(immediate["no_preload"], "spawn_to_result_ms")
    fresh_ms = statistics.median(fresh)
    return [
        Metric(
            "mcp_first_call_after_idle",
            first,
            "ms",
            floor=warm,
            goal=f"<= {GOAL_AFTER_IDLE} x a warm call, {IDLE_S:.0f} s after start",
            met=first <= GOAL_AFTER_IDLE * warm,
            extra={
                "first_ms_runs": [round(r["first_ms"], 1) for r in idle["preload"]],
                "without_preload_first_ms": round(median(idle["no_preload"], "first_ms"), 1),
                "rss_before_preload_mb": round(median(idle["preload"], "rss_before_mb")),
                "rss_after_preload_mb": round(median(idle["preload"], "rss_after_mb")),
                "rss_without_preload_mb": round(median(idle["no_preload"], "rss_after_mb")),
                "rss_after_calls_mb": round(median(idle["preload"], "rss_end_mb")),
                "rss_after_calls_without_preload_mb": round(median(idle["no_preload"], "rss_end_mb")),
                "initialize_ms": round(median(idle["preload"] + immediate["preload"], "initialize_ms"), 1),
                "initialize_ms_without_preload": round(
                    median(idle["no_preload"] + immediate["no_preload"], "initialize_ms"), 1
                ),
            },
        ),
        Metric(
            "mcp_first_call_immediate",
            spawn_to_result,
            "ms",
            floor=fresh_ms,
            goal=f"(ratio to a fresh search reported) <= {NOISE} x the same without the preload",
            met=spawn_to_result <= NOISE * without,
            extra={
                "runs_ms": [round(r["spawn_to_result_ms"]) for r in immediate["preload"]],
                "fresh_search_runs_ms": [round(ms) for ms in fresh],
                "without_preload_ms": round(without),
                "without_preload_runs_ms": [round(r["spawn_to_result_ms"]) for r in immediate["no_preload"]],
            },
        ),
    ]
