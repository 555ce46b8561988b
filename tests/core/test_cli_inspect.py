"""`recall-gui versions`, `recall-gui diff` and `recall-gui search --where`, run as real subprocesses on a
table with a real history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.core.test_cli import cli
from tests.inspecttools import NAME, History, lancedb_versions, write_history
from tests.kbtools import snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> History:
    return write_history(tmp_path_factory.mktemp("history"), embedder)


def registry(history: History) -> list[str]:
    return ["--registry", str(history.kb.registry_dir), "--db", NAME]


def test_versions_lists_numbers_times_rows_and_tags(history: History) -> None:
    done = cli("versions", *registry(history), "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [(v["version"], v["rows"]) for v in listed] == [
        (1, 12),
        (2, 13),
        (3, 12),
        (4, 12),
        (5, 12),
        (6, 12),
    ]
    assert [v["tags"] for v in listed][2] == [history.tag]
    assert [v["latest"] for v in listed] == [False] * 5 + [True]
    table = cli("versions", *registry(history)).stdout.splitlines()
    assert table[0].split() == ["VERSION", "TIME", "ROWS", "TAGS"]
    assert table[3].split()[-1] == history.tag and table[-1].endswith("(latest)")


def test_diff_prints_the_ids_added_removed_and_changed(history: History) -> None:
    before = snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)
    done = cli("diff", *registry(history), "--from", "1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "from": 1,
        "to": 6,
        "added": ["kyoto", "paris-2"],
        "removed": ["coffee", "unicode"],
        "changed": ["berlin", "tides"],
        "by": "id",
    }
    step = json.loads(cli("diff", *registry(history), "--from", "3", "--to", "4", "--json").stdout)
    assert (step["from"], step["to"], step["changed"], step["added"]) == (3, 4, ["tides"], [])
    text = cli("diff", *registry(history), "--from", "1").stdout.splitlines()
    assert text[0] == "notes: version 1 -> 6, by id: 2 added, 2 removed, 2 changed"
    assert "~ berlin (content and vector)" in text and "+ kyoto" in text and "- coffee" in text
    assert (snapshot_tree(history.kb.db_dir), lancedb_versions(history.kb.db_dir)) == before


def test_diff_refuses_a_version_the_table_does_not_have(history: History) -> None:
    done = cli("diff", *registry(history), "--from", "7")
    assert done.returncode == 1 and done.stdout == ""
    assert 'error: table "notes" has no version 7 (its versions: 1–6)' in done.stderr


@pytest.mark.parametrize(
    ("where", "expected_sources"),
    [("source = 'doc2.md'", {"doc2.md"}), ("page > 8", None), ("meta.lang = 'en'", None)],
)
def test_search_where_searches_only_the_rows_the_filter_keeps(
    history: History, where: str, expected_sources: set[str] | None
) -> None:
    import lancedb

    done = cli("search", *registry(history), "--limit", "20", "--where", where, "capital city")
    assert done.returncode == 0, done.stderr
    found = [hit["id"] for hit in json.loads(done.stdout)["results"]]
    table = lancedb.connect(str(history.kb.db_dir)).open_table(NAME)
    kept = set(table.search().where(where).limit(100).to_arrow().column("id").to_pylist())
    assert found and set(found) <= kept and len(found) == min(20, len(kept))
    if expected_sources is not None:
        assert {
            row["source"] for row in table.search().where(where).to_arrow().to_pylist()
        } == expected_sources


def test_search_without_where_stays_the_agents_and_a_bad_filter_is_refused(history: History) -> None:
    plain = cli("search", *registry(history), "--limit", "3", "capital city")
    agent = json.loads(plain.stdout)
    assert set(agent) == {"query", "results"} and len(agent["results"]) == 3
    bad = cli("search", *registry(history), "--where", "pages < 3", "capital city")
    assert bad.returncode == 1 and bad.stdout == ""
    assert "there is no column named pages (did you mean page?)" in bad.stderr
    assert "hint: Columns of this table: id, content, source, page, meta, meta.lang" in bad.stderr
    empty = cli("search", *registry(history), "--where", " ", "capital city")
    assert empty.returncode == 1 and "--where was given an empty filter" in empty.stderr


def test_a_database_not_in_the_registry_is_named(history: History, tmp_path: Path) -> None:
    done = cli("versions", "--registry", str(history.kb.registry_dir), "--db", "nope")
    assert done.returncode == 1 and "Database 'nope' not found. Registered databases: notes" in done.stderr
