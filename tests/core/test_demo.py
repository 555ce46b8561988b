"""The demo knowledge base: built once by `recall-gui demo`, in cosh's schema, with stable ids, registered
in the app's own registry (never cosh's), and answering the question the README promises."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recall_gui.core.base.errors import DemoBuildCancelled
from recall_gui.core.demo import DEMO_NAME, build_demo, demo_passages
from recall_gui.core.registry.registry import load_registry
from tests.conftest import DemoBuild
from tests.kbtools import snapshot_tree


def run_cli(demo: DemoBuild, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", *args],
        check=False,
        capture_output=True,
        text=True,
        env=demo.env,
        timeout=120,
    )


@pytest.mark.process
def test_demo_is_written_and_registered_in_the_app_dirs_never_in_cosh(demo_build: DemoBuild) -> None:
    assert demo_build.stdout.splitlines() == [
        f"demo knowledge base: {demo_build.db_dir}",
        f"registered in: {demo_build.registry_dir}",
    ]
    total = len(demo_passages())
    assert f"embedding passages: {total}/{total}" in demo_build.stderr
    assert snapshot_tree(demo_build.cosh_dir) == demo_build.cosh_before
    registry = load_registry(demo_build.registry_dir)
    assert registry.problems == ()
    (entry,) = registry.databases
    assert (entry.name, entry.active, entry.uri) == (DEMO_NAME, True, str(demo_build.db_dir))
    assert entry.embedder.label == "All-MiniLM-L6-v2 (384d)"
    leftovers = [p.name for p in demo_build.db_dir.parent.iterdir() if p.name.startswith(".demo")]
    assert leftovers == []


def test_demo_table_has_cosh_schema_and_stable_ids(demo_build: DemoBuild) -> None:
    import lancedb

    table = lancedb.connect(str(demo_build.db_dir)).open_table(DEMO_NAME)
    schema = table.schema
    assert [(f.name, str(f.type)) for f in schema] == [
        ("id", "string"),
        ("content", "string"),
        ("vector", "fixed_size_list<item: float>[384]"),
    ]
    ids = table.to_arrow().column("id").to_pylist()
    expected = [p.id for p in demo_passages()]
    assert ids == expected == [p.id for p in demo_passages()]  # same text, same ids, same order
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[\w.-]+#\d+", i) for i in ids)
    assert "yield#0" in ids


@pytest.mark.process
def test_cli_search_on_the_demo_returns_the_yield_passages(demo_build: DemoBuild) -> None:
    done = run_cli(demo_build, "search", "--db", DEMO_NAME, "how do generators work")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["query"] == "how do generators work"
    ids = [r["id"] for r in data["results"]]
    assert len(ids) == 5
    assert ids[0].startswith("yield#") or ids[0].startswith("yieldexpr#"), ids
    assert sum("yield" in r["content"] for r in data["results"]) >= 3


def test_a_cancelled_rebuild_keeps_the_previous_demo(demo_build: DemoBuild, tmp_path: Path) -> None:
    import shutil

    target = tmp_path / "demo"
    shutil.copytree(demo_build.db_dir, target)
    registry = tmp_path / "registry"
    before, cancel = snapshot_tree(target), threading.Event()

    def progress(done: int, total: int) -> None:
        if done > 0:
            cancel.set()

    with pytest.raises(DemoBuildCancelled):
        build_demo(registry, target, progress=progress, cancel=cancel)
    assert snapshot_tree(target) == before
    assert not registry.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]
