"""Registry faults: whatever is in cosh's files, nothing crashes, every problem is named with its file, a
file that failed to parse is never written, and a save interrupted at any point leaves the old file or the
new one — never a mix."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall_gui.cli import main as cli_main
from recall_gui.core.base.errors import ConnectError, DatabaseNotFoundError, RecallError, RegistryError
from recall_gui.core.registry import registry_changes
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_changes import (
    register_database,
    set_active,
    set_description,
    unregister_database,
)
from recall_gui.core.registry.registry_types import FileStamp
from recall_gui.core.registry.suffix import build_tool_suffix
from recall_gui.core.search.harness import Harness
from tests.kbtools import KnowledgeBase, cosh_entry, view_entry, write_registry

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"dbs": [cosh_entry("a", "/x/a"), cosh_entry("b", "/x/b")]}
GOOD_TEXT = json.dumps(GOOD, indent=2)

# --- hand-picked faults ---------------------------------------------------------------------------------

BAD_DBS_FILES = {
    "empty": "",
    "whitespace": "  \n\t ",
    "truncated": GOOD_TEXT[: len(GOOD_TEXT) // 2],
    "trailing comma": '{"dbs": [],}',
    "single quotes": "{'dbs': []}",
    "top-level array": "[]",
    "top-level string": '"dbs"',
    "top-level null": "null",
    "dbs not an array": '{"dbs": {"a": 1}}',
    "no dbs key": '{"databases": []}',
    "byte order mark": "\ufeff" + GOOD_TEXT,
    "deeply nested": "[" * 100_000 + "]" * 100_000,
}


def assert_clear(problem_text: str, path: Path) -> None:
    assert str(path) in problem_text
    assert len(problem_text) > len(str(path)) + 10  # says something beyond the file name


@pytest.mark.parametrize("case", sorted(BAD_DBS_FILES))
def test_a_broken_dbs_file_is_reported_and_never_written(case: str, tmp_path: Path) -> None:
    path = tmp_path / "rag_dbs.json"
    path.write_text(BAD_DBS_FILES[case], encoding="utf-8")
    (tmp_path / "rag_active.json").write_text('["a"]', encoding="utf-8")
    before = path.read_bytes()
    registry = load_registry(tmp_path)
    assert registry.databases == ()
    (problem,) = [p for p in registry.problems if p.file == path]
    assert_clear(str(problem), path)
    for save in (
        lambda: set_description(tmp_path, "a", "new"),
        lambda: register_database(tmp_path, cosh_entry("c", "/c")),
    ):
        with pytest.raises(RegistryError) as caught:
            save()
        assert str(path) in caught.value.message and caught.value.hint
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rag_active.json", "rag_dbs.json"]


def test_invalid_utf8_and_a_directory_in_place_of_a_file_are_reported(tmp_path: Path) -> None:
    (tmp_path / "rag_dbs.json").write_bytes(b'{"dbs": [{"name": "\xff\xfe"}]}')
    (tmp_path / "rag_active.json").mkdir()
    registry = load_registry(tmp_path)
    messages = " | ".join(str(p) for p in registry.problems)
    assert "rag_dbs.json: cannot be read" in messages and "utf-8" in messages
    assert "rag_active.json: cannot be read" in messages
    with pytest.raises(RegistryError):
        set_active(tmp_path, "a", True)
    assert (tmp_path / "rag_active.json").is_dir()


WRONG_ENTRIES: list[tuple[Any, str]] = [
    ("just a string", "is not a JSON object"),
    ({"uri": "/x", "embedder": {"Local": {"model": "AllMiniLML6V2"}}}, '"name" must be a non-empty string'),
    ({**cosh_entry("n", "/x"), "name": 7}, '"name" must be a non-empty string'),
    ({**cosh_entry("n", "/x"), "name": ""}, '"name" must be a non-empty string'),
    ({**cosh_entry("n", "/x"), "uri": ["/x"]}, '"uri" must be a non-empty string'),
    ({**cosh_entry("n", "/x"), "description": 3}, '"description" must be a string'),
    ({**cosh_entry("n", "/x"), "embedder": "AllMiniLML6V2"}, '"embedder" must be'),
    ({**cosh_entry("n", "/x"), "embedder": {"Local": {}}}, '"embedder.Local.model" must be a string'),
    ({**cosh_entry("n", "/x"), "embedder": {"Cloud": {"model": "m"}}}, '"embedder.Cloud.provider"'),
    ({**cosh_entry("n", "/x"), "embedder": {"Remote": {"model": "m"}}}, 'unknown embedder kind "Remote"'),
    ({**cosh_entry("n", "/x"), "storage_options": {"region": 1}}, '"storage_options" must map'),
    ({**cosh_entry("n", "/x"), "table": 5}, '"table" must be a string'),
    ({**cosh_entry("n", "/x"), "vector_column": False}, '"vector_column" must be a string'),
]


@pytest.mark.parametrize(("raw", "reason"), WRONG_ENTRIES)
def test_an_entry_of_wrong_types_is_skipped_with_its_reason(tmp_path: Path, raw: Any, reason: str) -> None:
    write_registry(tmp_path, [cosh_entry("ok", "/ok"), raw], active=["ok"])
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.databases] == ["ok"]
    (problem,) = [p for p in registry.problems if "entry 2" in p.message]
    assert reason in problem.message and problem.file == tmp_path / "rag_dbs.json"
    set_description(tmp_path, "ok", "still saved")  # a bad entry elsewhere does not block saving
    saved = json.loads((tmp_path / "rag_dbs.json").read_text(encoding="utf-8"))
    assert saved["dbs"][1] == raw  # and is kept exactly as it was


def test_unknown_fields_are_ignored_when_reading_and_kept_when_saving(tmp_path: Path) -> None:
    entry = {**cosh_entry("a", "/x"), "owner": {"team": "search", "tags": ["x", 1, None]}, "version": 3}
    (tmp_path / "rag_dbs.json").write_text(
        json.dumps({"dbs": [entry], "schema": 2, "comment": "kept"}), encoding="utf-8"
    )
    registry = load_registry(tmp_path)
    assert registry.problems == () and registry.databases[0].name == "a"
    set_active(tmp_path, "a", True)
    set_description(tmp_path, "a", "changed")
    saved = json.loads((tmp_path / "rag_dbs.json").read_text(encoding="utf-8"))
    assert saved == {"dbs": [{**entry, "description": "changed"}], "schema": 2, "comment": "kept"}


def test_active_file_faults_are_reported(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    (tmp_path / "rag_active.json").write_text('{"a": true}', encoding="utf-8")
    registry = load_registry(tmp_path)
    assert registry.active == ()
    assert any("must be a JSON array" in p.message for p in registry.problems)
    (tmp_path / "rag_active.json").write_text('["a", 3, null]', encoding="utf-8")
    registry = load_registry(tmp_path)
    assert [db.name for db in registry.active] == ["a"]
    assert any("not strings were ignored" in p.message for p in registry.problems)


NAMES = ['my "quoted" notes', "name with spaces", "ünïcödé — 日本語 🚀", "it's", "tab\there", "back\\slash"]


def test_names_with_quotes_spaces_and_non_ascii_work_everywhere(kb: KnowledgeBase, capsys: Any) -> None:
    entries = [view_entry(kb, name) for name in NAMES]
    write_registry(kb.registry_dir, [*entries, cosh_entry("untabled name", kb.db_dir)])
    registry = load_registry(kb.registry_dir)
    assert [db.name for db in registry.databases] == [*NAMES, "untabled name"]
    assert all(f"- Name: {name}\n" in build_tool_suffix(registry) for name in NAMES)

    async def go(name: str) -> str:
        harness = Harness(kb.registry_dir)
        try:
            report = await harness.run({"db_name": name, "query": "capital of France", "limit": 1})
            return report.result.hits[0].id
        finally:
            await harness.aclose()

    assert [asyncio.run(go(name)) for name in NAMES] == ["paris"] * len(NAMES)
    with pytest.raises(ConnectError, match='table "untabled name" not found'):
        asyncio.run(go("untabled name"))
    set_description(kb.registry_dir, NAMES[2], "described")
    set_active(kb.registry_dir, NAMES[0], False)
    registry = load_registry(kb.registry_dir)
    assert registry.get(NAMES[2]).description == "described"  # type: ignore[union-attr]
    assert NAMES[0] not in [db.name for db in registry.active]
    assert cli_main(["search", "--registry", str(kb.registry_dir), "--db", NAMES[1], "Berlin"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["id"] == "berlin"


def test_duplicate_names_use_the_first_entry_and_say_so(kb: KnowledgeBase, tmp_path: Path) -> None:
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry(kb.name, tmp_path / "other")])
    registry = load_registry(kb.registry_dir)
    assert [db.uri for db in registry.databases] == [str(kb.db_dir)]
    assert any(f'duplicate name "{kb.name}"' in p.message for p in registry.problems)


def test_a_vanished_folder_or_table_is_a_clear_error(kb: KnowledgeBase, tmp_path: Path, capsys: Any) -> None:
    write_registry(
        kb.registry_dir,
        [cosh_entry("gone", tmp_path / "deleted"), {**cosh_entry("notable", kb.db_dir), "table": "dropped"}],
    )
    args = ["search", "--registry", str(kb.registry_dir), "--db"]
    assert cli_main([*args, "gone", "x"]) == 1
    err = capsys.readouterr().err
    assert (
        f"error: failed to connect to vector db: database folder {tmp_path / 'deleted'} does not exist" in err
    )
    assert "hint: " in err and not (tmp_path / "deleted").exists()
    assert cli_main([*args, "notable", "x"]) == 1
    assert 'table "dropped" not found' in capsys.readouterr().err


def test_missing_registry_files_mean_no_databases_a_missing_folder_is_named(
    tmp_path: Path, capsys: Any
) -> None:
    (tmp_path / "empty").mkdir()
    assert cli_main(["list", "--registry", str(tmp_path / "empty")]) == 0
    assert f"(no databases registered in {tmp_path / 'empty'})" in capsys.readouterr().out
    assert cli_main(["search", "--registry", str(tmp_path / "empty"), "--db", "a", "x"]) == 1
    assert "Database 'a' not found. Active databases: (none)" in capsys.readouterr().err
    assert cli_main(["list", "--registry", str(tmp_path / "nowhere")]) == 1
    assert f"the registry folder {tmp_path / 'nowhere'} (given with --registry) does not exist" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "nowhere").exists()


# --- another program rewriting the registry ---------------------------------------------------------------


def test_a_rewrite_of_the_same_size_and_time_is_noticed(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("aaaa", "/x")])
    harness_view = load_registry(tmp_path)
    path = tmp_path / "rag_dbs.json"
    stat = path.stat()
    replacement = tmp_path / "new.json"
    replacement.write_text(path.read_text(encoding="utf-8").replace("aaaa", "bbbb"), encoding="utf-8")
    os.replace(replacement, path)  # as cosh or an editor saving atomically
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert harness_view.changed_on_disk()


def test_a_change_made_while_saving_is_kept_not_clobbered(tmp_path: Path, monkeypatch: Any) -> None:
    """Another program writes between this app's read and its rename: the save is redone on top of it."""
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    from recall_gui.core.registry import registry_types as registry_module

    real_of = FileStamp.of
    calls = {"n": 0}

    def of_with_interference(path: Path) -> FileStamp:
        calls["n"] += 1
        if calls["n"] == 2:  # the check just before the rename, on the first attempt
            entries = json.loads(path.read_text(encoding="utf-8"))["dbs"] + [cosh_entry("cosh-added", "/c")]
            path.write_text(json.dumps({"dbs": entries}, indent=2), encoding="utf-8")
        return real_of(path)

    monkeypatch.setattr(registry_module.FileStamp, "of", staticmethod(of_with_interference))
    set_description(tmp_path, "a", "mine")
    saved = json.loads((tmp_path / "rag_dbs.json").read_text(encoding="utf-8"))
    assert [(e["name"], e["description"]) for e in saved["dbs"]] == [
        ("a", "mine"),
        ("cosh-added", "cosh-added knowledge base"),
    ]
    assert calls["n"] >= 4  # read, check (changed), read again, check


