"""Every file the app reads is a regular file, read with a cap: a FIFO, ``/dev/zero`` or a link to either
in the place of a golden file, a file of queries, the registry, the notes, the settings, the agent log or
one of the caches' files is refused at once with one line naming it, never waited on or read without end.

Each reader runs on a thread of its own and must answer within :data:`PROMPTLY` seconds: a reader that
blocks on a FIFO would otherwise hang the run (a writer opened at teardown releases it)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.base.app_settings import AppSettingsError, SettingsStore
from recall_gui.core.base.errors import GoldenFileError
from recall_gui.core.base.regular_files import FileRefused, read_regular, read_regular_text
from recall_gui.core.embedders.model_caches import find_snapshot
from recall_gui.core.golden.check_history import history_path, load_last_run
from recall_gui.core.golden.golden import read_golden
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.suffix_store import SuffixStore
from recall_gui.core.session.lance_arithmetic import VERDICTS_FILE, LanceArithmetic
from recall_gui.core.session.map_cache import MapCache
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry

T = TypeVar("T")
#: Far longer than refusing takes (microseconds); a reader waiting on a FIFO never answers.
PROMPTLY = 20.0
#: What stands in a file's place: a FIFO, the endless device, a link to each.
KINDS = ("fifo", "dev-zero-link", "fifo-link")
#: How each is named in the one line that refuses it.
NAMED = {
    "fifo": "it is a FIFO, not a regular file",
    "dev-zero-link": "it is a character device, not a regular file",
    "fifo-link": "it is a FIFO, not a regular file",
}


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Callable[[Path, str], Path]]:
    """``place(path, kind)``: puts a FIFO, a link to /dev/zero or a link to a FIFO at ``path``."""
    fifos: list[Path] = []

    def make(path: Path, kind: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "dev-zero-link":
            path.symlink_to("/dev/zero")
        elif kind == "fifo":
            os.mkfifo(path)
            fifos.append(path)
        else:
            target = tmp_path / f"fifo-{len(fifos)}"
            os.mkfifo(target)
            fifos.append(target)
            path.symlink_to(target)
        return path

    yield make
    for fifo in fifos:  # a reader still waiting on one (a failing test) gets the end of the file
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def promptly(call: Callable[[], T]) -> T:
    """``call()``'s result (or its exception), failing when it has not answered within :data:`PROMPTLY`."""
    outcome: concurrent.futures.Future[T] = concurrent.futures.Future()

    def settle() -> None:
        try:
            outcome.set_result(call())
        except BaseException as error:
            outcome.set_exception(error)

    threading.Thread(target=settle, daemon=True).start()
    try:
        return outcome.result(PROMPTLY)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"no answer within {PROMPTLY:g} s: the reader waits on the file or reads it without end")


# --- the one function -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_what_is_not_a_regular_file_is_refused_at_once_naming_it(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    path = place(tmp_path / "file", kind)
    with pytest.raises(FileRefused) as refused:
        promptly(lambda: read_regular(path, 1 << 20))
    assert str(refused.value) == f"{path} was not read: {NAMED[kind]}"


def test_a_folder_is_refused_and_a_file_over_the_cap_too(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="it is a folder, not a regular file"):
        read_regular(tmp_path, 100)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(FileRefused) as refused:
        read_regular(big, 4096)
    assert refused.value.strerror == "it is larger than 4 KB, the most the app reads of such a file"
    assert read_regular(big, 5000) == b"x" * 5000  # up to the cap, all of it


def test_a_regular_file_is_read_whole_and_its_text_as_text_mode_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes("Café\r\nline two\rthree\n".encode())
    assert read_regular(path, 100) == "Café\r\nline two\rthree\n".encode()
    assert read_regular_text(path, 100) == path.read_text(encoding="utf-8") == "Café\nline two\nthree\n"
    link = tmp_path / "link"
    link.symlink_to(path)
    assert read_regular(link, 100) == read_regular(path, 100)  # a link to a file is that file


# --- every reader -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_golden_file_that_is_no_file_is_one_line_naming_it(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    path = place(tmp_path / "golden.json", kind)
    with pytest.raises(GoldenFileError) as refused:
        promptly(lambda: read_golden(path))
    assert refused.value.message == f"{path}: cannot be read ({NAMED[kind]})"


