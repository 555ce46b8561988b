"""The window's part of the benchmark, run in a process of its own (``bench.window`` starts it).

One session in the real window, driven the way a user drives it, on the benchmark's registry:

1. ``end_to_end``: on the 100k table, query text -> the rows in the results model (the search the
   Enter key starts: embedding, search, table model, first row shown in the detail), beside its floor
   (the same model embedding the same text plus NumPy's exact top-k), alternately, in this process,
   each after the window has painted the previous one's results.
2. ``search_1m``: the 1M table is chosen, searched while its vectors are read in the background, the
   read is awaited, then searched again; a 10 ms timer on the GUI thread measures the longest time it
   went unserved in each phase.
3. ``browse_1m``: the 1M table with an empty query (browse), scrolled to its last row page by page,
   then to 50 random rows; the longest timer gap, and the process's RSS before and after.

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.window_child --registry DIR --config DIR --vectors-100k FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Coroutine
from typing import Any

import numpy as np

from bench.data import QUESTIONS
from bench.end_to_end import TOP_K, floors
from bench.gap import GapMeter, GapParts
from bench.timing import side_by_side

SMALL, LARGE = "rows_100k", "rows_1m"
#: Searches on the 1M table once its vectors are in memory.
WARM_SEARCHES_1M = 10
RANDOM_JUMPS = 50
#: Idle time before each timed query: the window paints the previous results first, as it has long
#: done by the time a user types the next query (else that paint is charged to the next search).
SETTLE_S = 0.03


def _note_host(found: dict[str, Any], phase: str, meter: GapMeter) -> None:
    """What helps read a phase's longest gap: what it was made of, how many gaps exceeded 50 ms, and
    the host's steal over the whole phase."""
    _note_longest(found, phase, meter.longest)
    found[f"{phase}_gaps_over_50ms"] = meter.gaps_over_50_ms
    if meter.steal_ms is not None:
        found[f"{phase}_host_steal_ms"] = meter.steal_ms


def _note_longest(found: dict[str, Any], phase: str, longest: GapParts | None) -> None:
    if longest is not None:
        found[f"{phase}_longest_gap"] = longest.to_json()


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


async def end_to_end(window: Any, vectors_path: str) -> dict[str, Any]:
    page = window.knowledge
    await page.choose_database(SMALL)
    harness = await window.services.harness()
    entry = harness.resolve_active(SMALL)
    embedder = await harness.session.models.get(entry.embedder, 384)
    matrix = np.load(vectors_path)
    model = page.results.results_model

    async def subject(text: str) -> None:
        page.query_bar.query_edit.setText(text)
        await page.searching.search(page.read_inputs())
        if model.rowCount() != TOP_K:
            raise RuntimeError(f"expected {TOP_K} rows in the results model, found {model.rowCount()}")

    floor, einsum_floor = floors(embedder, matrix)

    async def painted() -> None:
        await asyncio.sleep(SETTLE_S)

    await subject("warm up: the model and the vectors in memory")
    pair = await side_by_side(
        list(QUESTIONS), subject, floor, rounds=3, others={"einsum": einsum_floor}, settle=painted
    )
    # The rows shown are the core's answer to the same query.
    shown = [model.hit(row).id for row in range(model.rowCount())]
    core = await harness.search_database(entry, QUESTIONS[-1], TOP_K)
    return {
        "value_ms": pair.value_ms,
        "floor_ms": min(pair.floor_ms, pair.others_ms["einsum"]),
        "runs": pair.runs,
        "method": model.result.method if model.result else None,
        "rows_match_core": shown == [hit.id for hit in core.result.hits],
    }


async def search_1m(window: Any) -> dict[str, Any]:
    page = window.knowledge
    vectors = (await window.services.session()).vectors
    meter = GapMeter()
    found: dict[str, Any] = {}
    found["choose_ms"], found["choose_gap_ms"] = await meter.measure(lambda: page.choose_database(LARGE))
    _note_host(found, "choose", meter)

    async def one_search(text: str) -> None:
        page.query_bar.query_edit.setText(text)
        await page.searching.search(page.read_inputs())

    found["first_search_ms"], found["first_search_gap_ms"] = await meter.measure(
        lambda: one_search(QUESTIONS[0])
    )
    _note_host(found, "first_search", meter)
    result = page.results.results_model.result
    found["first_search_method"] = result.method if result else None

    async def vectors_read() -> None:
        while not any(key[1] == LARGE for key in vectors.cached_versions()):
            await one_search(QUESTIONS[1])  # a user searching on meanwhile

    found["reading_ms"], found["reading_gap_ms"] = await meter.measure(vectors_read)
    _note_host(found, "reading", meter)
    durations, gaps, parts = [], [], []
    for text in QUESTIONS[2 : 2 + WARM_SEARCHES_1M]:
        duration, gap = await meter.measure(lambda text=text: one_search(text))  # type: ignore[misc]
        durations.append(duration)
        gaps.append(gap)
        parts.append(meter.longest)
    result = page.results.results_model.result
    found["warm_search_ms"] = float(np.median(durations))
    found["warm_search_gap_ms"] = max(gaps)
    _note_longest(found, "warm_search", parts[int(np.argmax(gaps))])
    found["warm_method"] = result.method if result else None
    return found


