"""The map in the real window, in a process of its own (``bench.map`` starts it): the map of one table is
made as a user sees it made (the PCA map first, then the neighbour layout in its place), then panned and
zoomed step by step the way a drag and the mouse wheel move it, hovered point by point, coloured by a
column and lassoed, while a 10 ms timer on the GUI thread measures its longest gap
(:class:`bench.gap.GapMeter`) and a thread samples the process's anonymous resident memory.

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.map_child --registry DIR --config DIR [--full] [--shots DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import threading
import time
from pathlib import Path
from typing import Any

from bench.gap import GapMeter
from bench.window_child import idle_gap, run_measured

PAN_STEPS = 60
ZOOM_STEPS = 20
HOVER_STEPS = 60
#: A drag or a wheel turn moves the view about every frame.
FRAME_S = 1 / 60
#: Long enough for the picture of the view to be drawn again after the last move, so it is counted too.
SETTLE_S = 0.6
#: How long a map may take to be made here before the run gives up.
MAP_TIMEOUT_S = 900


def trim_heap() -> None:
    """Hand the heap's free pages back to the system (glibc), so the memory measured is what is held."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def anonymous_mb() -> float:
    """The process's anonymous resident memory (heap, arrays; not mapped files such as the vectors' copy)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


class MemorySampler:
    """The largest anonymous resident memory seen, sampled every 20 ms on a thread of its own."""

    def __init__(self) -> None:
        self.peak_mb = anonymous_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak_mb = max(self.peak_mb, anonymous_mb())

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_mb


async def session(args: argparse.Namespace) -> dict[str, Any]:
    from recall_gui.qt import create_window

    window = create_window(args.registry, args.config)
    window.resize(1280, 800)
    window.show()
    await window.start()
    page = window.map
    found: dict[str, Any] = {}
    meter = GapMeter()
    # The vectors are read when the database is chosen (as for a search): the map starts from them.
    services_session = await window.services.session()
    opened = await services_session.tables.open(window.knowledge.target())
    await services_session.vectors.get(opened, wait=True)
    await asyncio.sleep(2)  # whatever the choice of the database started has ended
    gc.collect()
    trim_heap()
    found["vectors_mb"] = anonymous_mb()
    sampler = MemorySampler()
    shown: list[tuple[float, str]] = []
    started = time.perf_counter()
    page.mapShown.connect(lambda: shown.append((time.perf_counter() - started, page.table_map.method)))
    stages: dict[str, float] = {}

    def stage(_value: int) -> None:
        text = page.progress.format().split(" — ")[0].split(" (")[0]
        stages.setdefault(text, round(time.perf_counter() - started, 1))

    page.progress.valueChanged.connect(stage)

    async def make() -> None:
        window.pages.setCurrentWidget(page)
        deadline = time.monotonic() + MAP_TIMEOUT_S
        while not (shown and shown[-1][1] == "tsne"):
            if time.monotonic() > deadline:
                raise TimeoutError("the neighbour layout did not come")
            await asyncio.sleep(0.05)
        await window.operations.wait_idle()
        await asyncio.sleep(SETTLE_S)  # the picture of the view drawn

    found["make_ms"], found["make_gap_ms"] = await meter.measure(make)
    first = [at for at, method in shown if method == "pca"]
    if not first:  # a map read from a cache comes whole: a run's own cache (bench/home.py) is empty
        raise RuntimeError(f"the map was shown without its first (PCA) picture: {shown}")
    found["first_picture_s"] = first[0]
    found["layout_shown_s"] = shown[-1][0]
    found["stage_started_s"] = stages
    found["anon_after_layout_mb"] = anonymous_mb() - found["vectors_mb"]
    view = page.view
    assert view is not None and page.table_map is not None
    found["points"] = len(page.table_map)
    found["how"] = page.table_map.how
    found["status"] = page.status.message
    if args.shots:
        await shoot(window, Path(args.shots), "map")
    box = view.box

    async def pan() -> None:
        (x0, x1), (y0, y1) = box.viewRange()
        for step in range(PAN_STEPS):
            direction = 1 if (step // 15) % 2 == 0 else -1
            box.translateBy(x=direction * (x1 - x0) / 80, y=direction * (y1 - y0) / 120)
            await asyncio.sleep(FRAME_S)
        await asyncio.sleep(SETTLE_S)

    found["pan_ms"], found["pan_gap_ms"] = await meter.measure(pan)
    found["pan_longest_gap"] = meter.longest.to_json() if meter.longest else None

    async def zoom() -> None:
        for step in range(ZOOM_STEPS):
            factor = 0.85 if step < ZOOM_STEPS // 2 else 1 / 0.85
            box.scaleBy((factor, factor))
            await asyncio.sleep(FRAME_S)
        await asyncio.sleep(SETTLE_S)

    found["zoom_ms"], found["zoom_gap_ms"] = await meter.measure(zoom)

    async def hover() -> None:
        from PySide6.QtCore import QPointF

        rect = box.sceneBoundingRect()
        for step in range(HOVER_STEPS):
            spot = QPointF(rect.left() + rect.width() * (step + 0.5) / HOVER_STEPS, rect.center().y())
            view.scene().sigMouseMoved.emit(spot)
            await asyncio.sleep(FRAME_S)
        await asyncio.sleep(SETTLE_S)

    found["hover_ms"], found["hover_gap_ms"] = await meter.measure(hover)
    found["labels_shown"] = view.label_text() != ""
    if args.full:
        await colour_and_lasso(window, meter, found)
        if args.shots:
            await shoot(window, Path(args.shots), "coloured")
    found["anon_peak_growth_mb"] = sampler.stop() - found["vectors_mb"]
    found["idle_gap_ms"] = await idle_gap()
    window.close()
    window.operations.cancel_all()
    await window.operations.wait_idle()
    await window.aclose()
    return found


async def colour_and_lasso(window: Any, meter: GapMeter, found: dict[str, Any]) -> None:
    """Colour by the topic column (twelve values: ten colours and "other"), then lasso the left half."""
    page = window.map
    combo = page.colour_combo

    async def colour() -> None:
        combo.setCurrentIndex(combo.findData("topic"))
        combo.activated.emit(combo.currentIndex())
        await window.operations.wait_idle()
        await asyncio.sleep(SETTLE_S)

    found["colour_ms"], found["colour_gap_ms"] = await meter.measure(colour)
    positions = page.table_map.positions
    (x0, y0), (x1, y1) = positions.min(axis=0), positions.max(axis=0)
    middle = float((x0 + x1) / 2)
    corners = [(float(x0) - 1, float(y0) - 1), (middle, float(y0) - 1), (middle, float(y1) + 1)]
    corners += [(float(x0) - 1, float(y1) + 1)]

    async def lasso() -> None:
        page.view.finish_outline(corners)
        await window.operations.wait_idle()
        await asyncio.sleep(SETTLE_S)

    found["lasso_ms"], found["lasso_gap_ms"] = await meter.measure(lasso)
    found["chosen"] = page.chosen_note.text()


async def shoot(window: Any, folder: Path, name: str) -> None:
    """The window at 1280x800 and at 800x500, as PNG files (in ``folder``, which exists)."""
    for width, height in ((1280, 800), (800, 500)):
        window.resize(width, height)
        await asyncio.sleep(1.5)  # laid out, and the picture of the new view drawn
        window.grab().save(str(folder / f"{name}-{width}x{height}.png"))
    window.resize(1280, 800)
    await asyncio.sleep(1.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--full", action="store_true", help="also colour by a column and lasso")
    parser.add_argument("--shots", help="save screenshots of the map in this folder")
    args = parser.parse_args()
    if args.shots:
        Path(args.shots).mkdir(parents=True, exist_ok=True)
    run_measured(session(args))


if __name__ == "__main__":
    main()
