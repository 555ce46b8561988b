"""`recall-gui check`: golden checks judged on the agent's own results, with their exit statuses, against a
real knowledge base embedded with the packaged model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, cosh_entry, snapshot_tree, write_registry


def golden(tmp_path: Path, checks: list[dict[str, Any]], name: str = "golden.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"checks": checks}, indent=2), encoding="utf-8")
    return path


def test_a_golden_file_that_holds_passes_with_status_0_and_the_ranks(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    before = snapshot_tree(kb.db_dir)
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": "What is the capital of France?", "expect": ["paris"]},
            {"db_name": kb.name, "query": "How do I change my password?", "expect": ["pw-reset"], "limit": 2},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'PASS   notes  "What is the capital of France?" (limit 5)',
        "       paris: rank 1",
        'PASS   notes  "How do I change my password?" (limit 2)',
        "       pw-reset: rank 1",
        "2 passed, 0 failed",
    ]
    assert snapshot_tree(kb.db_dir) == before


def test_an_expected_id_that_is_not_retrieved_fails_with_status_1(kb: KnowledgeBase, tmp_path: Path) -> None:
    query = "How do I change my password?"
    path = golden(
        tmp_path, [{"db_name": kb.name, "query": query, "expect": ["pw-reset", "tides"], "limit": 3}]
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    agent = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "3", query)
    agent_ids = [result["id"] for result in json.loads(agent.stdout)["results"]]
    assert "tides" not in agent_ids
    assert report == {
        "passed": 0,
        "failed": 1,
        "checks": [
            {
                "db_name": kb.name,
                "query": query,
                "limit": 3,
                "passed": False,
                "expected": [
                    {"id": "pw-reset", "rank": agent_ids.index("pw-reset") + 1},
                    {"id": "tides", "rank": None},
                ],
                "results": agent_ids,
            }
        ],
    }
    text = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert text.returncode == 1
    assert "       tides: missing" in text.stdout.splitlines()
    assert text.stdout.splitlines()[0].startswith("FAIL ")


def test_a_file_that_cannot_be_used_gives_status_2_and_one_line(kb: KnowledgeBase, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"checks": [\n  {"db_name": "notes", "query": "q", "expect": "paris"}\n]}', encoding="utf-8"
    )
    done = cli("check", "--registry", str(kb.registry_dir), str(bad))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"error: {bad}, line 2, check 1, expect: 'paris' is not of type 'array'\n"
    missing = cli("check", "--registry", str(kb.registry_dir), str(tmp_path / "nope.json"))
    assert missing.returncode == 2
    assert missing.stderr == f"error: {tmp_path / 'nope.json'}: no such file\n"


def test_a_database_that_cannot_be_searched_gives_status_2_and_the_others_still_run(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    # The agent only searches active databases: an inactive one is as unusable as an unknown one.
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("off", kb.db_dir)], [kb.name])
    path = golden(
        tmp_path,
        [
            {"db_name": "off", "query": "capital", "expect": ["paris"]},
            {"db_name": kb.name, "query": "What is the capital of France?", "expect": ["paris"]},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert (report["passed"], report["failed"], report["errors"]) == (1, 0, 1)
    assert report["checks"][0]["error"] == f"Database 'off' not found. Active databases: {kb.name}"
    assert report["checks"][0]["passed"] is False
    assert report["checks"][1]["passed"] is True
    assert done.stderr.splitlines() == [
        f"error: a check could not run: Database 'off' not found. Active databases: {kb.name}"
    ]
