"""Loading what a search needs before the first one is asked for (the MCP server's start).

An agent's first ``recall_search`` would otherwise wait for LanceDB and the model to load (seconds); the
server preloads them while the agent is busy elsewhere. The libraries are imported on a worker thread,
so the event loop keeps answering (``initialize``, ``tools/list``) meanwhile; then each active database
is made ready by searches whose results are dropped (:func:`warm_up`): they load its model and run it
once, open its table and read its vectors for exact search. A search that arrives meanwhile shares that
work (the same import locks, the same model load on the session's embedding thread), so it waits no
longer than it would have.

Nothing that goes wrong here is reported to the agent: the failure is logged and forgotten, and the
first call meets it afresh and reports it exactly as it would have without a preload.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from dataclasses import dataclass

from recall_gui.core.base.collector import collection_paused
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.nearest import prepare

#: What a search imports, in the order it needs them (the packaged model's queries need onnxruntime and
#: tokenizers; fastembed loads with any other local model, when its database is warmed up).
SEARCH_MODULES = ("numpy", "numpy.ma", "pyarrow", "lancedb", "onnxruntime", "tokenizers")
#: The text of the searches that warm each database up (their results are dropped).
WARM_UP_QUERY = "warm-up"


def import_search_libraries() -> None:
    """Import what a search needs (blocking: run it on a worker thread)."""
    with collection_paused():
        for name in SEARCH_MODULES:
            importlib.import_module(name)


@dataclass(frozen=True)
class PreloadReport:
    """What the preload did: the databases warmed, those that failed (with why), and how long it took."""

    warmed: tuple[str, ...]
    failed: tuple[tuple[str, str], ...]
    seconds: float


async def preload(harness: Harness) -> PreloadReport:
    """Import the search libraries, then search each active database once; never raises (but can be
    cancelled)."""
    started = time.perf_counter()
    warmed: list[str] = []
    failed: list[tuple[str, str]] = []
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(harness.session.compute_executor, import_search_libraries)
    except Exception as error:  # a broken install: the first search reports it as it would have
        failed.append(("(libraries)", f"{type(error).__name__}: {error}"))
        return PreloadReport((), tuple(failed), time.perf_counter() - started)
    for entry in harness.registry.active:
        try:
            await warm_up(harness, entry)
        except Exception as error:  # missing model, broken table, bad registry: the first real call says so
            failed.append((entry.name, str(error) or type(error).__name__))
        else:
            warmed.append(entry.name)
    return PreloadReport(tuple(warmed), tuple(failed), time.perf_counter() - started)


async def warm_up(harness: Harness, entry: DatabaseEntry) -> None:
    """Get one database ready for its first search.

    A local model gets a search (loading the model and running it once), then the table's vectors are
    read in full (a big table's first search does not wait for them), then one more search runs on them.
    A cloud model is never asked: a request costs the user money, so only the table is prepared.
    """
    if entry.embedder.kind == "local":
        await harness.search_database(entry, WARM_UP_QUERY, 1)
    await prepare(harness.session, entry.target)
    if entry.embedder.kind == "local":
        await harness.search_database(entry, WARM_UP_QUERY, 1)
