"""What the Agent view costs the window: the server's start, a listing, a query through it, and the stop.

The view starts `recall-gui mcp` as a subprocess and talks to it on the qasync loop; none of that may
stall the GUI. While each step runs, a 10 ms timer measures the longest time the GUI thread went without
serving it ("max gap": the worst delay a key press typed meanwhile could see), printed next to the step's
own duration.

    python -m bench.agent_view [--runs 3]

Builds a 12-passage knowledge base with cosh's default model in a temporary directory. Needs a display
(or QT_QPA_PLATFORM=offscreen).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench.gap import GapMeter

ROOT = Path(__file__).resolve().parents[1]


def build_kb(root: Path) -> Path:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from recall_gui.core.embedders.pool import load_local_model
    from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry

    vectors = np.vstack(load_local_model("AllMiniLML6V2").embed_many(list(PASSAGES.values())))
    write_lance_table(root / "lancedb", "notes", tuple(PASSAGES), tuple(PASSAGES.values()), vectors)
    return write_registry(root / "registry", [cosh_entry("notes", root / "lancedb", "Team notes")])


async def one_run(registry: Path, config: Path) -> dict[str, tuple[float, float]]:
    from recall_gui.qt import create_window

    window = create_window(registry, config)
    window.show()
    await window.start()
    agent = window.agent
    window.knowledge.query_bar.query_edit.setText("How do I change my password?")
    meter = GapMeter()
    steps: dict[str, tuple[float, float]] = {}
    steps["start server + list"] = await meter.measure(agent.refresh_listing)
    steps["list again"] = await meter.measure(agent.refresh_listing)
    entry, arguments = agent.current_call()
    assert entry is not None
    steps["first query"] = await meter.measure(lambda: agent.run_call(entry, arguments))
    steps["query again"] = await meter.measure(lambda: agent.run_call(entry, arguments))
    window.close()
    steps["stop server"] = await meter.measure(agent.aclose)
    await window.operations.wait_idle()
    await window.aclose()
    window.deleteLater()
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="agent-view-bench-"))
    os.environ.setdefault("RECALL_GUI_CACHE_DIR", str(root / "cache"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    registry = build_kb(root)

    import qasync
    from PySide6.QtWidgets import QApplication

    from recall_gui.qt.app import configure_qt_process

    configure_qt_process()  # as the app sets itself up

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    results: dict[str, list[tuple[float, float]]] = {}
    for run in range(args.runs):
        steps = loop.run_until_complete(one_run(registry, root / f"config{run}"))
        for name, value in steps.items():
            results.setdefault(name, []).append(value)
    loop.close()
    print(f"{'step':22} {'median duration':>16} {'median max gap':>15} {'gap / 10 ms tick':>17}")
    for name, values in results.items():
        duration = statistics.median(v[0] for v in values)
        gap = statistics.median(v[1] for v in values)
        print(f"{name:22} {duration:13.0f} ms {gap:12.1f} ms {gap / 10:16.1f}x")


if __name__ == "__main__":
    main()
