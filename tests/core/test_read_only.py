"""Read-only for real: a whole session leaves every file of the knowledge base as it was (size, mtime,
sha256), and the same session works when nothing there can be written — files without write permission,
a user who may not write them, a read-only mount."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.readonly import THROWAWAY_UID, make_read_only, read_only_mount_prefix, throwaway_user_prefix
from tests.readonly_session import run_session

ROOT = Path(__file__).resolve().parents[2]


def check_summary(summary: dict[str, Any], kb: KnowledgeBase) -> None:
    """The session really searched, paged, filtered and listed."""
    assert summary["tops"][:3] == ["pw-reset", "paris", "generators"]
    assert summary["json"]["results"][0]["id"] == "berlin"
    assert summary["low_level"][0] == "tides"
    assert summary["rows"] == len(kb.ids) and summary["paged"] == list(kb.ids[:10])
    assert summary["filtered"] == ["pw-reset", "pw-rules"]
    assert summary["row_vector"] == 384 and all(summary["health"]) and summary["tool"] == "recall_search"
    cli = summary["cli"]
    assert all(run["code"] == 0 for run in cli.values()), cli
    assert json.loads(cli["search"]["out"])["results"][0]["id"] == "paris"
    assert json.loads(cli["list_json"]["out"])[0]["rows"] == len(kb.ids)
    assert json.loads(cli["check"]["out"])["passed"] == 1
    assert json.loads(cli["similar"]["out"])["results"][0]["id"] == "paris"
    assert json.loads(cli["rank"]["out"])["rank"] == 2
    assert json.loads(cli["duplicates"]["out"])["groups"] == []


def session_env(home: Path) -> dict[str, str]:
    """Environment for a session in a child process: app dirs of its own, the repository importable."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HOME": str(home),
        "RECALL_GUI_CONFIG_DIR": str(home / "config"),
        "RECALL_GUI_DATA_DIR": str(home / "data"),
        "RECALL_GUI_CACHE_DIR": str(home / "cache"),
        "FASTEMBED_CACHE_PATH": str(home / "fastembed"),
        "XDG_DATA_HOME": str(home / "xdg"),
    }


def run_child(prefix: list[str], kb: KnowledgeBase, home: Path) -> dict[str, Any]:
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "tests.readonly_session", str(kb.registry_dir), kb.name],
        check=False,
        capture_output=True,
        text=True,
        env=session_env(home),
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def test_a_full_session_changes_no_file_of_the_knowledge_base(kb: KnowledgeBase) -> None:
    before_kb, before_registry = snapshot_tree(kb.db_dir), snapshot_tree(kb.registry_dir)
    summary = run_session(kb.registry_dir, kb.name)
    check_summary(summary, kb)
    assert snapshot_tree(kb.db_dir) == before_kb
    assert snapshot_tree(kb.registry_dir) == before_registry  # reading the registry writes nothing either


def test_the_snapshot_notices_a_write(kb: KnowledgeBase) -> None:
    """The check above can fail: a single appended row changes the snapshot."""
    import lancedb

    before = snapshot_tree(kb.db_dir)
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.add(table.to_arrow().slice(0, 1))
    assert snapshot_tree(kb.db_dir) != before


def test_a_session_works_on_files_without_write_permission(world_readable_kb: KnowledgeBase) -> None:
    make_read_only(world_readable_kb.db_dir)
    before = snapshot_tree(world_readable_kb.db_dir)
    check_summary(run_session(world_readable_kb.registry_dir, world_readable_kb.name), world_readable_kb)
    assert snapshot_tree(world_readable_kb.db_dir) == before


@pytest.mark.process
def test_a_session_works_for_a_user_who_may_not_write(world_readable_kb: KnowledgeBase) -> None:
    """A throwaway non-root uid that can read everything but write nothing it does not own."""
    kb = world_readable_kb
    make_read_only(kb.db_dir)
    prefix, why_not = throwaway_user_prefix(kb.db_dir)
    if prefix is None:
        pytest.skip(why_not)
    home = Path(tempfile.mkdtemp(prefix="recall-user-"))
    try:
        os.chown(home, THROWAWAY_UID, THROWAWAY_UID)
        before = snapshot_tree(kb.db_dir)
        check_summary(run_child(prefix, kb, home), kb)
        assert snapshot_tree(kb.db_dir) == before
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.process
def test_a_session_works_on_a_read_only_mount(world_readable_kb: KnowledgeBase, tmp_path: Path) -> None:
    kb = world_readable_kb
    prefix, why_not = read_only_mount_prefix(kb.db_dir)
    if prefix is None:
        pytest.skip(why_not)
    before = snapshot_tree(kb.db_dir)
    check_summary(run_child(prefix, kb, tmp_path / "home"), kb)
    assert snapshot_tree(kb.db_dir) == before
