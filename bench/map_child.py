"""The map in the real window, in a process of its own (``bench.map`` starts it): the 100k table's PCA map
is drawn, then panned and zoomed step by step the way a drag and the mouse wheel move it, while a 10 ms
timer on the GUI thread measures its longest gap (:class:`bench.gap.GapMeter`).

Prints one JSON object (the measurements) as its last line of output.

    python -m bench.map_child --registry DIR --config DIR
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from bench.gap import GapMeter
from bench.window_child import idle_gap, run_measured

PAN_STEPS = 60
ZOOM_STEPS = 20
#: A drag or a wheel turn moves the view about every frame.
FRAME_S = 1 / 60
#: Longer than the map's rest delay, so the full redraw after a move falls inside the measurement.
SETTLE_S = 0.4


async def session(args: argparse.Namespace) -> dict[str, Any]:
    from recall_gui.qt import create_window

    window = create_window(args.registry, args.config)
    window.resize(1280, 800)
    window.show()
    await window.start()
    page = window.map
    shown = asyncio.Event()
    page.mapShown.connect(shown.set)
    meter = GapMeter()
    found: dict[str, Any] = {}

    async def draw() -> None:
        window.pages.setCurrentWidget(page)
        await asyncio.wait_for(shown.wait(), 600)
        await asyncio.sleep(0.2)  # painted

    found["draw_ms"], found["draw_gap_ms"] = await meter.measure(draw)
    if meter.longest is not None:
        found["draw_longest_gap"] = meter.longest.to_json()
    view = page.view
    assert view is not None and page.table_map is not None
    found["points"] = view.points_drawn
    box = view.box

    async def pan() -> None:
        (x0, x1), (y0, y1) = box.viewRange()
        for step in range(PAN_STEPS):
            direction = 1 if (step // 15) % 2 == 0 else -1
            box.translateBy(x=direction * (x1 - x0) / 80, y=direction * (y1 - y0) / 120)
            await asyncio.sleep(FRAME_S)
        await asyncio.sleep(SETTLE_S)  # every point drawn again once the view rests: counted too

    found["pan_ms"], found["pan_gap_ms"] = await meter.measure(pan)
    if meter.longest is not None:
        found["pan_longest_gap"] = meter.longest.to_json()

    async def zoom() -> None:
        for step in range(ZOOM_STEPS):
            factor = 0.85 if step < ZOOM_STEPS // 2 else 1 / 0.85
            box.scaleBy((factor, factor))
            await asyncio.sleep(FRAME_S)
        await asyncio.sleep(SETTLE_S)

    found["zoom_ms"], found["zoom_gap_ms"] = await meter.measure(zoom)
    if meter.longest is not None:
        found["zoom_longest_gap"] = meter.longest.to_json()
    found["idle_gap_ms"] = await idle_gap()
    window.close()
    window.tasks.cancel_all()
    await window.tasks.wait_idle()
    await window.aclose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", required=True)
    parser.add_argument("--config", required=True)
    args = parser.parse_args()

    run_measured(session(args))


if __name__ == "__main__":
    main()