def test_saving_while_another_program_keeps_rewriting_never_breaks_the_file(tmp_path: Path) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x"), cosh_entry("b", "/y")])
    path = tmp_path / "rag_dbs.json"
    stop = threading.Event()
    errors: list[BaseException] = []

    def other_program() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, OSError):
                continue
            data["dbs"][1]["description"] = f"rewritten {n}"
            tmp = tmp_path / "other.tmp"
            tmp.write_text(json.dumps(data, indent=2), encoding="utf-8")
            os.replace(tmp, path)

    writer = threading.Thread(target=other_program)
    writer.start()
    try:
        for i in range(150):
            try:
                set_description(tmp_path, "a", f"mine {i}")
                load_registry(tmp_path)
            except RegistryError as error:  # "kept changing while saving" is an allowed, clear outcome
                assert "kept changing" in error.message
            except BaseException as error:  # anything else is a failure
                errors.append(error)
    finally:
        stop.set()
        writer.join()
    assert errors == []
    final = load_registry(tmp_path)
    assert final.problems == () and [db.name for db in final.databases] == ["a", "b"]


def test_a_file_another_program_empties_during_a_save_is_not_written_over(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Another program truncates the file (to write it anew) just after this app read it: the save sees
    the change, reads again, finds the file empty and refuses, leaving it for the other program."""
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    path = tmp_path / "rag_dbs.json"
    real_read_json = registry_changes.read_json

    def read_then_other_program_truncates(read_path: Path, *args: Any) -> Any:
        data = real_read_json(read_path, *args)
        if read_path == path and path.stat().st_size:
            path.write_bytes(b"")
        return data

    monkeypatch.setattr(registry_changes, "read_json", read_then_other_program_truncates)
    with pytest.raises(RegistryError) as refused:
        set_description(tmp_path, "a", "mine")
    assert refused.value.message == f"not saved: {path}: is empty (expected JSON); fix or delete the file"
    assert path.read_bytes() == b""


def test_an_entry_another_program_removes_while_unregistering_is_reported(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """cosh (which takes no lock) removes the entry while this app takes it out of rag_active.json: the
    removal from rag_dbs.json finds it gone and says so, and keeps cosh's file as cosh wrote it."""
    write_registry(tmp_path, [cosh_entry("a", "/x"), cosh_entry("b", "/y")])
    dbs = tmp_path / "rag_dbs.json"
    real_write = registry_changes.write_text_atomic
    cosh_text = json.dumps({"dbs": [cosh_entry("b", "/y")]}, indent=2)

    def cosh_removes_it_meanwhile(path: Path, text: str, **kwargs: Any) -> bool:
        if path.name == "rag_active.json":
            dbs.write_text(cosh_text, encoding="utf-8")
        return real_write(path, text, **kwargs)

    monkeypatch.setattr(registry_changes, "write_text_atomic", cosh_removes_it_meanwhile)
    with pytest.raises(DatabaseNotFoundError) as refused:
        unregister_database(tmp_path, "a")
    assert refused.value.message == f'no database called "a" in {dbs}'
    assert dbs.read_text(encoding="utf-8") == cosh_text
    assert json.loads((tmp_path / "rag_active.json").read_text(encoding="utf-8")) == ["b"]


# --- interrupted saves -----------------------------------------------------------------------------------

CRASH_SCRIPT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from recall_gui.core.registry import registry_changes as registry
    point, directory = sys.argv[1], Path(sys.argv[2])
    real_fdopen, real_fsync, real_replace = os.fdopen, os.fsync, os.replace

    class HalfWriter:
        def __init__(self, handle): self.handle = handle
        def __enter__(self): return self
        def __exit__(self, *exc): return False
        def write(self, text):
            self.handle.write(text[: len(text) // 2]); self.handle.flush(); os._exit(9)
        def __getattr__(self, name): return getattr(self.handle, name)

    if point == "mid-write":
        os.fdopen = lambda *a, **k: HalfWriter(real_fdopen(*a, **k))
    elif point == "before-fsync":
        os.fsync = lambda fd: os._exit(9)
    elif point == "before-rename":
        os.replace = lambda *a: os._exit(9)
    elif point == "after-rename":
        def replace_then_die(*a):
            real_replace(*a); os._exit(9)
        os.replace = replace_then_die
    registry.set_description(directory, "a", "NEW " + "x" * 20000)
    """
)


@pytest.mark.process
@pytest.mark.parametrize("point", ["mid-write", "before-fsync", "before-rename", "after-rename", "none"])
def test_a_save_killed_at_any_point_leaves_the_old_or_the_new_file(tmp_path: Path, point: str) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x"), cosh_entry("b", "/y")])
    old = (tmp_path / "rag_dbs.json").read_bytes()
    done = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, point, str(tmp_path)],
        check=False,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert done.returncode == (0 if point == "none" else 9), done.stderr
    now = (tmp_path / "rag_dbs.json").read_bytes()
    new_entry_description = "NEW " + "x" * 20000
    if point in ("after-rename", "none"):
        assert json.loads(now)["dbs"][0]["description"] == new_entry_description
    else:
        assert now == old
    registry = load_registry(tmp_path)  # a leftover temporary file is ignored
    assert registry.problems == () and [db.name for db in registry.databases] == ["a", "b"]


def test_a_save_that_fails_cleans_up_and_keeps_the_old_file(tmp_path: Path, monkeypatch: Any) -> None:
    write_registry(tmp_path, [cosh_entry("a", "/x")])
    old = (tmp_path / "rag_dbs.json").read_bytes()

    def refuse(*args: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(RegistryError, match=r"not saved: cannot write .*rag_dbs\.json: Permission denied"):
        set_description(tmp_path, "a", "new")
    assert (tmp_path / "rag_dbs.json").read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rag_active.json", "rag_dbs.json"]


# --- property-based ----------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
entry_like = st.fixed_dictionaries(
    {},
    optional={
        "name": st.text(max_size=10) | json_values,
        "uri": st.text(max_size=10) | json_values,
        "description": st.text(max_size=10) | json_values,
        "embedder": st.sampled_from(
            [{"Local": {"model": "AllMiniLML6V2"}}, {"Cloud": {"provider": "openai", "model": "m"}}]
        )
        | json_values,
        "created_at": json_values,
        "table": json_values,
        "storage_options": json_values,
        "id_column": json_values,
    },
)
dbs_documents = st.one_of(
    json_values,
    st.fixed_dictionaries({"dbs": st.lists(entry_like | json_values, max_size=5)}),
)
active_documents = st.one_of(json_values, st.lists(st.text(max_size=10) | json_values, max_size=5))


#: How the registry words a file it could not parse at all.
UNPARSED = ("not valid JSON", "is empty", "cannot be read", "nested too deeply", "JSON null")


def check_registry_dir(directory: Path) -> None:
    """The properties every registry directory must have, whatever its files hold."""
    dbs, active = directory / "rag_dbs.json", directory / "rag_active.json"
    before = {p: p.read_bytes() for p in (dbs, active) if p.exists()}
    registry = load_registry(directory)  # never raises
    for problem in registry.problems:
        assert problem.file in (dbs, active) and problem.message.strip()
    for db in registry.databases:
        assert isinstance(db.name, str) and db.name and isinstance(db.uri, str) and db.uri
        assert isinstance(db.embedder.label, str)
    assert len({db.name for db in registry.databases}) == len(registry.databases)
    build_tool_suffix(registry)
    name = registry.databases[0].name if registry.databases else "a"
    for save in (lambda: set_description(directory, name, "d"), lambda: set_active(directory, name, True)):
        try:
            save()
        except RegistryError as error:
            assert error.message.startswith("not saved: ") and error.hint
    # A file that did not parse is byte-for-byte what it was.
    for path, content in before.items():
        if any(p.file == path and any(s in p.message for s in UNPARSED) for p in registry.problems):
            assert path.read_bytes() == content
    load_registry(directory)  # and whatever was saved reads back


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dbs=dbs_documents, active=active_documents)
def test_any_json_in_the_registry_files_is_handled(tmp_path: Path, dbs: Any, active: Any) -> None:
    directory = tmp_path / f"r{abs(hash((repr(dbs), repr(active))))}"
    directory.mkdir(exist_ok=True)
    (directory / "rag_dbs.json").write_text(json.dumps(dbs), encoding="utf-8")
    (directory / "rag_active.json").write_text(json.dumps(active), encoding="utf-8")
    check_registry_dir(directory)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=len(GOOD_TEXT)), junk=st.binary(max_size=8))
def test_any_truncation_or_corruption_of_a_registry_is_handled(tmp_path: Path, cut: int, junk: bytes) -> None:
    directory = tmp_path / f"t{cut}-{junk.hex()}"
    directory.mkdir(exist_ok=True)
    content = GOOD_TEXT.encode()[:cut] + junk
    (directory / "rag_dbs.json").write_bytes(content)
    (directory / "rag_active.json").write_text('["a", "b"]', encoding="utf-8")
    check_registry_dir(directory)


tool_arguments = st.dictionaries(
    st.sampled_from(["db_name", "query", "limit", "extra"]) | st.text(max_size=5),
    json_values
    | st.sampled_from(["notes", "missing", "", " ", "\ud800", "a\x00b", "🚀"])
    | st.integers(min_value=-(2**70), max_value=2**70),
    max_size=4,
)


@pytest.fixture(scope="module")
def module_kb(tmp_path_factory: pytest.TempPathFactory, passage_vectors: Any) -> KnowledgeBase:
    from tests.kbtools import PASSAGES, write_lance_table

    base = tmp_path_factory.mktemp("harness-kb")
    ids, contents = tuple(PASSAGES), tuple(PASSAGES.values())
    write_lance_table(base / "db", "notes", ids, contents, passage_vectors)
    registry = write_registry(base / "registry", [cosh_entry("notes", base / "db")])
    return KnowledgeBase("notes", base / "db", registry, ids, contents, passage_vectors)


@settings(max_examples=200, deadline=None)
@given(args=tool_arguments)
def test_any_tool_arguments_give_results_or_a_clear_error(
    module_kb: KnowledgeBase, args: dict[str, Any]
) -> None:
    from recall_gui.core.search.harness import parse_limit

    async def go() -> str:
        harness = Harness(module_kb.registry_dir)
        try:
            return await harness.recall_search(args)
        finally:
            await harness.aclose()

    db, query = args.get("db_name"), args.get("query")
    expected: str | None = None
    if not isinstance(db, str):
        expected = "missing 'db_name'"
    elif not isinstance(query, str):
        expected = "missing 'query'"
    elif query.encode("utf-8", "surrogatepass").decode("utf-8", "replace") != query:
        expected = "'query' is not valid Unicode text (it holds an unpaired surrogate)"
    elif db != "notes":
        expected = f"Database '{db}' not found. Active databases: notes"
    if expected is not None:
        with pytest.raises(RecallError) as caught:
            asyncio.run(go())
        assert caught.value.message == expected
        return
    data = json.loads(asyncio.run(go()))
    assert list(data) == ["query", "results"] and data["query"] == query
    assert len(data["results"]) == min(parse_limit(args.get("limit")), 12)
