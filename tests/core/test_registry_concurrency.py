"""Registry changes from processes running at once all land; registry files that are symlinks stay
symlinks and their targets are what changes."""

from __future__ import annotations

import errno
import fcntl
import json
import multiprocessing
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from recall_gui.core.base.errors import RegistryError
from recall_gui.core.registry import registry_lock
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import (
    add_database,
    change_active,
    register_database,
    restore_database,
    set_description,
    unregister_database,
)
from recall_gui.core.registry.registry_lock import registry_locked
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


def test_restoring_after_the_registry_file_was_deleted_makes_it_anew(tmp_path: Path) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a")], active=[])
    removed = unregister_database(directory, "alpha")
    (directory / "rag_dbs.json").unlink()
    restore_database(directory, removed)
    assert json.loads((directory / "rag_dbs.json").read_text()) == {"dbs": [cosh_entry("alpha", "/a")]}


def test_restoring_a_name_registered_again_meanwhile_is_refused(tmp_path: Path) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a"), cosh_entry("beta", "/b")])
    removed = unregister_database(directory, "alpha")
    add_database(directory, cosh_entry("alpha", "/another"), active=False)
    before = (directory / "rag_dbs.json").read_bytes()
    with pytest.raises(RegistryError) as refused:
        restore_database(directory, removed)
    assert refused.value.message == (
        f'not restored: {directory / "rag_dbs.json"} has a database called "alpha" again'
    )
    assert (directory / "rag_dbs.json").read_bytes() == before


def test_adding_a_name_already_registered_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a")])
    before = {name: (directory / name).read_bytes() for name in ("rag_dbs.json", "rag_active.json")}
    with pytest.raises(RegistryError) as refused:
        add_database(directory, cosh_entry("alpha", "/elsewhere"), active=True)
    assert refused.value.message == (
        f'not saved: a database called "alpha" is already registered in {directory / "rag_dbs.json"}'
    )
    assert refused.value.hint == "Choose another name."
    assert {name: (directory / name).read_bytes() for name in before} == before


def test_a_replaceable_entry_is_replaced_in_its_place_keeping_the_kept_keys(tmp_path: Path) -> None:
    entries = [cosh_entry("a", "/a"), cosh_entry("demo", "/old", "edited by the user"), cosh_entry("z", "/z")]
    directory = write_registry(tmp_path / "registry", entries, active=["z"])
    register_database(
        directory,
        cosh_entry("demo", "/new", "the demo's own words"),
        replaceable=lambda existing: existing["uri"] == "/old",
        keep=("description", "no-such-key"),
    )
    saved = json.loads((directory / "rag_dbs.json").read_text())["dbs"]
    assert saved == [entries[0], cosh_entry("demo", "/new", "edited by the user"), entries[2]]
    assert json.loads((directory / "rag_active.json").read_text()) == ["z", "demo"]


def test_an_entry_that_is_not_replaceable_raises_the_callers_refusal(tmp_path: Path) -> None:
    entries = [cosh_entry("a", "/a"), cosh_entry("demo", "/mine")]
    directory = write_registry(tmp_path / "registry", entries)
    before = (directory / "rag_dbs.json").read_bytes()
    with pytest.raises(RegistryError, match=r"^demo at /mine is not ours$"):
        register_database(
            directory,
            cosh_entry("demo", "/new"),
            refusal=lambda existing: RegistryError(f"{existing['name']} at {existing['uri']} is not ours"),
        )
    assert (directory / "rag_dbs.json").read_bytes() == before


# --- the registry's lock -----------------------------------------------------------------------------------


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A registry folder whose lock another change holds (``flock`` locks of two opens of the folder
    exclude each other, in one process as across processes), and what releases it."""
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a")])
    holder = os.open(directory, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    released: list[bool] = []

    def release() -> None:
        if not released:  # never twice: the number may belong to another file by then
            released.append(True)
            os.close(holder)

    yield directory, release
    release()


def test_a_change_waits_for_another_change_to_finish_then_lands(
    held_lock: tuple[Path, Callable[[], None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    directory, release = held_lock
    pauses: list[float] = []

    def other_change_finishes(seconds: float) -> None:  # in the pause between two tries: surely tried once
        pauses.append(seconds)
        release()

    monkeypatch.setattr(
        registry_lock, "time", SimpleNamespace(monotonic=time.monotonic, sleep=other_change_finishes)
    )
    add_database(directory, cosh_entry("beta", "/b"), active=False)
    assert len(pauses) == 1
    assert [db.name for db in load_registry(directory).databases] == ["alpha", "beta"]


def test_a_lock_held_past_the_timeout_is_reported_and_nothing_is_changed(
    held_lock: tuple[Path, Callable[[], None]],
) -> None:
    directory, _release = held_lock
    entered = False
    with pytest.raises(RegistryError) as refused, registry_locked(directory, timeout_s=0.0):
        entered = True
    assert not entered
    assert refused.value.message == (
        f"not saved: another program has been changing the registry in {directory} for 0 s"
    )
    assert refused.value.hint == "Try again in a moment. Nothing was changed."


def test_a_registry_folder_that_cannot_be_made_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    directory = tmp_path / "a-file" / "registry"
    with pytest.raises(RegistryError) as refused:
        add_database(directory, cosh_entry("alpha", "/a"), active=True)
    assert refused.value.message == f"not saved: cannot lock the registry folder {directory}: Not a directory"
    assert not directory.exists()


def test_a_registry_folder_that_cannot_be_opened_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a")])
    before = (directory / "rag_dbs.json").read_bytes()
    real_open = os.open

    # A folder that root (these tests' user) cannot open cannot be made: its open is refused here.
    def refuse_the_folder(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path) == directory:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse_the_folder)
    with pytest.raises(RegistryError) as refused:
        set_description(directory, "alpha", "new")
    monkeypatch.undo()
    assert (
        refused.value.message == f"not saved: cannot lock the registry folder {directory}: Permission denied"
    )
    assert (directory / "rag_dbs.json").read_bytes() == before


def test_a_file_system_without_locks_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = write_registry(tmp_path / "registry", [cosh_entry("alpha", "/a")])

    # A mount without flock (some NFS setups) cannot be made in a test: the lock call fails as there.
    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    with pytest.raises(RegistryError) as refused:
        set_description(directory, "alpha", "new")
    assert (
        refused.value.message == f"not saved: cannot lock the registry folder {directory}: No locks available"
    )
    assert refused.value.hint == "Check that the registry folder exists and is writable. Nothing was changed."