async def browse_1m(window: Any) -> dict[str, Any]:
    from PySide6.QtCore import QModelIndex

    page = window.knowledge
    page.query_bar.query_edit.clear()
    await page.browser.browse(page.read_inputs())
    model, view = page.browse_model, page.results.browse_table
    total = model.total or 0
    arrived = asyncio.Event()
    model.pageLoaded.connect(arrived.set)
    found: dict[str, Any] = {"rows": total, "rss_before_mb": rss_mb()}
    meter = GapMeter()

    async def scroll_to_the_end() -> None:
        bar = view.verticalScrollBar()
        while model.rowCount() < total:
            arrived.clear()
            bar.setValue(bar.maximum())  # the view asks for more rows when it reaches the end
            if model.canFetchMore(QModelIndex()):
                model.fetchMore(QModelIndex())
            await asyncio.wait_for(arrived.wait(), 30)
        await asyncio.sleep(0.05)  # the last page painted

    found["scroll_ms"], found["scroll_gap_ms"] = await meter.measure(scroll_to_the_end)
    _note_host(found, "scroll", meter)
    found["rss_after_scroll_mb"] = rss_mb()
    found["pages_held"] = model.cache.pages_held
    rng = np.random.default_rng(7)

    async def jump_around() -> None:
        for row in rng.integers(0, total, RANDOM_JUMPS):
            view.scrollTo(model.index(int(row), 0))
            deadline = time.perf_counter() + 30
            while model.item(int(row)) is None:  # painting the rows asks for their page
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"row {row} never arrived")
                await asyncio.sleep(0.002)

    found["jumps_ms"], found["jumps_gap_ms"] = await meter.measure(jump_around)
    _note_host(found, "jumps", meter)
    found["rss_after_mb"] = rss_mb()
    return found


async def idle_gap(seconds: float = 2.0) -> float:
    """The longest gap of the same timer in an idle window: the floor of every gap measured here."""
    meter = GapMeter()
    _duration, gap = await meter.measure(lambda: asyncio.sleep(seconds))
    return gap


async def session(args: argparse.Namespace) -> dict[str, Any]:
    from recall_gui.qt import create_window

    window = create_window(args.registry, args.config)
    window.resize(1280, 800)
    window.show()
    await window.start()
    measured: dict[str, Any] = {"end_to_end": await end_to_end(window, args.vectors_100k)}
    measured["search_1m"] = await search_1m(window)
    measured["browse_1m"] = await browse_1m(window)
    measured["idle_gap_ms"] = await idle_gap()
    window.close()
    window.operations.cancel_all()
    await window.operations.wait_idle()
    await window.aclose()
    return measured


def run_measured(measuring: Coroutine[Any, Any, dict[str, Any]]) -> None:
    """Run ``measuring`` on a Qt event loop set up as the app sets itself up, print what it measured as one
    JSON line, and leave the process at once."""
    import qasync
    from PySide6.QtWidgets import QApplication

    from recall_gui.qt.app import configure_qt_process

    configure_qt_process()  # as the app sets itself up

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        measured = loop.run_until_complete(measuring)
    finally:
        loop.close()
    print(json.dumps(measured), flush=True)
    # Skip the interpreter's teardown: it would destroy Qt objects after the QApplication, which can
    # crash at exit in ways that say nothing about the app (its own exit is tested by the smoke run).
    sys.stderr.flush()
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--vectors-100k", required=True)
    # The tables' names (a toy run's tables are smaller, and named after their size).
    parser.add_argument("--small", default=SMALL)
    parser.add_argument("--large", default=LARGE)
    parser.add_argument("--jumps", type=int, default=RANDOM_JUMPS)
    args = parser.parse_args()
    globals().update(SMALL=args.small, LARGE=args.large, RANDOM_JUMPS=args.jumps)

    run_measured(session(args))


if __name__ == "__main__":
    main()
