"""The window's part of ``window_rss_after_50_databases_mb``, in a process of its own
(:mod:`bench.window_memory` starts it).

Once: the first database chosen and searched, every page opened and closed (the floor). Then, for each
database in turn: chosen, searched, and one page opened and closed (the pages in turn). The resident size
is read after each round, once the window is idle and Python's collector has run (what is still held, not
garbage not yet collected), and the peak's rise over the rounds (:class:`bench.memory.PeakGrowth`).

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.window_memory_child --registry DIR --config DIR --databases N
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from bench.data import QUESTIONS
from bench.memory import PeakGrowth, resident_mb
from bench.window_child import run_measured

#: Rounds whose resident size is kept in the results (besides the last).
NOTED = (1, 10, 25)


async def held_mb(window: Any) -> float:
    """The resident size once the window's work has ended and the collector has run."""
    await window.operations.wait_idle()
    await asyncio.sleep(0.2)  # the last results painted
    gc.collect()
    return resident_mb()


async def session(args: argparse.Namespace) -> dict[str, Any]:
    from recall_gui.qt import create_window

    window = create_window(args.registry, args.config)
    window.resize(1280, 800)
    window.show()
    await window.start()
    knowledge = window.knowledge
    # By index: a page not built yet is a placeholder that its first showing replaces.
    pages = list(range(window.pages.count()))
    names = [f"notes-{number:02d}" for number in range(args.databases)]

    async def visit(name: str, query: str, shown: list[int]) -> None:
        await knowledge.choose_database(name)
        knowledge.query_bar.query_edit.setText(query)
        searching = knowledge.searching.search(knowledge.read_inputs())
        if searching is None:
            raise RuntimeError(f"no search started in {name}: no database is chosen")
        await searching
        for page in shown:
            window.pages.setCurrentIndex(page)
            await window.operations.wait_idle()
            await asyncio.sleep(0.05)
            window.pages.setCurrentWidget(knowledge)

    started = time.perf_counter()
    await visit(names[0], QUESTIONS[0], pages[1:])
    found: dict[str, Any] = {"rss_once_mb": await held_mb(window), "rss_by_round_mb": {}}
    growth = PeakGrowth()
    for number, name in enumerate(names, start=1):
        page = pages[1 + (number - 1) % (len(pages) - 1)]
        await visit(name, QUESTIONS[number % len(QUESTIONS)], [page])
        if number in NOTED:
            found["rss_by_round_mb"][str(number)] = round(await held_mb(window), 1)
    found["rss_after_mb"] = await held_mb(window)
    found["rss_by_round_mb"][str(len(names))] = round(found["rss_after_mb"], 1)
    found["peak_growth_mb"] = round(growth.stop(), 1)
    found["seconds"] = round(time.perf_counter() - started, 1)
    window.close()
    window.operations.cancel_all()
    await window.operations.wait_idle()
    await window.aclose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--databases", type=int, required=True)
    run_measured(session(parser.parse_args()))


if __name__ == "__main__":
    main()
