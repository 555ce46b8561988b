"""The window's metrics: ``end_to_end_100k`` (to the rows in the results model), ``gui_max_gap_ms`` and
``browse_1m_rss_mb``; ``startup`` is its own group (:mod:`bench.startup`), measured the same way.

Each runs the real window in processes of its own: start-up is measured from process creation (imports
are what it costs), and the session (:mod:`bench.window_child`) must not share Qt or the exact-search
memory with the other groups. The window needs a display: the one in ``DISPLAY`` if set, else a private
Xvfb server when ``Xvfb`` is installed (what docs/PERFORMANCE.md's numbers use), else Qt's offscreen platform
(which draws less, so it flatters the gaps a little).
"""

from __future__ import annotations

import compileall
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import window_startup
from bench.context import BenchContext
from bench.results import Metric

STARTUP_RUNS = 7
GOAL_STARTUP = 1.5
GOAL_END_TO_END = 1.3
GOAL_GAP_MS = 50.0
GOAL_RSS_MB = 150.0
#: The phases of the session whose longest timer gap counts towards ``gui_max_gap_ms``.
SEARCH_PHASES = ("choose", "first_search", "reading", "warm_search")
BROWSE_PHASES = ("scroll", "jumps")
ROOT = Path(__file__).resolve().parents[1]


def run(ctx: BenchContext) -> list[Metric]:
    registry = write_registry(ctx)
    with display() as (environment, kind):
        session = run_session(ctx, registry, environment)
    return metrics(session, kind)


def write_registry(ctx: BenchContext) -> Path:
    """A cosh registry with the 100k and the 1M tables as active databases (names = table names)."""
    tables = [ctx.table(100_000), ctx.table(1_000_000)]
    directory = ctx.registry_dir / "window"
    directory.mkdir(parents=True, exist_ok=True)
    entries = [
        {
            "name": table.name,
            "uri": str(table.db_dir),
            "description": f"{table.rows:,} benchmark rows derived from Python's documentation",
            "embedder": {"Local": {"model": "AllMiniLML6V2"}},
            "created_at": 1_760_000_000_000,
        }
        for table in tables
    ]
    (directory / "rag_dbs.json").write_text(json.dumps({"dbs": entries}, indent=2), encoding="utf-8")
    names = [table.name for table in tables]
    (directory / "rag_active.json").write_text(json.dumps(names), encoding="utf-8")
    return directory


@contextlib.contextmanager
def display() -> Iterator[tuple[dict[str, str], str]]:
    """Environment for the window's processes, and what kind of display it names."""
    environment = dict(os.environ)
    environment.pop("QT_QPA_PLATFORM", None)
    if environment.get("DISPLAY"):
        yield environment, "display"
        return
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        environment["QT_QPA_PLATFORM"] = "offscreen"
        yield environment, "offscreen"
        return
    number = 90 + os.getpid() % 100
    server = subprocess.Popen(
        [xvfb, f":{number}", "-screen", "0", "1920x1080x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not Path(f"/tmp/.X11-unix/X{number}").exists():
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Xvfb :{number} did not start")
            time.sleep(0.05)
        environment["DISPLAY"] = f":{number}"
        yield environment, "xvfb"
    finally:
        server.terminate()
        server.wait(10)


def _child(command: list[str], environment: dict[str, str], timeout: float) -> dict[str, Any]:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=environment, cwd=ROOT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[1:4])} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def compile_app() -> None:
    """Compile the app's bytecode, as installing it does: a start measured otherwise includes compiling
    every module from source when ``PYTHONDONTWRITEBYTECODE`` is set (0.1-0.3 s on the bench machine)."""
    compileall.compile_dir(ROOT / "recall_gui", quiet=1)


def measure_startup(registry: Path, environment: dict[str, str], runs_wanted: int) -> dict[str, list[float]]:
    """Alternating runs of the app and of a bare PySide6 window (:mod:`bench.window_startup`).

    The app is started as installed: with its bytecode compiled (:func:`compile_app`), as pip compiles a
    wheel it installs and the packaged build ships it.
    """
    compile_app()
    runs: dict[str, list[float]] = {"bare": [], "app": [], "loaded": [], "loading_gap": []}
    for _ in range(runs_wanted):
        with tempfile.TemporaryDirectory(prefix="recall-gui-startup-") as config:
            child_env = {**environment, "RECALL_GUI_CONFIG_DIR": config}
            runs["bare"].append(window_startup.measure_once("bare", None, child_env)["ready_s"])
            app = window_startup.measure_once("app", str(registry), child_env)
        runs["app"].append(app["ready_s"])
        runs["loaded"].append(app["libraries_loaded_s"])
        runs["loading_gap"].append(app["max_gap_while_loading_ms"])
    return runs


