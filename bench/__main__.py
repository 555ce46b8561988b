"""``make bench`` / ``python -m bench [--only GROUP,...]``: build the data, measure, print, write results.

Each metric group is a module with ``run(ctx) -> list[Metric]``; add a group by adding a module and one
line to :data:`GROUPS`. Results of every group go through the one writer in :mod:`bench.results`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import data, home, report
from bench.context import BenchContext, BenchSize, machine
from bench.results import RESULTS_PATH, Metric, format_table, provenance, write_results

#: Real passages embedded for a smoke run's data (the real run embeds 2000, which takes ~40 s).
SMOKE_PASSAGES = 200

#: Metric groups in the order they run: name -> module (each has ``run(ctx) -> list[Metric]``).
GROUPS: dict[str, str] = {
    "exact_search": "bench.exact_search",
    "certified": "bench.certified_search",
    "batched_checks": "bench.batched_checks",
    "indexed_search": "bench.indexed_search",
    "end_to_end": "bench.end_to_end",
    "duplicates": "bench.duplicates",
    "ray_duplicates": "bench.ray_duplicates",
    "startup": "bench.startup",
    "window": "bench.window",
    "window_memory": "bench.window_memory",
    "registry_load": "bench.registry_load",
    "large_registry": "bench.large_registry",
    "fresh_search": "bench.fresh_search",
    "cli": "bench.cli_cold",
    "filters": "bench.filter_search",
    "mcp": "bench.agent_first_call",
    "map": "bench.map",
    "health": "bench.health_scan",
    "health_reading": "bench.health_reading",
    "models": "bench.models",
    "reach_100k": "bench.reach",
    "reach_embed_qps": "bench.reach_embedding",
    "review_1m": "bench.review",
    "lance_arithmetic": "bench.lance_arithmetic",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--only", help=f"comma-separated groups to run (of: {', '.join(GROUPS)})")
    parser.add_argument(
        "--repeat", type=int, default=1, help="run the groups N times and keep each metric's median run"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="every group at toy size, on data of its own in a temporary folder, in seconds: checks that "
        "each benchmark runs; writes no results",
    )
    args = parser.parse_args(argv)
    selected = list(GROUPS) if not args.only else [name.strip() for name in args.only.split(",")]
    unknown = [name for name in selected if name not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; the groups are {', '.join(GROUPS)}")
    if args.smoke:
        toy_data = Path(tempfile.mkdtemp(prefix="recall-gui-bench-smoke-"))
        data.use(toy_data, SMOKE_PASSAGES)
    # Never reach for the network; the app's folders are the run's own (bench/home.py).
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["RECALL_GUI_DOWNLOAD_MODELS"] = "0"
    with home.own_folders(data.DATA_DIR / "home"):
        return _run(args, selected)


def _run(args: argparse.Namespace, selected: list[str]) -> int:
    from recall_gui.core.session.vector_cache import CACHE_ENV, cache_limit

    started = time.perf_counter()
    info = machine()
    limit = cache_limit()
    print(f"machine: {json.dumps(info)}")
    setting = os.environ.get(CACHE_ENV, "(not set: default)")
    bound = f"{limit // 1024**2} MB" if isinstance(limit, int) else limit.reason
    print(f"{CACHE_ENV}={setting}: exact-search memory bound {bound}")
    context = BenchContext(BenchSize(toy=args.smoke))
    runs: list[list[Metric]] = []
    for repeat in range(max(1, args.repeat)):
        found_in_run: list[Metric] = []
        for name in selected:
            print(
                f"== {name}" + (f" (run {repeat + 1} of {args.repeat})" if args.repeat > 1 else ""),
                flush=True,
            )
            group_started = time.perf_counter()
            found = importlib.import_module(GROUPS[name]).run(context)
            for metric in found:
                print(f"  {metric.name}: {metric.to_json()}", flush=True)
            print(f"  ({time.perf_counter() - group_started:.0f} s)", flush=True)
            found_in_run.extend(found)
        runs.append(found_in_run)
    metrics = median_runs(runs)
    print()
    print(format_table(metrics))
    finished = machine()["load_average"]
    took = f"{time.perf_counter() - started:.0f} s in all; load average {finished}"
    if args.smoke:
        shutil.rmtree(data.DATA_DIR, ignore_errors=True)
        # What a full run would write must be writable: a fact JSON cannot hold fails here, not after hours.
        json.dumps({metric.name: metric.to_json() for metric in metrics})
        print(f"\nsmoke run: every group ran at toy size; nothing written; {took}")
        return 0
    write_results(metrics, provenance(info))
    print(f"\nwritten to {RESULTS_PATH}; {took}")
    return report.main([])


def median_runs(runs: list[list[Metric]]) -> list[Metric]:
    """Each metric from the run with its median ratio (value when it has no floor), with every run's ratio."""
    if len(runs) == 1:
        return runs[0]
    chosen: list[Metric] = []
    for measured in zip(*runs, strict=True):
        ordered = sorted(measured, key=lambda m: m.ratio if m.ratio is not None else m.value)
        middle = ordered[(len(ordered) - 1) // 2]
        spread = [round(m.ratio, 3) if m.ratio is not None else round(m.value, 3) for m in measured]
        chosen.append(dataclasses.replace(middle, extra={**middle.extra, "bench_runs": spread}))
    return chosen


if __name__ == "__main__":
    sys.exit(main())