@pytest.mark.parametrize("name", ["rag_dbs.json", "rag_active.json"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_registry_file_that_is_no_file_is_a_problem_of_the_registry(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str, name: str
) -> None:
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    (registry / name).unlink()
    place(registry / name, kind)
    loaded = promptly(lambda: load_registry(registry))
    assert f"{registry / name}: cannot be read: {NAMED[kind]}" in [str(p) for p in loaded.problems]
    if name == "rag_active.json":
        assert [db.name for db in loaded.databases] == ["notes"]  # the other file is still read


@pytest.mark.parametrize("name", ["tool_notes.txt", "tool_override.txt"])
@pytest.mark.parametrize("kind", KINDS)
def test_notes_that_are_no_file_are_reported_and_agents_get_the_generated_list(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str, name: str
) -> None:
    store = SuffixStore(tmp_path / "config")
    path = place(store.directory / name, kind)
    settings = promptly(store.load)
    assert [p.message for p in settings.problems] == [f"{path} cannot be read: {NAMED[kind]}"]
    assert settings.served("GENERATED") == "GENERATED"


def test_saving_the_notes_over_a_fifo_keeps_it_aside_and_writes_a_file(
    tmp_path: Path, place: Callable[[Path, str], Path]
) -> None:
    from recall_gui.core.registry.suffix_store import SuffixMode

    store = SuffixStore(tmp_path / "config")
    place(store.notes_path, "fifo")
    promptly(lambda: store.save(SuffixMode.NOTES, "New words.", ""))
    assert store.notes_path.read_text(encoding="utf-8") == "New words."
    assert (store.directory / "tool_notes.txt.unreadable").is_fifo()


@pytest.mark.parametrize("kind", KINDS)
def test_settings_that_are_no_file_are_one_line_naming_them(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    store = SettingsStore(tmp_path / "config")
    place(store.path, kind)
    with pytest.raises(AppSettingsError) as refused:
        promptly(store.load)
    assert refused.value.message == f"cannot read {store.path}: {NAMED[kind]}"


@pytest.mark.parametrize("name", ["agent-log.jsonl", "agent-log.1.jsonl"])
def test_an_agent_log_file_that_is_a_fifo_is_skipped_with_a_note(
    tmp_path: Path, place: Callable[[Path, str], Path], name: str
) -> None:
    log = LogFiles(tmp_path / "log")
    path = place(log.directory / name, "fifo")
    read = promptly(log.read)
    assert read.records == ()
    assert read.notes == (f"{path} was not read: {NAMED['fifo']}",)


def test_the_agent_log_never_writes_into_a_fifo(tmp_path: Path, place: Callable[[Path, str], Path]) -> None:
    log = LogFiles(tmp_path / "log")
    place(log.current, "fifo")
    with pytest.raises(FileRefused, match="not a regular file"):
        promptly(lambda: log.append(b'{"x": 1}\n' * 10_000, 1 << 30))  # more than a pipe's buffer


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link"])
def test_the_agent_log_never_reads_through_a_link(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    log = LogFiles(tmp_path / "log")
    place(log.current, kind if kind == "dev-zero-link" else "fifo-link")
    read = promptly(log.read)
    assert read.records == () and len(read.notes) == 1 and "is a symbolic link" in read.notes[0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_caches_files_that_are_no_file_are_made_again(
    tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    """The last run of a golden file, the verdict on LanceDB's arithmetic, a kept map and a model
    cache's ``refs/main``: each is read as absent."""
    golden = tmp_path / "golden.json"
    place(history_path(golden), kind)
    assert promptly(lambda: load_last_run(golden)) is None

    verdicts = LanceArithmetic(tmp_path / "cache")
    place(verdicts.folder / VERDICTS_FILE, kind)
    assert promptly(verdicts._remembered) is None

    maps = MapCache(tmp_path / "maps")
    key: Any = ("uri", "t", "vector", 1, "when", "tsne", 0, 10, "l2", "1")
    place(maps.path(key), kind)  # type: ignore[arg-type]
    assert promptly(lambda: maps.get(key)) is None

    repo = tmp_path / "hub" / "models--org--model"
    (repo / "snapshots" / "abc").mkdir(parents=True)
    (repo / "snapshots" / "abc" / "model.onnx").write_bytes(b"onnx")
    place(repo / "refs" / "main", kind)
    assert promptly(lambda: find_snapshot(tmp_path / "hub", "org/model", ("model.onnx",))) == (
        repo / "snapshots" / "abc"
    )


# --- through the command line ----------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link"])
def test_check_hubs_and_reach_refuse_a_file_that_is_no_file_in_one_line(
    kb: KnowledgeBase, tmp_path: Path, place: Callable[[Path, str], Path], kind: str
) -> None:
    path = place(tmp_path / "queries.json", kind)
    registry = ("--registry", str(kb.registry_dir))
    runs = {
        "check": cli("check", *registry, str(path)),
        "hubs": cli("hubs", *registry, "--db", kb.name, "--queries", str(path)),
        "reach": cli("reach", *registry, "--db", kb.name, "--queries", str(path)),
    }
    statuses = {"check": 2, "hubs": 1, "reach": 2}  # each command's status for a run that could not start
    for command, done in runs.items():
        lines = done.stderr.strip().splitlines()
        assert done.returncode == statuses[command] and done.stdout == "", (command, done.stderr)
        assert lines[0] == f"error: {path}: cannot be read ({NAMED[kind]})", (command, done.stderr)


@pytest.mark.process
def test_a_golden_file_of_regular_size_still_runs(kb: KnowledgeBase, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    check = {"db_name": kb.name, "query": "How do I change my password?", "expect": ["pw-reset"], "limit": 3}
    golden.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    done = cli("check", "--registry", str(kb.registry_dir), str(golden))
    assert done.returncode == 0, done.stdout + done.stderr
