"""``window_registry_50k``: the window on a registry of 50,000 databases — from process start to the
end of its start-up (every database listed, one chosen), the longest its GUI thread stalls meanwhile,
and the longest stall of an F5 (the registry read again and shown, its health checks under way).

The databases' folders do not exist (each health check fails at once, as for a registry that outlived its
folders); what is measured is the window's handling of the registry, not 50,000 tables. Runs in a process
of its own (:mod:`bench.large_registry_child`) on the display :mod:`bench.window` chooses, with the app's
bytecode compiled, its age read on the kernel's own clock (:mod:`bench.process_age`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import data
from bench.context import BenchContext
from bench.registry_load import write_big_registry
from bench.results import Metric
from bench.window import ROOT, compile_app, display

ENTRIES = 50_000
GOAL_START_S = 2.0
GOAL_RELOAD_STALL_MS = 100.0


def measure(registry: Path, environment: dict[str, str], reloads: int = 3) -> dict[str, object]:
    import json
    import subprocess
    import sys

    compile_app()  # started as installed, not compiling the app's modules from source
    with tempfile.TemporaryDirectory(prefix="recall-gui-large-") as config:
        command = [sys.executable, "-m", "bench.large_registry_child", "--registry", str(registry)]
        command += ["--reloads", str(reloads)]
        done = subprocess.run(
            [*command, "--config", config],
            capture_output=True,
            text=True,
            timeout=600,
            env={**environment, "RECALL_GUI_CONFIG_DIR": config},
            cwd=ROOT,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"bench.large_registry_child failed:\n{done.stderr[-4000:]}")
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def run(ctx: BenchContext) -> list[Metric]:
    entries = ctx.size.rows(ENTRIES)
    registry = data.DATA_DIR / f"registry-{entries}"
    if not (registry / "rag_dbs.json").exists():
        write_big_registry(registry, entries)
    with display() as (environment, kind):
        found = measure(registry, environment, ctx.size.count(3))
    start_s, stall_ms = float(found["start_s"]), float(found["reload_stall_ms"])  # type: ignore[arg-type]
    common = {"entries": entries, "listed": found["listed"], "display": kind}
    return [
        Metric(
            "window_registry_50k_start",
            start_s * 1000,
            "ms",
            None,
            f"<= {GOAL_START_S * 1000:g} ms",
            start_s <= GOAL_START_S and found["listed"] == entries,
            {
                **common,
                "scope": "process start -> start-up done (every database listed, one chosen)",
                "gui_max_gap_ms": round(float(found["start_stall_ms"]), 1),  # type: ignore[arg-type]
            },
        ),
        Metric(
            "window_registry_50k_reload_stall",
            stall_ms,
            "ms",
            None,
            f"<= {GOAL_RELOAD_STALL_MS:g} ms",
            stall_ms <= GOAL_RELOAD_STALL_MS,
            {
                **common,
                "scope": "F5: the longest GUI-thread gap until the registry is shown again, plus 1 s",
                "reload_shown_ms": round(float(found["reload_shown_ms"]), 1),  # type: ignore[arg-type]
                "rounds": found["reloads"],
            },
        ),
    ]
