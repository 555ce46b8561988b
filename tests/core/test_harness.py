"""The harness: tool arguments in, agent JSON out, with cosh's rules and error texts."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.base.errors import DatabaseNotFoundError, DimensionMismatchError, InvalidInputError
from recall_gui.core.search.harness import Harness, parse_limit
from tests.kbtools import KnowledgeBase, cosh_entry, write_registry


def run(harness: Harness, args: dict[str, Any]) -> str:
    async def go() -> str:
        try:
            return await harness.recall_search(args)
        finally:
            await harness.aclose()

    return asyncio.run(go())


def test_returns_exactly_the_agent_json(kb: KnowledgeBase) -> None:
    text = run(Harness(kb.registry_dir), {"db_name": kb.name, "query": "resetting a password", "limit": 2})
    data = json.loads(text)
    assert list(data) == ["query", "results"]
    assert data["query"] == "resetting a password"
    assert [list(r) for r in data["results"]] == [["id", "content"], ["id", "content"]]
    assert data["results"][0]["id"] == "pw-reset"
    assert data["results"][0]["content"] == kb.contents[kb.ids.index("pw-reset")]
    assert text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def test_report_carries_timings_distances_and_model(kb: KnowledgeBase) -> None:
    harness = Harness(kb.registry_dir)
    report = asyncio.run(harness.run({"db_name": kb.name, "query": "Berlin"}))
    assert report.result.hits[0].id == "berlin"
    assert report.embed_ms > 0 and report.total_ms >= report.embed_ms
    assert "all-MiniLM-L6-v2" in report.model_used
    assert len(report.result.hits) == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"query": "x"}, "missing 'db_name'"),
        ({"db_name": 3, "query": "x"}, "missing 'db_name'"),
        ({"db_name": "notes"}, "missing 'query'"),
        ({"db_name": "notes", "query": None}, "missing 'query'"),
    ],
)
def test_missing_arguments_use_cosh_texts(kb: KnowledgeBase, args: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        run(Harness(kb.registry_dir), args)
    assert str(caught.value) == message


def test_unknown_database_lists_the_active_ones(tmp_path: Path, kb: KnowledgeBase) -> None:
    registry = write_registry(
        tmp_path / "reg",
        [cosh_entry("b", kb.db_dir), cosh_entry("a", kb.db_dir), cosh_entry("off", kb.db_dir)],
        active=["b", "a"],
    )
    with pytest.raises(DatabaseNotFoundError) as caught:
        run(Harness(registry), {"db_name": "off", "query": "x"})
    assert str(caught.value) == "Database 'off' not found. Active databases: b, a"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 5),
        (0, 0),
        (3, 3),
        (-1, 5),
        (2.5, 5),
        (3.0, 5),
        ("3", 5),
        (True, 5),
        (2**64, 5),
        (2**64 - 1, 2**64 - 1),
    ],
)
def test_limit_follows_cosh(value: Any, expected: int) -> None:
    assert parse_limit(value) == expected


def test_invalid_limit_means_five_results(kb: KnowledgeBase) -> None:
    data = json.loads(run(Harness(kb.registry_dir), {"db_name": kb.name, "query": "x", "limit": -4}))
    assert len(data["results"]) == 5


def test_model_dimension_differing_from_the_table_is_an_error(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb()
    entries = [cosh_entry(kb.name, kb.db_dir, model="BGEBaseENV15")]
    write_registry(kb.registry_dir, entries)
    with pytest.raises(DimensionMismatchError) as caught:
        run(Harness(kb.registry_dir), {"db_name": kb.name, "query": "x"})
    assert str(caught.value) == "vector dimension mismatch: input has 768, but table schema has 384"
    assert caught.value.hint and "BGE-Base-EN-v1.5" in caught.value.hint


def test_registry_changes_are_picked_up_without_a_restart(tmp_path: Path, kb: KnowledgeBase) -> None:
    harness = Harness(kb.registry_dir)
    assert [db.name for db in harness.registry.active] == [kb.name]
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("second", kb.db_dir)])
    assert [db.name for db in harness.registry.active] == [kb.name, "second"]


def test_reload_reads_the_registry_files_even_when_nothing_shows_they_changed(kb: KnowledgeBase) -> None:
    harness = Harness(kb.registry_dir)
    assert [db.name for db in harness.registry.active] == ["notes"]
    stamps = {path: path.stat() for path in kb.registry_dir.iterdir()}
    # Rewritten in place with a name of the same length, and the times put back: same size, inode and time.
    write_registry(kb.registry_dir, [cosh_entry("nodes", kb.db_dir)])
    for path, before in stamps.items():
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [db.name for db in harness.registry.active] == ["notes"]
    assert [db.name for db in harness.reload().active] == ["nodes"]
    assert [db.name for db in harness.registry.active] == ["nodes"]


def test_a_harness_given_a_registry_snapshot_never_reads_the_files(kb: KnowledgeBase) -> None:
    from recall_gui.core.registry import load_registry

    snapshot = load_registry(kb.registry_dir)
    write_registry(kb.registry_dir, [cosh_entry("second", kb.db_dir)])  # the files change; the snapshot not
    harness = Harness(kb.registry_dir, registry=lambda: snapshot)
    assert [db.name for db in harness.registry.active] == [kb.name]
    assert [db.name for db in harness.reload().active] == [kb.name]
    answer = json.loads(run(harness, {"db_name": kb.name, "query": "capital of France", "limit": 1}))
    assert answer["results"] == [{"id": "paris", "content": kb.contents[2]}]
