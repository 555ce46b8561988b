"""``similar``, ``rank``, ``duplicates``, ``versions`` and ``diff`` on an unregistered folder (``--path``),
through the command line, each answer compared with LanceDB's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.core.test_cli import cli
from tests.kbtools import PASSAGES, snapshot_tree, write_lance_table

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


@pytest.fixture
def folder(tmp_path: Path, passage_vectors: Any) -> Path:
    """A folder no registry names: a table "notes" with an exact copy of "paris" ("paris-copy"), then a
    second version with a row added and a third where "tides" got another vector."""
    import lancedb
    import pyarrow as pa

    ids, texts = list(PASSAGES), list(PASSAGES.values())
    vectors = np.asarray(passage_vectors, np.float32)
    paris = ids.index("paris")
    db = tmp_path / "kb"
    write_lance_table(
        db, "notes", [*ids, "paris-copy"], [*texts, texts[paris]], np.vstack([vectors, vectors[paris]])
    )
    table = lancedb.connect(str(db)).open_table("notes")
    extra = vectors[ids.index("coffee")] * 0.5 + vectors[ids.index("tides")] * 0.5
    table.add(
        pa.table(
            {
                "id": pa.array(["mixed"]),
                "content": pa.array(["coffee and tides"]),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(extra.astype(np.float32)), 384),
            }
        )
    )
    table.update(where="id = 'tides'", values={"vector": (vectors[ids.index("tides")] * -1).tolist()})
    return db


def lance_table(folder: Path, version: int | None = None) -> Any:
    import lancedb

    table = lancedb.connect(str(folder)).open_table("notes")
    if version is not None:
        table.checkout(version)
    return table


def vector_of(table: Any, entry_id: str) -> Any:
    rows = table.search().where(f"id = '{entry_id}'").to_arrow()
    return np.asarray(rows.column("vector")[0].as_py(), np.float32)


def test_similar_and_rank_on_a_folder_answer_as_lancedb_ranks(folder: Path, embedder: Any) -> None:
    before = snapshot_tree(folder)
    table = lance_table(folder)
    coffee = vector_of(table, "coffee")
    lance = table.search(coffee).distance_type("l2").limit(4).to_arrow()

    done = cli("similar", "--path", str(folder), "--id", "coffee", "--limit", "4")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert [r["id"] for r in results] == lance.column("id").to_pylist()
    assert [r["distance"] for r in results] == pytest.approx(lance.column("_distance").to_pylist(), abs=1e-5)

    # rank: the place of "tides" for the query "coffee", as LanceDB's full ranking of that query puts it
    query = np.asarray(embedder.embed_sync("coffee"), np.float32)
    order = table.search(query).distance_type("l2").limit(100).to_arrow().column("id").to_pylist()
    ranked = cli("rank", "--path", str(folder), "--table", "notes", "--id", "tides", "--limit", "2", "coffee")
    assert ranked.returncode == 0, ranked.stderr
    place = json.loads(ranked.stdout)
    assert place["rank"] == order.index("tides") + 1
    assert place["in_results"] is (place["rank"] <= 2)
    assert place["agent_searches"] is False  # no registry names the folder
    assert snapshot_tree(folder) == before


def test_duplicates_on_a_folder_finds_the_copy_lancedb_puts_at_distance_zero(folder: Path) -> None:
    table = lance_table(folder)
    near = table.search(vector_of(table, "paris")).distance_type("cosine").limit(3).to_arrow()
    within = [
        i
        for i, d in zip(near.column("id").to_pylist(), near.column("_distance").to_pylist(), strict=True)
        if d <= 0.05
    ]

    done = cli("duplicates", "--path", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    groups = json.loads(done.stdout)["groups"]
    assert [sorted(group["ids"]) for group in groups] == [sorted(within)]
    assert sorted(within) == ["paris", "paris-copy"]


def test_versions_and_diff_on_a_folder_are_lancedbs(folder: Path) -> None:
    table = lance_table(folder)
    listed = table.list_versions()
    done = cli("versions", "--path", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    versions = json.loads(done.stdout)
    assert [v["version"] for v in versions] == [v["version"] for v in listed]
    assert [v["rows"] for v in versions] == [lance_table(folder, v["version"]).count_rows() for v in listed]

    first, last = listed[0]["version"], listed[-1]["version"]
    old = lance_table(folder, first).to_arrow()
    new = lance_table(folder, last).to_arrow()
    old_rows = dict(zip(old.column("id").to_pylist(), old.column("vector").to_pylist(), strict=True))
    new_rows = dict(zip(new.column("id").to_pylist(), new.column("vector").to_pylist(), strict=True))
    diffed = cli("diff", "--path", str(folder), "--from", str(first), "--json")
    assert diffed.returncode == 0, diffed.stderr
    found = json.loads(diffed.stdout)
    assert (found["from"], found["to"]) == (first, last)
    assert sorted(found["added"]) == sorted(set(new_rows) - set(old_rows))
    assert sorted(found["removed"]) == sorted(set(old_rows) - set(new_rows))
    assert sorted(found["changed"]) == sorted(
        i for i in old_rows.keys() & new_rows.keys() if old_rows[i] != new_rows[i]
    )
    text = cli("diff", "--path", str(folder), "--table", "notes", "--from", str(first))
    assert text.stdout.startswith(f"notes: version {first} -> {last}")


@pytest.mark.parametrize("command", ["similar", "rank", "duplicates", "versions", "diff"])
def test_db_and_path_together_or_neither_are_refused(command: str, folder: Path, tmp_path: Path) -> None:
    tail = {
        "similar": ["--id", "paris"],
        "rank": ["--id", "paris", "capital"],
        "duplicates": [],
        "versions": [],
        "diff": ["--from", "1"],
    }[command]
    both = cli(command, "--db", "notes", "--path", str(folder), *tail)
    neither = cli(command, *tail)
    for done in (both, neither):
        assert done.returncode == 1
        assert "error: give one of --db NAME or --path PATH" in done.stderr
    table_alone = cli(command, "--db", "notes", "--table", "notes", *tail)
    assert table_alone.returncode == 1
    assert "--table only apply to a folder given with --path" in table_alone.stderr
    missing = cli(command, "--path", str(folder), "--table", "nope", *tail)
    assert missing.returncode == 1
    assert 'table "nope" not found' in missing.stderr
