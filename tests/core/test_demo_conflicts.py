"""The demo replaces only what recall-gui made: its own registry entry and folder, both marked.

A registry entry named like the demo that is someone else's, a `demo/` folder holding anything else, and
cosh's registry are refused with a message saying what to do, and left exactly as they were; a
description the user edited for the demo survives a rebuild. Every path that builds the demo goes
through the same checks: `recall-gui demo` (from source), the prebuilt copy a first start installs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.errors import DemoConflictError
from recall_gui.core.base.paths import app_registry_dir, cosh_registry_dir, demo_db_dir
from recall_gui.core.demo import (
    DEMO_MARK_FILE,
    DEMO_MARK_KEY,
    DEMO_NAME,
    build_demo,
    install_demo,
    is_demo_entry,
)
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import register_database, set_description
from tests.kbtools import cosh_entry, snapshot_tree, write_registry

ROOT = Path(__file__).resolve().parents[2]


def foreign_python_docs(registry_dir: Path, elsewhere: Path) -> Path:
    """A registry whose ``python-docs`` is the user's own database, not the demo."""
    return write_registry(
        registry_dir,
        [cosh_entry(DEMO_NAME, elsewhere, "my own Python notes"), cosh_entry("other", elsewhere)],
    )


def run_demo_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recall_gui", "demo", *args],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
    )


def test_a_foreign_entry_named_like_the_demo_is_refused_and_left_alone(tmp_path: Path) -> None:
    registry = foreign_python_docs(app_registry_dir(), tmp_path / "mine")
    before = snapshot_tree(registry)
    with pytest.raises(DemoConflictError) as refused:
        install_demo(registry)
    assert 'already has a database named "python-docs" that recall-gui did not make' in refused.value.message
    assert "nothing was changed" in refused.value.message
    assert refused.value.hint and "Rename or remove that entry" in refused.value.hint
    assert snapshot_tree(registry) == before
    assert not demo_db_dir().exists()


@pytest.mark.process
def test_the_cli_refuses_a_foreign_entry_before_embedding_anything(tmp_path: Path) -> None:
    registry = foreign_python_docs(tmp_path / "registry", tmp_path / "mine")
    before = snapshot_tree(registry)
    done = run_demo_cli("--registry", str(registry))
    assert done.returncode == 1
    assert done.stderr.startswith("error: the registry in")
    assert "hint: Rename or remove that entry" in done.stderr
    assert "embedding passages" not in done.stderr
    assert snapshot_tree(registry) == before


@pytest.mark.process
def test_cosh_registry_is_refused_even_through_recall_registry_dir(tmp_path: Path) -> None:
    cosh = write_registry(cosh_registry_dir(), [cosh_entry("agent-notes", tmp_path / "db")])
    before = snapshot_tree(cosh)
    done = run_demo_cli(env={"RECALL_REGISTRY_DIR": str(cosh)})
    assert done.returncode == 1
    assert "is cosh's registry, and the demo is never registered there" in done.stderr
    assert snapshot_tree(cosh) == before
    with pytest.raises(DemoConflictError):
        install_demo(cosh)
    assert snapshot_tree(cosh) == before
    assert not demo_db_dir().exists()


def test_a_demo_folder_holding_the_users_files_is_refused_and_kept(tmp_path: Path) -> None:
    folder = demo_db_dir()
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "keep.txt").write_text("my notes")
    before = snapshot_tree(folder)
    with pytest.raises(DemoConflictError) as refused:
        install_demo(app_registry_dir())
    assert "holds files that recall-gui did not put there (notes)" in refused.value.message
    assert refused.value.hint and "Move" in refused.value.hint
    assert snapshot_tree(folder) == before
    assert not (app_registry_dir() / "rag_dbs.json").exists()
    with pytest.raises(DemoConflictError):  # building from source refuses before loading the model
        build_demo(app_registry_dir())
    assert snapshot_tree(folder) == before


def test_a_file_where_the_demo_folder_goes_is_refused(tmp_path: Path) -> None:
    demo_db_dir().parent.mkdir(parents=True)
    demo_db_dir().write_text("not a folder")
    with pytest.raises(DemoConflictError, match="exists and is not a folder recall-gui made"):
        install_demo(app_registry_dir())
    assert demo_db_dir().read_text() == "not a folder"


def test_the_demo_is_marked_and_a_rebuild_keeps_the_users_description() -> None:
    registry = app_registry_dir()
    path = install_demo(registry)
    assert (path / DEMO_MARK_FILE).is_file()
    raw = json.loads((registry / "rag_dbs.json").read_text())["dbs"]
    assert [e.get(DEMO_MARK_KEY) for e in raw] == ["recall-gui demo"]
    set_description(registry, DEMO_NAME, "My edited description of the demo.")
    install_demo(registry)
    (entry,) = load_registry(registry).databases
    assert entry.description == "My edited description of the demo."
    assert entry.active


def test_a_file_the_user_put_into_the_demo_folder_makes_a_rebuild_refuse() -> None:
    path = install_demo(app_registry_dir())
    (path / "my-notes.txt").write_text("kept")
    with pytest.raises(DemoConflictError, match=r"my-notes\.txt"):
        install_demo(app_registry_dir())
    assert (path / "my-notes.txt").read_text() == "kept"


def test_a_demo_built_by_version_0_1_without_marks_is_recognised_and_rebuilt(tmp_path: Path) -> None:
    registry = app_registry_dir()
    path = install_demo(registry)
    (path / DEMO_MARK_FILE).unlink()  # as 0.1 left it: no marks anywhere
    data = json.loads((registry / "rag_dbs.json").read_text())
    data["dbs"][0].pop(DEMO_MARK_KEY)
    data["dbs"][0]["description"] = "Edited under 0.1."
    (registry / "rag_dbs.json").write_text(json.dumps(data))
    assert is_demo_entry(data["dbs"][0], path)
    install_demo(registry)
    raw = json.loads((registry / "rag_dbs.json").read_text())["dbs"]
    assert raw[0][DEMO_MARK_KEY] == "recall-gui demo"
    assert raw[0]["description"] == "Edited under 0.1."
    assert (path / DEMO_MARK_FILE).is_file()


def test_an_unmarked_entry_pointing_elsewhere_is_not_the_demo(tmp_path: Path) -> None:
    entry: dict[str, Any] = cosh_entry(DEMO_NAME, tmp_path / "elsewhere")
    assert not is_demo_entry(entry, demo_db_dir())


def test_register_database_replaces_nothing_unless_asked(tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db", "mine")])
    before = snapshot_tree(registry)
    with pytest.raises(Exception, match='already has a database named "notes"'):
        register_database(registry, cosh_entry("notes", tmp_path / "other", "theirs"))
    assert snapshot_tree(registry) == before


@pytest.mark.process
@pytest.mark.parametrize(
    ("file", "text", "said"),
    [
        ("rag_dbs.json", '{"dbs": [', "is not valid JSON"),
        ("rag_dbs.json", '{"python-docs": {"uri": "/x"}}', 'does not hold a "dbs" array'),
        ("rag_active.json", '{"python-docs": true}', "is not a JSON array"),
    ],
)
def test_a_registry_the_demo_could_not_be_added_to_is_refused_before_any_work(
    tmp_path: Path, file: str, text: str, said: str
) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    (registry / file).write_text(text, encoding="utf-8")
    before = snapshot_tree(registry)
    done = run_demo_cli("--registry", str(registry))
    assert done.returncode == 1
    assert "the demo was not built" in done.stderr and said in done.stderr
    assert "embedding passages" not in done.stderr
    assert snapshot_tree(registry) == before
    assert not demo_db_dir().exists()
