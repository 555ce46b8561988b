"""Read-only for real, in the window: a session of browsing, paging, filtering, opening rows, searching,
copying, exporting and editing the description panel leaves every file of the knowledge base as it was
(size, mtime, sha256), and works the same when nothing there can be written: files without write
permission read by a user who may not write them, and a read-only mount."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.tables.paging import DEFAULT_PAGE_SIZE
from tests.core.test_read_only import ROOT, session_env
from tests.kbtools import (
    PASSAGES,
    KnowledgeBase,
    cosh_entry,
    snapshot_tree,
    write_perturbed_table,
    write_registry,
)
from tests.qt.conftest import WindowFactory
from tests.qt.window_session import DESCRIPTION, drive_session
from tests.readonly import (
    THROWAWAY_UID,
    make_read_only,
    make_writable,
    read_only_mount_prefix,
    throwaway_user_prefix,
)

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROWS = 2_500  # three pages of the browse table
PAGES = -(-ROWS // DEFAULT_PAGE_SIZE)


@pytest.fixture
def paged_kb(passage_vectors: Any) -> Iterator[KnowledgeBase]:
    """1,000 rows (the 12 passages, perturbed copies) in a folder any user can read, with its registry
    beside it (not inside it)."""
    base = Path(tempfile.mkdtemp(prefix="recall-window-ro-"))
    base.chmod(0o755)
    ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
    write_perturbed_table(
        base / "kb", "notes", ids, contents, passage_vectors, rows=ROWS, ivf_partitions=None
    )
    registry = write_registry(base / "registry", [cosh_entry("notes", base / "kb")])
    yield KnowledgeBase("notes", base / "kb", registry, ids, contents, passage_vectors)
    make_writable(base)
    shutil.rmtree(base)


def check_summary(summary: dict[str, Any], export_dir: Path) -> None:
    """The session really browsed to the end, filtered, searched, exported and edited."""
    assert summary["problems"] == []
    assert summary["rows"] == summary["paged"] == ROWS and summary["pages_read"] == PAGES > 1
    assert summary["last_row"] == f"{list(PASSAGES)[(ROWS - 1) % 12]}~{ROWS - 1}"
    assert summary["last_row_vector"].startswith("384-d · norm 1.00")
    assert summary["filtered"] == len([i for i in range(ROWS) if i % 12 == list(PASSAGES).index("tides")])
    assert summary["rows_exported"] == summary["filtered"]
    assert [top.split("~")[0] for top in summary["tops"]] == ["pw-reset", "paris", "unicode", "tides"]
    assert summary["copied"].startswith("tides~")
    assert summary["limit_rows"] == 12 and summary["results_exported"] == [12, 12]
    assert summary["active_after"] is True and summary["description_after"] == DESCRIPTION
    exported = json.loads((export_dir / "results.json").read_text(encoding="utf-8"))
    assert exported["source"]["database"] == "notes" and exported["source"]["version"] == 1
    rows = exported["rows"]
    assert len(rows) == 12 and rows[0]["ID"].startswith("tides~")


def test_a_window_session_changes_no_file_of_the_knowledge_base(
    paged_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    before = snapshot_tree(paged_kb.db_dir)
    window = open_window(paged_kb.registry_dir)
    summary = drive_session(window, loop, tmp_path)
    check_summary(summary, tmp_path)
    assert snapshot_tree(paged_kb.db_dir) == before
    assert load_registry(paged_kb.registry_dir).get("notes").description == DESCRIPTION  # type: ignore[union-attr]


def run_child(prefix: list[str], kb: KnowledgeBase, home: Path, registry_dir: Path) -> dict[str, Any]:
    """The session in a child process (another user, another mount namespace)."""
    done = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-m",
            "tests.qt.window_session",
            str(registry_dir),
            kb.name,
            str(home / "exports"),
            str(home / "window-config"),
        ],
        check=False,
        capture_output=True,
        text=True,
        env=session_env(home) | {"QT_QPA_PLATFORM": "offscreen"},
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return summary


def test_a_window_session_works_for_a_user_who_may_not_write_the_knowledge_base(
    paged_kb: KnowledgeBase, open_window: WindowFactory, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    """Files without write permission, read by a throwaway non-root user who owns only its own home and
    its copy of the registry (which the description panel writes)."""
    make_read_only(paged_kb.db_dir)
    before = snapshot_tree(paged_kb.db_dir)
    if os.geteuid() != 0:  # not root: a plain run already is a run without write permission
        window = open_window(paged_kb.registry_dir)
        check_summary(drive_session(window, loop, tmp_path), tmp_path)
        assert snapshot_tree(paged_kb.db_dir) == before
        return
    prefix, why_not = throwaway_user_prefix(paged_kb.db_dir)
    if prefix is None:
        pytest.skip(why_not)
    home = Path(tempfile.mkdtemp(prefix="recall-window-user-"))
    try:
        registry_dir = home / "registry"
        shutil.copytree(paged_kb.registry_dir, registry_dir)
        (home / "exports").mkdir()
        for path in [home, *home.rglob("*")]:
            os.chown(path, THROWAWAY_UID, THROWAWAY_UID)
        summary = run_child(prefix, paged_kb, home, registry_dir)
        check_summary(summary, home / "exports")
        assert snapshot_tree(paged_kb.db_dir) == before
        assert load_registry(registry_dir).get("notes").description == DESCRIPTION  # type: ignore[union-attr]
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_window_session_works_on_a_read_only_mount(paged_kb: KnowledgeBase, tmp_path: Path) -> None:
    prefix, why_not = read_only_mount_prefix(paged_kb.db_dir)
    if prefix is None:
        pytest.skip(why_not)
    before = snapshot_tree(paged_kb.db_dir)
    (tmp_path / "exports").mkdir()
    summary = run_child(prefix, paged_kb, tmp_path, paged_kb.registry_dir)
    check_summary(summary, tmp_path / "exports")
    assert snapshot_tree(paged_kb.db_dir) == before
