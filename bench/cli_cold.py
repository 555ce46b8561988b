"""``cli_cold_list_ms`` and ``cli_cold_search_ms``: a fresh ``recall-gui list`` and a fresh ``recall-gui
search``, each from its process's start to its printed output, on a registry of one active 2,000-row
table (what a user, a script or an agent's shell pays for one command).

The processes alternate, each run once untimed first (bytecode compiled, files in the page cache), and
the medians of :data:`RUNS` runs are kept; ``python -c pass`` is reported beside them. The goals are
absolute: the figures are for a quiet machine (docs/PERFORMANCE_LOG.md#the-command-line).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from bench import data
from bench.context import BenchContext
from bench.data import QUESTIONS
from bench.fresh_search import alternating_runs, recall_gui_command, time_process, write_registry
from bench.results import Metric

RUNS = 7
TABLE_ROWS = 2_000
GOAL_LIST_MS = 400
GOAL_SEARCH_MS = 1_200


def run(ctx: BenchContext) -> list[Metric]:
    table = ctx.table(TABLE_ROWS)
    registry = write_registry(table.db_dir, table.name, data.DATA_DIR / "cli_registry")
    home = Path(tempfile.mkdtemp(prefix="cli-cold-"))
    env = dict(os.environ) | {
        "RECALL_GUI_CONFIG_DIR": str(home / "config"),
        "RECALL_GUI_DATA_DIR": str(home / "data"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = recall_gui_command()
    listing = [*command, "list", "--registry", str(registry)]
    search = [*command, "search", "--registry", str(registry), "--db", table.name]
    commands = {
        "list": lambda i: time_process(listing, env, table.name),
        "search": lambda i: time_process([*search, QUESTIONS[i % len(QUESTIONS)]], env, '"results"'),
        "pass": lambda i: time_process([sys.executable, "-c", "print('ok')"], env, "ok"),
    }
    times = alternating_runs(commands, ctx.size.count(RUNS))
    median = {key: statistics.median(values) for key, values in times.items()}
    extra = {"table_rows": table.rows, "python_c_pass_ms": round(median["pass"], 1)}
    return [
        Metric(
            "cli_cold_list_ms",
            median["list"],
            "ms",
            goal=f"<= {GOAL_LIST_MS} ms",
            met=median["list"] <= GOAL_LIST_MS,
            extra={**extra, "runs_ms": [round(v) for v in times["list"]]},
        ),
        Metric(
            "cli_cold_search_ms",
            median["search"],
            "ms",
            goal=f"<= {GOAL_SEARCH_MS} ms",
            met=median["search"] <= GOAL_SEARCH_MS,
            extra={**extra, "runs_ms": [round(v) for v in times["search"]]},
        ),
    ]
