"""Reading the registry costs time in proportion to its entries, not to their square.

Speed goals live in ``bench/``; this only guards the shape of the cost: ten times the entries may take
about ten times as long, never a hundred. CPU time of this process (best of a few runs) keeps other work
on the machine out of the ratio.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import Registry
from recall_gui.core.registry.suffix import build_tool_suffix
from tests.kbtools import cosh_entry

SMALL, LARGE = 2_000, 20_000
#: Linear work gives a ratio near 10 (LARGE / SMALL); quadratic work gives near 100.
MAX_RATIO = 35.0


def write_big_registry(directory: Path, count: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    entries = [cosh_entry(f"db-{i}", f"/data/db-{i}", f"notes {i}") for i in range(count)]
    (directory / "rag_dbs.json").write_text(json.dumps({"dbs": entries}), encoding="utf-8")
    names = [entry["name"] for entry in entries]
    (directory / "rag_active.json").write_text(json.dumps(names), encoding="utf-8")
    return directory


def cpu_seconds(work: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def ratio_of(tmp_path: Path, work: Callable[[Registry], object]) -> float:
    small = load_registry(write_big_registry(tmp_path / "small", SMALL))
    large = load_registry(write_big_registry(tmp_path / "large", LARGE))
    return cpu_seconds(lambda: work(large), 2) / max(cpu_seconds(lambda: work(small), 5), 1e-4)


def test_loading_ten_times_the_entries_takes_about_ten_times_as_long(tmp_path: Path) -> None:
    small = write_big_registry(tmp_path / "small", SMALL)
    large = write_big_registry(tmp_path / "large", LARGE)
    registry = load_registry(large)
    assert len(registry.active) == LARGE and not registry.problems
    ratio = cpu_seconds(lambda: load_registry(large), 2) / cpu_seconds(lambda: load_registry(small), 5)
    assert ratio < MAX_RATIO, f"{LARGE} entries took {ratio:.0f}x the time of {SMALL}"


def test_looking_up_every_database_by_name_is_linear(tmp_path: Path) -> None:
    def every_lookup(registry: Registry) -> None:
        for entry in registry.databases:
            assert registry.get(entry.name) is entry
            assert len(registry.active) == len(registry.databases)

    assert ratio_of(tmp_path, every_lookup) < MAX_RATIO


def test_the_generated_suffix_is_linear(tmp_path: Path) -> None:
    assert ratio_of(tmp_path, build_tool_suffix) < MAX_RATIO
