"""The window on a registry of many databases, in a process of its own (``bench.large_registry`` starts
it): how long until it has started, and how long the GUI thread stalls at start and at each F5.

1. ``start``: from process creation to the end of the window's start-up (every database listed, the
   first one chosen and shown), with the longest a 10 ms timer on the GUI thread went unserved since the
   window was created (the constructor's own time included: the thread serves nothing meanwhile).
2. ``reload``: F5, until the registry is read again and shown (and the health checks it starts have run
   for a second more); the longest timer gap meanwhile is the F5 stall. Several rounds.

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.large_registry_child --registry DIR --config DIR [--reloads 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.gap import GapMeter
from bench.process_age import process_age_s

#: How long after the registry is shown again the F5 round keeps measuring (the health checks it starts).
AFTER_RELOAD_S = 1.0


async def reload_once(window: Any, meter: GapMeter) -> dict[str, float]:
    shown = asyncio.Event()
    window.registryReloaded.connect(shown.set)
    meter.start()
    started = time.perf_counter()
    window.menus.reload_action.trigger()  # F5
    await shown.wait()
    shown_ms = (time.perf_counter() - started) * 1000
    await asyncio.sleep(AFTER_RELOAD_S)
    gap = meter.stop()
    window.registryReloaded.disconnect(shown.set)
    return {"shown_ms": shown_ms, "stall_ms": gap}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--registry", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--reloads", type=int, default=3)
    args = parser.parse_args()

    import qasync
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    meter = GapMeter()
    meter.start()
    from recall_gui.qt import create_window

    window = create_window(Path(args.registry), Path(args.config))
    window.show()
    found: dict[str, Any] = {}

    async def session() -> None:
        await window.start()
        found["start_s"] = process_age_s()
        found["start_stall_ms"] = meter.stop()
        found["listed"] = len(window.knowledge.database_bar.names())
        found["databases"] = len(window.registry.databases)
        rounds = [await reload_once(window, meter) for _ in range(args.reloads)]
        found["reloads"] = rounds
        found["reload_stall_ms"] = max(r["stall_ms"] for r in rounds)
        found["reload_shown_ms"] = max(r["shown_ms"] for r in rounds)
        window.close()
        window.operations.cancel_all()
        await window.aclose()

    loop.run_until_complete(session())
    print(json.dumps(found), flush=True)


if __name__ == "__main__":
    main()
