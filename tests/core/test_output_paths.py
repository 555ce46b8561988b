"""A file the user names for output (``check --junit OUT``, the window's export, a golden file saved as)
is written only to a new path or a regular file that no input of the run is and no knowledge base holds:
the golden file, a table's manifest, a FIFO, a device node, a database folder are refused and stay as
they were."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core.test_check_command import golden
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.qt.conftest import loop, open_window, run  # noqa: F401 (fixtures of the window tests)

GOOD_CHECK = {"db_name": "notes", "query": "What is the capital of France?", "expect": ["paris"]}


def manifest_of(kb: KnowledgeBase) -> Path:
    return next((kb.db_dir / f"{kb.name}.lance" / "_versions").glob("*.manifest"))


def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def device(tmp_path: Path) -> Path | None:
    """A character device node like /dev/null, in the test's folder (only root can make one)."""
    if os.geteuid() != 0:
        return None
    path = tmp_path / "null"
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def places(kb: KnowledgeBase, tmp_path: Path, golden_path: Path) -> dict[str, tuple[Path, str]]:
    """Each path that must be refused, and what the refusal says of it."""
    link = tmp_path / "link.xml"
    link.symlink_to(golden_path)
    found = {
        "the golden file": (golden_path, "it is the golden file, an input of this run"),
        "a link to the golden file": (link, "it is the golden file, an input of this run"),
        "the registry": (kb.registry_dir / "rag_dbs.json", "it is the registry's list of databases"),
        "a manifest": (manifest_of(kb), "it lies inside the LanceDB table"),
        "a new file in a table": (
            kb.db_dir / f"{kb.name}.lance" / "report.xml",
            "it lies inside the LanceDB",
        ),
        "the database folder": (kb.db_dir / "report.xml", "it lies in the LanceDB database folder"),
        "a new folder in the database folder": (
            kb.db_dir / "reports" / "report.xml",
            "it would make folders in the LanceDB database folder",
        ),
        "a new folder LanceDB would take for a table": (
            tmp_path / "out.lance" / "report.xml",
            "it would make the folder",
        ),
        "a FIFO": (fifo(tmp_path), "it is a FIFO (a named pipe), which writing would replace"),
        "a folder": (tmp_path, "it is a folder, which writing would replace"),
    }
    node = device(tmp_path)
    if node is not None:
        found["a device"] = (node, "it is a character device, which writing would replace")
    return found


def state(path: Path) -> tuple[int, int, bytes | None] | None:
    """What a path is and holds (a FIFO's or a device's content is never read); ``None``: nothing."""
    if not os.path.lexists(path):
        return None
    info = os.lstat(path)
    content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
    return info.st_mode, info.st_ino, content


def test_check_refuses_a_junit_path_it_must_not_replace_before_running(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    golden_path = golden(tmp_path, [GOOD_CHECK])
    kb_before = snapshot_tree(kb.db_dir)
    for name, (out, said) in places(kb, tmp_path, golden_path).items():
        before = state(out)
        done = cli("check", "--registry", str(kb.registry_dir), "--junit", str(out), str(golden_path))
        assert done.returncode == 2, (name, done.stderr)
        assert done.stdout == "", name  # refused before the run
        assert done.stderr.startswith(f"error: the JUnit report was not written to {out}: {said}"), (
            name,
            done.stderr,
        )
        assert state(out) == before, name
    assert snapshot_tree(kb.db_dir) == kb_before
    searched = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "capital of France")
    assert searched.returncode == 0, searched.stderr  # the table still reads


def test_check_still_writes_a_new_report_and_replaces_an_old_one(kb: KnowledgeBase, tmp_path: Path) -> None:
    golden_path = golden(tmp_path, [GOOD_CHECK])
    out = tmp_path / "reports" / "report.xml"
    for _ in range(2):
        done = cli("check", "--registry", str(kb.registry_dir), "--junit", str(out), str(golden_path))
        assert done.returncode == 0, done.stderr
        assert out.read_text(encoding="utf-8").startswith('<?xml version="1.0"')


def window_places(kb: KnowledgeBase, tmp_path: Path) -> dict[str, tuple[Path, str]]:
    every = places(kb, tmp_path, golden(tmp_path, [GOOD_CHECK]))
    return {name: every[name] for name in ("a manifest", "the database folder", "a FIFO", "a folder")}


@pytest.mark.parametrize("browsing", [False, True])
def test_the_window_refuses_to_export_there(
    kb: KnowledgeBase,
    open_window: Any,  # noqa: F811
    loop: asyncio.AbstractEventLoop,  # noqa: F811
    tmp_path: Path,
    browsing: bool,
) -> None:
    from PySide6.QtWidgets import QLabel

    window = open_window(kb.registry_dir)
    inputs = window.knowledge.read_inputs()
    if browsing:
        run(loop, window.knowledge.browser.browse(inputs))
    else:
        window.knowledge.query_bar.query_edit.setText("capital of France")
        run(loop, window.knowledge.searching.search(window.knowledge.read_inputs()))
    for name, (out, said) in window_places(kb, tmp_path).items():
        before = state(out)
        assert run(loop, window.knowledge.exporter.export_to(out, "csv")) == 0, name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"The export was not written to {out}: {said}"), (name, banner)
        assert state(out) == before, name


def test_the_checks_page_refuses_to_save_the_golden_file_there(
    kb: KnowledgeBase,
    open_window: Callable[..., Any],  # noqa: F811
    tmp_path: Path,
) -> None:
    from PySide6.QtWidgets import QLabel

    window = open_window(kb.registry_dir)
    for name, (out, said) in window_places(kb, tmp_path).items():
        before = state(out)
        assert not window.checks.save_as(out), name
        banner = window.banner.findChild(QLabel, "bannerText").text()
        assert banner.startswith(f"{out}: not written: {said}"), (name, banner)
        assert state(out) == before, name
