"""Registry changes from processes running at once all land; registry files that are symlinks stay
symlinks and their targets are what changes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import (
    add_database,
    change_active,
    restore_database,
    set_description,
    unregister_database,
)
from tests.kbtools import cosh_entry, write_registry

WORKERS = 4
EACH = 30


def _register_many(directory: str, worker: int, count: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait()  # every process begins at once: their changes interleave
    for number in range(count):
        name = f"w{worker}-{number}"
        add_database(Path(directory), cosh_entry(name, f"/data/{name}"), active=number % 2 == 0)


@pytest.mark.process
def test_registrations_from_several_processes_at_once_all_land(tmp_path: Path) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("first", "/data/first")])
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_register_many, args=(str(directory), worker, EACH, start))
        for worker in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    start.set()
    for worker in workers:
        worker.join(timeout=240)
    assert [worker.exitcode for worker in workers] == [0] * WORKERS
    registry = load_registry(directory)
    expected = {"first"} | {f"w{w}-{n}" for w in range(WORKERS) for n in range(EACH)}
    assert registry.problems == ()
    assert {db.name for db in registry.databases} == expected
    assert len(registry.databases) == 1 + WORKERS * EACH
    active = {"first"} | {f"w{w}-{n}" for w in range(WORKERS) for n in range(0, EACH, 2)}
    assert {db.name for db in registry.active} == active
    # Each worker's own entries are in the order it added them.
    names = [db.name for db in registry.databases]
    for worker in range(WORKERS):
        mine = [name for name in names if name.startswith(f"w{worker}-")]
        assert mine == [f"w{worker}-{n}" for n in range(EACH)]


@pytest.fixture
def linked_registry(tmp_path: Path) -> tuple[Path, Path]:
    """A registry folder whose two files are symlinks into a dotfiles repository."""
    dotfiles = write_registry(
        tmp_path / "dotfiles" / "cosh",
        [cosh_entry("alpha", "/data/alpha"), cosh_entry("beta", "/data/beta")],
        active=["alpha"],
    )
    directory = tmp_path / "registry"
    directory.mkdir()
    for name in ("rag_dbs.json", "rag_active.json"):
        (directory / name).symlink_to(dotfiles / name)
    return directory, dotfiles


def _links_still_point_at(directory: Path, dotfiles: Path) -> None:
    for name in ("rag_dbs.json", "rag_active.json"):
        link = directory / name
        assert link.is_symlink(), f"{name} was replaced by a regular file"
        assert link.readlink() == dotfiles / name
        assert not (dotfiles / name).is_symlink()


def test_a_symlinked_active_file_is_updated_through_its_link(linked_registry: tuple[Path, Path]) -> None:
    directory, dotfiles = linked_registry
    assert change_active(directory, "beta", True) is None  # it was inactive
    _links_still_point_at(directory, dotfiles)
    assert json.loads((dotfiles / "rag_active.json").read_text()) == ["alpha", "beta"]
    assert [db.name for db in load_registry(directory).active] == ["alpha", "beta"]


def test_a_symlinked_dbs_file_is_updated_through_its_link(linked_registry: tuple[Path, Path]) -> None:
    directory, dotfiles = linked_registry
    set_description(directory, "alpha", "changed through the link")
    add_database(directory, cosh_entry("gamma", "/data/gamma"), active=True)
    removed = unregister_database(directory, "beta")
    _links_still_point_at(directory, dotfiles)
    saved = json.loads((dotfiles / "rag_dbs.json").read_text())
    assert [raw["name"] for raw in saved["dbs"]] == ["alpha", "gamma"]
    assert saved["dbs"][0]["description"] == "changed through the link"
    restore_database(directory, removed)
    _links_still_point_at(directory, dotfiles)
    assert [db.name for db in load_registry(directory).databases] == ["alpha", "beta", "gamma"]
    # Nothing was left beside the links or their targets.
    assert sorted(p.name for p in directory.iterdir()) == ["rag_active.json", "rag_dbs.json"]
    assert sorted(p.name for p in dotfiles.iterdir()) == ["rag_active.json", "rag_dbs.json"]


def test_deactivating_says_where_the_name_was_and_activating_there_puts_it_back(tmp_path: Path) -> None:
    entries = [cosh_entry(name, f"/{name}") for name in ("a", "b", "c")]
    directory = write_registry(tmp_path / "registry", entries, active=["c", "a", "b"])
    assert change_active(directory, "a", False) == 1
    assert json.loads((directory / "rag_active.json").read_text()) == ["c", "b"]
    assert change_active(directory, "a", True, position=1) is None
    assert json.loads((directory / "rag_active.json").read_text()) == ["c", "a", "b"]


def test_undoing_an_unregister_restores_the_exact_entry_and_its_place(tmp_path: Path) -> None:
    beta = {**cosh_entry("beta", "/data/beta"), "owner": {"team": "x"}, "zz": [1, 2]}
    entries = [cosh_entry("alpha", "/a"), beta, cosh_entry("gamma", "/g")]
    directory = write_registry(tmp_path / "registry", entries, active=["gamma", "beta", "alpha"])
    removed = unregister_database(directory, "beta")
    assert (removed.position, removed.active_position) == (1, 1)
    assert json.loads((directory / "rag_active.json").read_text()) == ["gamma", "alpha"]
    restore_database(directory, removed)
    assert json.loads((directory / "rag_dbs.json").read_text()) == {"dbs": entries}
    assert json.loads((directory / "rag_active.json").read_text()) == ["gamma", "beta", "alpha"]
