"""A server keeps serving the last registry that parsed while another program rewrites a file in place:
a read that finds a file cut short is retried for a moment, then the last whole registry is served (read
again at the file's next change), and the log says so once."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from recall_gui.core.registry.registry_keeper import RegistryKeeper
from tests.kbtools import cosh_entry, write_registry


@pytest.fixture
def registry_dir(tmp_path: Path) -> Path:
    return write_registry(tmp_path / "registry", [cosh_entry("python-docs", tmp_path / "db")])


def test_a_file_cut_short_for_good_serves_the_last_whole_registry_and_says_so_once(
    registry_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keeper = RegistryKeeper(registry_dir, retry_s=0.0)
    assert [db.name for db in keeper.get().active] == ["python-docs"]
    dbs = registry_dir / "rag_dbs.json"
    whole = dbs.read_text(encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="recall_gui.core.registry.registry_keeper"):
        for cut in (len(whole) // 2, len(whole) // 3, 0):  # three rewrites, each stopped part way
            dbs.write_text(whole[:cut], encoding="utf-8")
            assert [db.name for db in keeper.get().active] == ["python-docs"]
            assert keeper.get().problems == ()
        dbs.write_text(whole.replace("python-docs", "renamed"), encoding="utf-8")
        assert [db.name for db in keeper.get().databases] == ["renamed"]  # whole again: as it is now
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{dbs}: is not valid JSON: ")
    assert warnings[0].endswith(
        f": serving the registry in {registry_dir} as last read whole until it parses"
    )
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert infos == [f"the registry in {registry_dir} reads whole again: serving it as it is now"]


def test_a_kept_registry_is_read_again_only_when_the_file_changes(registry_dir: Path) -> None:
    keeper = RegistryKeeper(registry_dir, retry_s=0.0)
    keeper.get()
    (registry_dir / "rag_active.json").write_text('["python-do', encoding="utf-8")
    kept = keeper.get()
    assert [db.name for db in kept.active] == ["python-docs"]
    assert keeper.get() is kept  # the cut-short file is not read at every call
    assert not kept.changed_on_disk()


def test_a_read_mid_write_is_retried_and_gets_the_whole_file(registry_dir: Path) -> None:
    active = registry_dir / "rag_active.json"
    active.write_text('["python-', encoding="utf-8")  # cut short when the server starts...
    pauses: list[float] = []

    def writer_finishes(seconds: float) -> None:  # ...and the writer finishes during the retry's pause
        pauses.append(seconds)
        active.write_text(json.dumps(["python-docs"]), encoding="utf-8")

    keeper = RegistryKeeper(registry_dir, sleep=writer_finishes)
    registry = keeper.get()
    assert len(pauses) == 1 and [db.name for db in registry.active] == ["python-docs"]
    assert registry.problems == () and keeper.kept_since is None


def test_with_nothing_read_whole_yet_the_problem_is_shown(registry_dir: Path) -> None:
    (registry_dir / "rag_dbs.json").write_text("{", encoding="utf-8")
    registry = RegistryKeeper(registry_dir, retry_s=0.0).get()
    assert registry.databases == () and registry.unparsed == (registry_dir / "rag_dbs.json",)
    assert "is not valid JSON" in str(registry.problems[0])


def test_reload_reads_the_files_even_when_nothing_shows_they_changed(registry_dir: Path) -> None:
    keeper = RegistryKeeper(registry_dir, retry_s=0.0)
    assert [db.name for db in keeper.get().databases] == ["python-docs"]
    dbs = registry_dir / "rag_dbs.json"
    before = dbs.stat()
    with dbs.open("r+", encoding="utf-8") as same_file:  # same size, same inode, same time after
        text = same_file.read()
        same_file.seek(0)
        same_file.write(text.replace("python-docs", "python-dogs"))
    os.utime(dbs, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [db.name for db in keeper.get().databases] == ["python-docs"]
    assert [db.name for db in keeper.reload().databases] == ["python-dogs"]


def test_a_file_cut_short_again_soon_after_is_not_warned_about_again(
    registry_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A writer that pauses between writes again and again warns once in ten minutes, not at each pause."""
    keeper = RegistryKeeper(registry_dir, retry_s=0.0)
    keeper.get()
    active = registry_dir / "rag_active.json"
    with caplog.at_level(logging.WARNING, logger="recall_gui.core.registry.registry_keeper"):
        for _ in range(2):
            active.write_text('["python-', encoding="utf-8")
            assert [db.name for db in keeper.get().active] == ["python-docs"]
            assert keeper.kept_since is not None
            active.write_text('["python-docs"]', encoding="utf-8")
            assert [db.name for db in keeper.get().active] == ["python-docs"]
            assert keeper.kept_since is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