def run_session(ctx: BenchContext, registry: Path, environment: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recall-gui-bench-") as config:
        command = [
            sys.executable,
            "-m",
            "bench.window_child",
            "--registry",
            str(registry),
            "--config",
            config,
            "--vectors-100k",
            str(ctx.table(100_000).vectors_path),
            "--small",
            ctx.table(100_000).name,
            "--large",
            ctx.table(1_000_000).name,
            "--jumps",
            str(ctx.size.count(50)),
        ]
        return _child(command, {**environment, "RECALL_GUI_CONFIG_DIR": config}, 1200)


def startup_metric(startup: dict[str, list[float]], kind: str) -> Metric:
    """``startup``: the median start of the app beside the median bare window's."""
    bare, app = statistics.median(startup["bare"]), statistics.median(startup["app"])
    return Metric(
        "startup",
        app * 1000,
        "ms",
        bare * 1000,
        f"ratio <= {GOAL_STARTUP}",
        app / bare <= GOAL_STARTUP,
        {
            "scope": "process start -> window exposed and handling input, vs a bare PySide6 window",
            "display": kind,
            "libraries_loaded_ms": round(statistics.median(startup["loaded"]) * 1000, 1),
            "max_gap_while_loading_ms": round(statistics.median(startup["loading_gap"]), 1),
            "app_runs_ms": [round(v * 1000) for v in startup["app"]],
            "bare_runs_ms": [round(v * 1000) for v in startup["bare"]],
        },
    )


def metrics(session: dict[str, Any], kind: str) -> list[Metric]:
    end_to_end, search, browse = session["end_to_end"], session["search_1m"], session["browse_1m"]
    search_gap = max(search[f"{phase}_gap_ms"] for phase in SEARCH_PHASES)
    browse_gap = max(browse[f"{phase}_gap_ms"] for phase in BROWSE_PHASES)
    gap = max(search_gap, browse_gap)
    phases = {**search, **browse}
    worst = max((*SEARCH_PHASES, *BROWSE_PHASES), key=lambda phase: phases[f"{phase}_gap_ms"])
    growth = browse["peak_growth_mb"]
    e2e_ratio = end_to_end["value_ms"] / end_to_end["floor_ms"]
    return [
        Metric(
            "end_to_end_100k",
            end_to_end["value_ms"],
            "ms",
            end_to_end["floor_ms"],
            f"ratio <= {GOAL_END_TO_END}",
            e2e_ratio <= GOAL_END_TO_END and bool(end_to_end["rows_match_core"]),
            {
                "scope": "query text -> rows in the window's results model (embed, search, model, detail)",
                "method": end_to_end["method"],
                "rows_match_core": end_to_end["rows_match_core"],
                "runs": end_to_end["runs"],
                "display": kind,
            },
        ),
        Metric(
            "gui_max_gap_ms",
            gap,
            "ms",
            session["idle_gap_ms"],
            f"<= {GOAL_GAP_MS:g} ms",
            gap <= GOAL_GAP_MS,
            {
                "floor_is": "the same 10 ms timer's longest gap in the idle window",
                "search_1m_gap_ms": round(search_gap, 1),
                "browse_1m_gap_ms": round(browse_gap, 1),
                "longest_gap": {"phase": worst, **(phases.get(f"{worst}_longest_gap") or {})},
                "search_1m": _rounded(search),
                "browse_1m": _rounded(browse),
                "display": kind,
            },
        ),
        Metric(
            "browse_1m_rss_mb",
            growth,
            "MB",
            None,
            f"<= {GOAL_RSS_MB:g} MB",
            growth <= GOAL_RSS_MB,
            {
                "scope": "peak RSS above the RSS at the first page, while scrolling to the last of 1M rows "
                "and jumping to 50 random rows (bench/memory.py: never negative)",
                "rows": browse["rows"],
                "rss_before_mb": round(browse["rss_before_mb"], 1),
                "rss_after_scroll_mb": round(browse["rss_after_scroll_mb"], 1),
                "rss_after_mb": round(browse["rss_after_mb"], 1),
                "peak_growth_after_scroll_mb": round(browse["peak_growth_after_scroll_mb"], 1),
                "pages_held": browse["pages_held"],
            },
        ),
    ]


def _rounded(values: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 1) if isinstance(v, float) else v for k, v in values.items()}
