"""Golden checks that name a folder's table (``uri`` and ``table``) rather than a database: they run on the
folder until a registered database reads that table, then on it as the agent searches it, whatever its
name; ``recall-gui check`` says which. Files that name ``db_name`` read and write as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.golden.golden import FolderTable, GoldenCheck, GoldenFile, parse_golden
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree, view_entry, write_registry

QUERY = "What is the capital of France?"


def test_a_folder_check_is_written_with_uri_table_and_model_and_reads_back_the_same() -> None:
    check = GoldenCheck(None, QUERY, ("paris",), 3, FolderTable("/kb/lancedb", "notes", "AllMiniLML6V2"))
    data = json.loads(GoldenFile((check,)).to_json())
    assert data == {
        "checks": [
            {
                "uri": "/kb/lancedb",
                "table": "notes",
                "model": "AllMiniLML6V2",
                "query": QUERY,
                "expect": ["paris"],
                "limit": 3,
            }
        ]
    }
    assert parse_golden(json.dumps(data), "g.json").checks == (check,)


def test_a_file_that_names_db_name_is_written_back_as_it_was() -> None:
    text = (
        '{\n  "checks": [\n    {\n      "db_name": "notes",\n      "query": "q",\n      "expect": [\n'
        '        "x"\n      ]\n    }\n  ]\n}\n'
    )
    golden = parse_golden(text, "g.json")
    assert golden.checks[0].db_name == "notes" and golden.checks[0].folder is None
    assert golden.to_json() == text


def _lines(kb: KnowledgeBase, registry: Path, path: Path) -> tuple[int, list[str], Any]:
    done = cli("check", "--registry", str(registry), str(path))
    as_json = cli("check", "--registry", str(registry), "--json", str(path))
    return done.returncode, done.stdout.splitlines() + done.stderr.splitlines(), json.loads(as_json.stdout)


@pytest.mark.process
def test_a_folder_check_runs_on_the_folder_then_on_the_database_registered_for_it(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = tmp_path / "golden.json"
    check = {"uri": str(kb.db_dir), "table": kb.name, "query": QUERY, "expect": ["paris"]}
    path.write_text(json.dumps({"checks": [check]}), encoding="utf-8")
    written, kb_before = path.read_bytes(), snapshot_tree(kb.db_dir)
    registry = write_registry(tmp_path / "registry", [])

    status, lines, report = _lines(kb, registry, path)
    assert status == 0, lines
    assert lines[0] == f'PASS   folder {kb.db_dir}, table {kb.name} (not registered)  "{QUERY}" (limit 5)'
    assert report["checks"][0]["searched"] == f"folder {kb.db_dir}, table {kb.name} (not registered)"
    assert report["checks"][0]["uri"] == str(kb.db_dir) and "db_name" not in report["checks"][0]

    # Registered as "faq" (its table keeps its name), inactive: agents cannot search it, and it says so.
    entry = view_entry(kb, "faq")
    write_registry(registry, [entry], active=[])
    status, lines, report = _lines(kb, registry, path)
    assert status == 2
    assert lines[0] == f'ERROR  faq (registered, not active; the check names its folder)  "{QUERY}" (limit 5)'
    assert lines[1] == (
        "       the check's folder is registered as “faq”, which is not active: agents cannot search it"
    )

    # Active: the check is the agent's own call for "faq".
    write_registry(registry, [entry])
    status, lines, report = _lines(kb, registry, path)
    assert status == 0, lines
    assert lines[0] == f'PASS   faq (registered; the check names its folder)  "{QUERY}" (limit 5)'
    agent = cli("search", "--registry", str(registry), "--db", "faq", QUERY)
    assert report["checks"][0]["results"] == [hit["id"] for hit in json.loads(agent.stdout)["results"]]
    assert path.read_bytes() == written and snapshot_tree(kb.db_dir) == kb_before
