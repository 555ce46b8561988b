"""The demo's folders are checked before the work: with ``RECALL_GUI_DATA_DIR`` naming a file, `recall-gui
demo` embedded all 649 passages and then failed with a bare ``[Errno 17]``; now it refuses at once, in one
line naming the file, and nothing is embedded or written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recall_gui.core.base.errors import SettingsError
from recall_gui.core.base.paths import folder_making_problem
from recall_gui.core.demo import install_demo
from tests.core.test_demo_conflicts import run_demo_cli
from tests.kbtools import snapshot_tree


@pytest.mark.process
def test_demo_with_the_data_folder_a_file_refuses_before_embedding(tmp_path: Path) -> None:
    data = tmp_path / "data-is-a-file"
    data.write_text("mine", encoding="utf-8")
    registry = tmp_path / "registry"
    done = run_demo_cli("--registry", str(registry), env={"RECALL_GUI_DATA_DIR": str(data)})
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: the demo was not built: {data} is a file, not a folder; nothing was changed",
        "hint: Set RECALL_GUI_DATA_DIR to a folder you can write.",
    ]  # no "embedding passages": refused before the work
    assert data.read_text(encoding="utf-8") == "mine" and not registry.exists()


def test_the_prebuilt_demo_is_refused_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("mine", encoding="utf-8")
    monkeypatch.setenv("RECALL_GUI_DATA_DIR", str(blocker / "data"))
    before = snapshot_tree(tmp_path)
    with pytest.raises(SettingsError) as refused:
        install_demo(tmp_path / "registry")
    assert (
        refused.value.message
        == f"the demo was not built: {blocker} is a file, not a folder; nothing was changed"
    )
    assert snapshot_tree(tmp_path) == before


def test_a_registry_folder_that_cannot_be_made_is_refused_before_the_work(tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("mine", encoding="utf-8")
    with pytest.raises(SettingsError) as refused:
        install_demo(blocker / "registry", tmp_path / "demo")
    assert (
        refused.value.message
        == f"the demo was not built: {blocker} is a file, not a folder; nothing was changed"
    )
    assert refused.value.hint == "Name a registry folder you can write."
    assert not (tmp_path / "demo").exists()


def test_folder_making_problem_names_the_part_at_fault(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert folder_making_problem(tmp_path / "new" / "deeper") is None  # made with its parents
    assert folder_making_problem(tmp_path) is None
    assert (
        folder_making_problem(tmp_path / "pipe" / "x") == f"{tmp_path / 'pipe'} is a named pipe, not a folder"
    )
