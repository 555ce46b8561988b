"""``startup``: from the app's process start to its window shown and taking keys, beside a bare PySide6
window's, in alternating fresh processes on the window group's registry and display
(:mod:`bench.window_startup`, :func:`bench.window.measure_startup`). ``python -m bench --only startup``
measures it alone.
"""

from __future__ import annotations

from bench import window
from bench.context import BenchContext
from bench.results import Metric


def run(ctx: BenchContext) -> list[Metric]:
    registry = window.write_registry(ctx)
    with window.display() as (environment, kind):
        startup = window.measure_startup(registry, environment, 1 if ctx.size.toy else window.STARTUP_RUNS)
    return [window.startup_metric(startup, kind)]
