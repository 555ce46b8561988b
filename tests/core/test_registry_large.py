"""A large registry file is read element by element (so a worker reading it never holds Python's lock
for long) with the same outcome as ``json.loads``, and a second read reuses the entries written as
before."""

from __future__ import annotations

import json
from pathlib import Path

from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_json import PIECEWISE_BYTES
from tests.kbtools import cosh_entry, write_registry

COUNT = 3_000  # enough entries for a file past PIECEWISE_BYTES


def big_entries() -> list[dict[str, object]]:
    entries: list[dict[str, object]] = [
        {**cosh_entry(f"db-{n}", f"/data/db-{n}", f"notes — {n} \u00e9"), "x-extra": [n, {"k": None}]}
        for n in range(COUNT)
    ]
    entries[7]["embedder"] = {"Cloud": {"provider": "openai", "model": "text-embedding-3-small"}}
    entries[9]["table"] = "other_table"
    return entries


def test_a_large_file_reads_as_json_loads_reads_it(tmp_path: Path) -> None:
    entries = big_entries()
    directory = write_registry(tmp_path, entries, active=[e["name"] for e in entries[::3]])  # type: ignore[misc]
    assert (directory / "rag_dbs.json").stat().st_size > PIECEWISE_BYTES
    registry = load_registry(directory)
    assert registry.problems == ()
    assert [db.name for db in registry.databases] == [e["name"] for e in entries]
    assert [db.description for db in registry.databases] == [e["description"] for e in entries]
    assert {db.name for db in registry.active} == {e["name"] for e in entries[::3]}
    assert registry.get("db-7").embedder.provider == "openai"  # type: ignore[union-attr]
    assert registry.get("db-9").table_name == "other_table"  # type: ignore[union-attr]
    assert [db.name for db in registry.by_activity][:2] == ["db-0", "db-1002"]  # active ones, by name


def test_a_large_file_that_is_not_json_gets_json_s_own_message(tmp_path: Path) -> None:
    entries = big_entries()
    directory = write_registry(tmp_path, entries)
    text = (directory / "rag_dbs.json").read_text(encoding="utf-8")
    broken = text[: len(text) // 2] + "}" + text[len(text) // 2 :]
    (directory / "rag_dbs.json").write_text(broken, encoding="utf-8")
    try:
        json.loads(broken)
    except json.JSONDecodeError as error:
        expected = f"line {error.lineno} column {error.colno}"
    (problem,) = [p for p in load_registry(directory).problems if p.file.name == "rag_dbs.json"]
    assert "is not valid JSON" in problem.message and expected in problem.message


def test_of_two_dbs_arrays_the_last_counts_as_in_json_loads(tmp_path: Path) -> None:
    first = json.dumps([cosh_entry(f"old-{n}", f"/o/{n}") for n in range(COUNT)], indent=2)
    last = json.dumps([cosh_entry(f"new-{n}", f"/n/{n}") for n in range(COUNT)], indent=2)
    (tmp_path / "rag_dbs.json").write_text(f'{{"dbs": {first}, "dbs": {last}}}', encoding="utf-8")
    names = [db.name for db in load_registry(tmp_path).databases]
    assert names == [f"new-{n}" for n in range(COUNT)]


def test_a_second_read_reuses_unchanged_entries_and_sees_every_change(tmp_path: Path) -> None:
    entries = big_entries()
    directory = write_registry(tmp_path, entries, active=["db-1", "db-2"])
    before = load_registry(directory)
    entries[5] = {**entries[5], "description": "rewritten"}
    write_registry(directory, entries, active=["db-1", "db-3"])
    after = load_registry(directory, before)
    assert after.get("db-5").description == "rewritten"  # type: ignore[union-attr]
    assert [db.name for db in after.active] == ["db-1", "db-3"]
    same = [a is b for a, b in zip(before.databases, after.databases, strict=True)]
    assert same.count(False) == 3  # db-5 rewritten, db-2 and db-3 switched
    assert not same[2] and not same[3] and not same[5]
    assert after.databases == load_registry(directory).databases  # as a fresh read
