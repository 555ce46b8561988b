"""`check --versions` (which version broke a check) and `compare` (A/B), against LanceDB's own answers on
each version and knowledge base."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import lancedb

from tests.core.test_cli import cli
from tests.kbtools import EXACT_MODEL_JSON, KnowledgeBase, snapshot_tree

FRANCE = "What is the capital of France?"
PASSWORD = "How do I change my password?"


def golden(tmp_path: Path, checks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    return path


def lance_ids(
    embedder: Any, db_dir: Path, table: str, query: str, limit: int, version: int | None = None
) -> list[str]:
    """The oracle: LanceDB's flat search (l2, as the registry's entries use) with the real model."""
    opened = lancedb.connect(str(db_dir)).open_table(table)
    if version is not None:
        opened.checkout(version)
    found = opened.search(embedder.embed_sync(query)).distance_type("l2").limit(limit).to_list()
    return [row["id"] for row in found]


def remove_row(kb: KnowledgeBase, entry_id: str) -> None:
    """Another program deletes a row: version 2 of the table."""
    lancedb.connect(str(kb.db_dir)).open_table(kb.name).delete(f"id = '{entry_id}'")


def by_hand(ids: list[str], expect: list[str], limit: int) -> dict[str, float]:
    ranks = [ids.index(e) + 1 for e in expect if e in ids]
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(expect), limit) + 1))
    return {
        "recall": len(ranks) / len(expect),
        "reciprocal_rank": 1 / min(ranks) if ranks else 0.0,
        "ndcg": sum(1 / math.log2(r + 1) for r in ranks) / ideal,
    }


def test_check_versions_says_which_version_broke_a_check(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")
    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3},
            {"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 3},
        ],
    )
    before = snapshot_tree(kb.db_dir)
    done = cli("check", "--registry", str(kb.registry_dir), "--versions", "--json", str(path))
    assert done.returncode == 1, done.stderr  # the latest version fails a check
    report = json.loads(done.stdout)
    assert [(v["db_name"], v["version"], v["passed"], v["failed"]) for v in report["versions"]] == [
        (kb.name, 1, 2, 0),
        (kb.name, 2, 1, 1),
    ]
    for check, (query, expect) in zip(
        report["checks"], ((FRANCE, "paris"), (PASSWORD, "pw-reset")), strict=True
    ):
        assert [b["version"] for b in check["by_version"]] == [1, 2]
        for run in check["by_version"]:
            ids = lance_ids(embedder, kb.db_dir, kb.name, query, 3, run["version"])
            rank = ids.index(expect) + 1 if expect in ids else None
            assert run["expected"] == [{"id": expect, "rank": rank}]
            assert run["passed"] is (rank is not None)
            assert run["metrics"] == by_hand(ids, [expect], 3)
    plain = cli("check", "--registry", str(kb.registry_dir), "--versions", str(path))
    assert f'broke at version 2: {kb.name}  "{FRANCE}"' in plain.stdout.splitlines()
    assert snapshot_tree(kb.db_dir) == before  # old versions are read-only checkouts


def test_compare_a_version_with_the_latest_lists_what_was_lost(
    kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    remove_row(kb, "paris")
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    done = cli("compare", "--registry", str(kb.registry_dir), "--version", "1", "--json", str(path))
    assert done.returncode == 1, done.stderr  # B lost the expected id A had
    report = json.loads(done.stdout)
    a_ids = lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3, 1)
    b_ids = lance_ids(embedder, kb.db_dir, kb.name, FRANCE, 3)
    assert report["a"]["metrics"] == {
        "recall": 1.0,
        "mrr": 1 / (a_ids.index("paris") + 1),
        "ndcg": by_hand(a_ids, ["paris"], 3)["ndcg"],
    }
    assert report["b"]["metrics"] == {"recall": 0.0, "mrr": 0.0, "ndcg": 0.0}
    (check,) = report["checks"]
    a_expected = [{"id": "paris", "rank": a_ids.index("paris") + 1}]
    assert check["a"] == {"passed": True, "expected": a_expected, "model": EXACT_MODEL_JSON}
    assert check["b"] == {
        "passed": False,
        "expected": [{"id": "paris", "rank": None}],
        "model": EXACT_MODEL_JSON,
    }
    assert check["lost"] == [i for i in a_ids if i not in b_ids]
    assert check["gained"] == [i for i in b_ids if i not in a_ids]


def test_compare_with_another_knowledge_base_uses_its_own_search(
    make_kb: Any, tmp_path: Path, embedder: Any
) -> None:
    kb = make_kb()
    other = make_kb(name="notes")  # the same entries in another folder, registered elsewhere
    remove_row(other, "pw-reset")
    path = golden(tmp_path, [{"db_name": kb.name, "query": PASSWORD, "expect": ["pw-reset"], "limit": 2}])
    done = cli(
        "compare",
        "--registry",
        str(kb.registry_dir),
        "--path",
        str(other.db_dir),
        "--table",
        "notes",
        "--json",
        str(path),
    )
    assert done.returncode == 1, done.stderr
    (check,) = json.loads(done.stdout)["checks"]
    a_ids = lance_ids(embedder, kb.db_dir, kb.name, PASSWORD, 2)
    b_ids = lance_ids(embedder, other.db_dir, "notes", PASSWORD, 2)
    assert check["lost"] == [i for i in a_ids if i not in b_ids] and "pw-reset" in check["lost"]
    assert check["gained"] == [i for i in b_ids if i not in a_ids]
    same = cli(
        "compare", "--registry", str(kb.registry_dir), "--path", str(kb.db_dir), "--table", kb.name, str(path)
    )
    assert same.returncode == 0, same.stderr


def test_compare_refuses_no_side_or_two(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"]}])
    for extra in ((), ("--version", "1", "--db", kb.name)):
        done = cli("compare", "--registry", str(kb.registry_dir), *extra, str(path))
        assert done.returncode != 0
        assert "give exactly one of --version V, --db OTHER or --path PATH" in done.stderr
