"""Read-only for real: a whole session leaves every file of the knowledge base as it was (size, mtime,
sha256), and the same session works when nothing there can be written — files without write permission,
a user who may not write them, a read-only mount."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, write_lance_table, write_registry
from tests.readonly_session import run_session

ROOT = Path(__file__).resolve().parents[2]
THROWAWAY_UID = 54_321


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


@pytest.fixture
def shared_kb(passage_vectors: Any) -> Iterator[KnowledgeBase]:
    """A knowledge base in a world-readable folder (pytest's own tmp dirs are private to root)."""
    from tests.kbtools import PASSAGES

    base = Path(tempfile.mkdtemp(prefix="recall-ro-"))
    base.chmod(0o755)
    ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
    write_lance_table(base / "kb", "notes", ids, contents, passage_vectors)
    registry = write_registry(base / "registry", [cosh_entry("notes", base / "kb")])
    yield KnowledgeBase("notes", base / "kb", registry, ids, contents, passage_vectors)
    make_writable(base)
    shutil.rmtree(base)


def make_read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


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


def test_a_session_works_on_files_without_write_permission(shared_kb: KnowledgeBase) -> None:
    make_read_only(shared_kb.db_dir)
    before = snapshot_tree(shared_kb.db_dir)
    check_summary(run_session(shared_kb.registry_dir, shared_kb.name), shared_kb)
    assert snapshot_tree(shared_kb.db_dir) == before


def test_a_session_works_for_a_user_who_may_not_write(shared_kb: KnowledgeBase, tmp_path: Path) -> None:
    """Run as a throwaway non-root uid that can read everything (CAP_DAC_READ_SEARCH, so it reaches the
    interpreter under /root) but write nothing it does not own."""
    if os.geteuid() != 0:
        pytest.skip("already not root: the permission test above is the non-root run")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to run as another user")
    make_read_only(shared_kb.db_dir)
    home = Path(tempfile.mkdtemp(prefix="recall-user-"))
    try:
        os.chown(home, THROWAWAY_UID, THROWAWAY_UID)
        prefix = [
            "setpriv",
            f"--reuid={THROWAWAY_UID}",
            f"--regid={THROWAWAY_UID}",
            "--clear-groups",
            "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search",
        ]
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", f"open({str(shared_kb.db_dir / 'probe')!r}, 'w')"],
            check=False,
            capture_output=True,
            text=True,
        )
        if "Operation not permitted" in probe.stderr and "setpriv" in probe.stderr:
            pytest.skip(f"cannot switch user here: {probe.stderr.strip()}")
        assert "Permission denied" in probe.stderr  # that user really may not write there
        before = snapshot_tree(shared_kb.db_dir)
        check_summary(run_child(prefix, shared_kb, home), shared_kb)
        assert snapshot_tree(shared_kb.db_dir) == before
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_session_works_on_a_read_only_mount(shared_kb: KnowledgeBase, tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is needed for a private read-only bind mount")
    folder = str(shared_kb.db_dir)
    mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"
    check = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && touch {folder}/probe"],
        check=False,
        capture_output=True,
        text=True,
    )
    if "Read-only file system" not in check.stderr:
        pytest.skip(f"cannot make a read-only bind mount here: {check.stderr.strip()}")
    before = snapshot_tree(shared_kb.db_dir)
    prefix = ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh"]
    check_summary(run_child(prefix, shared_kb, tmp_path / "home"), shared_kb)
    assert snapshot_tree(shared_kb.db_dir) == before
