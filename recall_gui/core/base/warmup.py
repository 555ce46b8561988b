"""The slow libraries (LanceDB, PyArrow, NumPy, httpx, fastembed) load on a worker thread after the window
is shown, so the window opens at once and typing works while they load.

Every operation that needs them awaits :meth:`HeavyModules.ready` first; importing one of them on the GUI
thread instead would freeze the window for seconds.
"""

from __future__ import annotations

import asyncio
import importlib
import time
from concurrent.futures import Executor

from recall_gui.core.base.collector import collection_paused

#: What searching and browsing need, in the order they are imported.
HEAVY_MODULES = (
    "numpy",
    "numpy.ma",  # PyArrow imports it when LanceDB turns a query vector into an array
    "pyarrow",
    "lancedb",
    "httpx",
    "numkong",  # the int8 scan of exact search (session/certified.py)
    "recall_gui.core.search.harness",
    "recall_gui.core.search.health",
    "recall_gui.core.tables.browse",
)


def _import_all() -> float:
    started = time.perf_counter()
    with collection_paused():
        for name in HEAVY_MODULES:
            importlib.import_module(name)
    # Before anything calls LanceDB: its threads must start at a lower priority than the GUI thread.
    from recall_gui.core.base.lance_priority import start_lance_runtime_at_low_priority

    start_lance_runtime_at_low_priority()
    return (time.perf_counter() - started) * 1000


class HeavyModules:
    """Loads :data:`HEAVY_MODULES` once, on ``executor``; concurrent callers share the one load."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self._future: asyncio.Future[float] | None = None
        #: How long the load took (ms), once it has finished.
        self.load_ms: float | None = None

    def start(self) -> None:
        """Start loading them (on the running loop's executor) without waiting."""
        if self._future is None:
            self._future = asyncio.get_running_loop().run_in_executor(self._executor, _import_all)

    async def ready(self) -> None:
        self.start()
        assert self._future is not None
        self.load_ms = await asyncio.shield(self._future)
