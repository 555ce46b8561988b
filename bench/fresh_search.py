"""``fresh_search_vs_lsql`` and ``fresh_search``: a fresh ``recall-gui search`` process, from its start to
its printed result, on the 100k table.

- ``fresh_search_vs_lsql``: beside lsql 3.0.0 (the LanceDB terminal UI) from a fresh process to its first
  result on the same table, in the same run (reported: its goal of a fifth of it is retired, the cold
  command line's figures of :mod:`bench.cli_cold` replace it). lsql is installed into the
  benchmark's own environment (``bench/data/lsql-venv``), never into the app's. It is driven headless as
  a user drives it (Textual's test pilot, no terminal): started on the database folder, the table chosen
  in its table list with the keyboard, timed until the rows of that table's preview (``select * ...
  limit 100``, run by DuckDB) are in its results table. lsql's own vector search cannot run here:
  it embeds with sentence-transformers (PyTorch), loading the model from the Hugging Face hub, which this
  machine cannot reach; so lsql is installed without sentence-transformers, which its first result never
  imports (docs/PERFORMANCE_LOG.md#fresh-process).
- ``fresh_search``: beside its floor, a fresh interpreter importing what a search needs (LanceDB as the
  app loads it, NumPy, PyArrow, onnxruntime and tokenizers: the packaged model's queries need no
  fastembed); ``python -c pass`` is reported too.

Processes alternate, each measured from its start to its output; medians of :data:`RUNS` runs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

from bench import data
from bench.context import BenchContext
from bench.data import QUESTIONS
from bench.results import Metric
from recall_gui.core.search.preloading import SEARCH_MODULES

RUNS = 5
LSQL = "lsql==3.0.0"
#: lsql 3.0.0's requirements, less sentence-transformers (PyTorch and a model from the hub, used only by
#: its /embedding and /search-* commands, neither of which can run offline).
LSQL_REQUIREMENTS = (
    "lancedb>=0.39.0",
    "duckdb>=1.5.0",
    "pandas>=1.0.0",
    "pyarrow>=14.0.0",
    "typer>=0.27.0",
    "rich>=15.0.0",
    "textual>=8.2.0",
)
TABLE_ROWS = 100_000

#: Runs inside lsql's environment: start the app on the database, click the table, wait for its rows.
LSQL_DRIVER = textwrap.dedent(
    """
    import asyncio, sys
    from lsql.tui.app import LanceDBApp

    async def main():
        app = LanceDBApp(initial_db_path=sys.argv[1])
        async with app.run_test(headless=True, size=(160, 48)) as pilot:
            while not app.query("#table-list ListItem"):
                await pilot.pause(0.005)
            tables = app.query_one("#table-list")
            tables.focus()  # the table list, where a user picks the table
            await pilot.pause()
            if tables.index is None:
                await pilot.press("down")
            await pilot.press("enter")
            rows = app.query_one("#results-table")
            while not (rows.display and rows.row_count):
                await pilot.pause(0.005)
            print("first result:", rows.row_count, "rows", flush=True)
            app.exit()

    asyncio.run(main())
    """
)

FLOOR_IMPORTS = (
    "from recall_gui.core.base.compat import defer_lance_rest_client; defer_lance_rest_client(); "
    f"import {', '.join(SEARCH_MODULES)}"
)


def lsql_python() -> Path:
    """lsql's interpreter in the benchmark's own environment, installed once."""
    venv = data.DATA_DIR / "lsql-venv"
    python, stamp = venv / "bin" / "python", venv / "installed.json"
    wanted = {"lsql": LSQL, "requirements": list(LSQL_REQUIREMENTS)}
    if python.exists() and stamp.exists() and json.loads(stamp.read_text()) == wanted:
        return python
    print(f"  installing {LSQL} into {venv} (once) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--no-deps", LSQL], check=True)
    subprocess.run([*pip, *LSQL_REQUIREMENTS], check=True)
    stamp.write_text(json.dumps(wanted))
    return python


def table_folder(ctx: BenchContext) -> tuple[Path, str]:
    """A database folder holding the 100k table alone (lsql lists, and registers for SQL, every table of
    the folder it opens; the benchmark's own folder holds many)."""
    table = ctx.table(TABLE_ROWS)
    folder = data.DATA_DIR / "fresh_db"
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / f"{table.name}.lance"
    if not link.exists():
        link.symlink_to(table.db_dir / f"{table.name}.lance", target_is_directory=True)
    return folder, table.name


def write_registry(folder: Path, name: str, registry: Path | None = None) -> Path:
    """A cosh registry (``registry``, default ``bench/data/fresh_registry``) listing table ``name`` of
    ``folder`` as its one active database."""
    registry = registry or data.DATA_DIR / "fresh_registry"
    registry.mkdir(parents=True, exist_ok=True)
    entry = {
        "name": name,
        "uri": str(folder),
        "description": "benchmark rows derived from Python's documentation",
        "embedder": {"Local": {"model": "AllMiniLML6V2"}},
        "created_at": 1_760_000_000_000,
    }
    (registry / "rag_dbs.json").write_text(json.dumps({"dbs": [entry]}, indent=2), encoding="utf-8")
    (registry / "rag_active.json").write_text(json.dumps([name]), encoding="utf-8")
    return registry


def recall_gui_command() -> list[str]:
    """The installed `recall-gui` command beside this interpreter (as a user runs it)."""
    script = Path(sys.executable).with_name("recall-gui")
    return [str(script)] if script.exists() else [sys.executable, "-m", "recall_gui"]


def alternating_runs(commands: dict[str, Callable[[int], float]], runs: int) -> dict[str, list[float]]:
    """Each command once untimed (bytecode compiled, files in the page cache), then ``runs`` timed rounds,
    each starting one command later, so that no command always runs after the same one."""
    for command in commands.values():
        command(0)
    times: dict[str, list[float]] = {key: [] for key in commands}
    names = list(commands)
    for i in range(runs):
        for key in names[i % len(names) :] + names[: i % len(names)]:
            times[key].append(commands[key](i))
    return times


def time_process(argv: list[str], env: dict[str, str], expect: str) -> float:
    """Milliseconds from starting ``argv`` until its output holds ``expect`` (then it may finish alone)."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    output = ""
    for line in process.stdout:
        output += line
        if expect in output:
            break
    elapsed = (time.perf_counter() - started) * 1000
    _, errors = process.communicate(timeout=120)
    if expect not in output:
        raise RuntimeError(f"{argv[0]} printed no {expect!r}: {errors[-2000:]}")
    return elapsed


def run(ctx: BenchContext) -> list[Metric]:
    folder, name = table_folder(ctx)
    registry = write_registry(folder, name)
    # A toy run leaves lsql out: installing it takes minutes, and its figure is not kept anyway.
    lsql = None if ctx.size.toy else lsql_python()
    home = Path(tempfile.mkdtemp(prefix="fresh-search-"))
    env = dict(os.environ) | {
        "RECALL_GUI_CONFIG_DIR": str(home / "config"),
        "RECALL_GUI_DATA_DIR": str(home / "data"),
        "HOME": str(home),  # lsql keeps its histories there
        "PYTHONDONTWRITEBYTECODE": "",
    }
    env.pop("PYTHONDONTWRITEBYTECODE")
    search = [*recall_gui_command(), "search", "--registry", str(registry), "--db", name]
    commands = {
        "search": lambda i: time_process([*search, QUESTIONS[i % len(QUESTIONS)]], env, '"results"'),
        "floor": lambda i: time_process([sys.executable, "-c", FLOOR_IMPORTS + "; print('ok')"], env, "ok"),
        "pass": lambda i: time_process([sys.executable, "-c", "print('ok')"], env, "ok"),
    }
    if lsql is not None:
        commands["lsql"] = lambda i: time_process(
            [str(lsql), "-c", LSQL_DRIVER, str(folder)], env, "first result:"
        )
    times = alternating_runs(commands, ctx.size.count(RUNS))
    median = {key: statistics.median(values) for key, values in times.items()}
    spread = {f"{key}_ms_runs": [round(v) for v in values] for key, values in times.items()}
    fresh = Metric(
        "fresh_search",
        median["search"],
        "ms",
        floor=median["floor"],
        goal="(reported) vs python + the imports a search needs",
        extra={"python_c_pass_ms": round(median["pass"], 1), "floor_imports": FLOOR_IMPORTS},
    )
    if lsql is None:
        return [fresh]
    return [
        Metric(
            "fresh_search_vs_lsql",
            median["search"],
            "ms",
            floor=median["lsql"],
            goal="(reported) vs lsql's first result",
            extra={"table_rows": TABLE_ROWS, "lsql": LSQL, **spread},
        ),
        fresh,
    ]
