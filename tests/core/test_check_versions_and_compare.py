"""`check --versions` (which version broke a check) and `compare` (A/B), against LanceDB's own answers on
each version and knowledge base."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import lancedb

from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.qt.conftest import loop, open_window  # noqa: F401 (fixtures of the window test)

FRANCE = "What is the capital of France?"
PASSWORD = "How do I change my password?"


def golden(tmp_path: Path, checks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    return path


def lance_ids(
    embedder: Any, db_dir: Path, table: str, query: str, limit: int, version: int | None = None
) -> list[str]:
    """The oracle: LanceDB's flat search (l2, as the registry's entries use) with the packaged model."""
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
    assert check["a"] == {"passed": True, "expected": [{"id": "paris", "rank": a_ids.index("paris") + 1}]}
    assert check["b"] == {"passed": False, "expected": [{"id": "paris", "rank": None}]}
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


def test_compare_says_a_side_that_could_not_run_is_an_error_not_a_fail(make_kb: Any, tmp_path: Path) -> None:
    """A at a version that is not on disk, B a registered database whose folder is gone: each is an
    error naming the side and why (status 2), with nothing lost or gained, never FAIL."""
    import shutil

    from tests.kbtools import cosh_entry, write_registry

    kb = make_kb()
    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    done = cli("compare", "--registry", str(kb.registry_dir), "--version", "7", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {path}, check 1: A could not run it: ")
    assert "version 7" in done.stderr.splitlines()[0]
    lines = done.stdout.splitlines()
    assert lines[0] == "A: no check ran"
    assert lines[2].startswith("A ERROR, B PASS  ")
    assert lines[3].startswith("       A could not run: ") and "lost" not in done.stdout

    gone = make_kb(name="gone")
    write_registry(kb.registry_dir, [cosh_entry(kb.name, kb.db_dir), cosh_entry("gone", gone.db_dir)])
    shutil.rmtree(gone.db_dir)
    done = cli("compare", "--registry", str(kb.registry_dir), "--db", "gone", "--json", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"error: {path}, check 1: B could not run it: ")
    (check,) = json.loads(done.stdout)["checks"]
    assert "error" in check["b"] and "error" not in check["a"]
    assert check["lost"] == [] and check["gained"] == []


def test_the_checks_page_shows_a_side_that_could_not_run_as_such(
    kb: KnowledgeBase,
    open_window: Any,  # noqa: F811
    loop: Any,  # noqa: F811
    tmp_path: Path,
) -> None:
    from tests.qt.conftest import run

    path = golden(tmp_path, [{"db_name": kb.name, "query": FRANCE, "expect": ["paris"], "limit": 3}])
    page = open_window(kb.registry_dir).checks
    assert page.open_file(path)
    comparison = run(loop, page.compare(version=7))
    assert comparison is not None and [(n, side) for n, side, _ in comparison.unusable] == [(1, "A")]
    view = page.compare_view
    assert view.note.text().splitlines()[-1].startswith("Check 1: A could not run it: ")
    assert [view.table.item(0, column).text() for column in (1, 2, 3)] == ["could not run", "pass", ""]
    assert "version 7" in view.table.item(0, 1).toolTip().lower()
