"""`recall-gui hubs`: entries returned for many queries, counted from the agent's own results (the oracle:
`recall-gui search`, the JSON an agent gets, counted by hand here)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from recall_gui.core.agent_log.agent_log import LogFiles
from recall_gui.core.search.harness import Harness
from tests.core.test_cli import cli
from tests.kbtools import EXACT_MODEL_JSON, KnowledgeBase, snapshot_tree
from tests.logtools import logged_call, write_records

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

QUESTIONS = [
    "How do I change my password?",
    "What is the capital of France?",
    "Why do tides happen?",
    "How do I reset a forgotten login?",
]


def agent_ids(kb: KnowledgeBase, query: str, limit: int) -> list[str]:
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", str(limit), query)
    assert done.returncode == 0, done.stderr
    return [result["id"] for result in json.loads(done.stdout)["results"]]


def counted_by_hand(kb: KnowledgeBase, asked: list[tuple[str, int]]) -> list[dict[str, object]]:
    counts = Counter(found for query, limit in asked for found in set(agent_ids(kb, query, limit)))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"id": i, "returned_for": n, "share": n / len(asked)} for i, n in ranked]


def test_hubs_of_a_text_file_of_queries_count_each_entry_once_per_query(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUESTIONS) + "\n\n", encoding="utf-8")
    before = snapshot_tree(kb.db_dir)
    done = cli(
        "hubs",
        "--registry",
        str(kb.registry_dir),
        "--db",
        kb.name,
        "--queries",
        str(queries),
        "--limit",
        "3",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "queries": 4,
        "limit": 3,
        "hubs": counted_by_hand(kb, [(q, 3) for q in QUESTIONS]),
        "model": EXACT_MODEL_JSON,
    }
    assert snapshot_tree(kb.db_dir) == before


def test_a_golden_file_searches_each_check_at_its_own_limit_and_names_hubs_in_plain_output(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    golden = tmp_path / "golden.json"
    checks = [
        {"db_name": kb.name, "query": QUESTIONS[0], "expect": ["pw-reset"], "limit": 2},
        {"db_name": kb.name, "query": QUESTIONS[1], "expect": ["paris"], "limit": 4},
        {"db_name": "other", "query": "not this one", "expect": ["x"]},
    ]
    golden.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    done = cli(
        "hubs", "--registry", str(kb.registry_dir), "--db", kb.name, "--queries", str(golden), "--json"
    )
    expected = counted_by_hand(kb, [(QUESTIONS[0], 2), (QUESTIONS[1], 4)])
    assert json.loads(done.stdout) == {
        "queries": 2,
        "limit": None,
        "hubs": expected,
        "model": EXACT_MODEL_JSON,
    }
    plain = cli(
        "hubs",
        "--registry",
        str(kb.registry_dir),
        "--db",
        kb.name,
        "--queries",
        str(golden),
        "--share",
        "0.5",
    )
    named = [line.split()[1].rstrip(":") for line in plain.stdout.splitlines() if line.startswith("hub ")]
    assert named == [hub["id"] for hub in expected if hub["share"] > 0.5]


def test_hubs_of_the_queries_agents_sent(kb: KnowledgeBase) -> None:
    import asyncio

    harness = Harness(kb.registry_dir)
    try:
        records = [logged_call(harness, {"db_name": kb.name, "query": q, "limit": 2}) for q in QUESTIONS[:3]]
    finally:
        asyncio.run(harness.aclose())
    write_records(LogFiles(), records)
    done = cli("hubs", "--registry", str(kb.registry_dir), "--db", kb.name, "--log", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "queries": 3,
        "limit": 2,
        "hubs": counted_by_hand(kb, [(q, 2) for q in QUESTIONS[:3]]),
        "model": EXACT_MODEL_JSON,
    }


def test_options_that_cannot_be_honoured_are_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("a question\n", encoding="utf-8")
    base = ("hubs", "--registry", str(kb.registry_dir))
    for extra, words in (
        (("--queries", str(queries)), "give one of --db NAME or --path PATH"),
        (("--db", kb.name, "--queries", str(queries), "--limit", "0"), "--limit must be between 1 and 100"),
        (("--path", str(kb.db_dir), "--log"), "--log takes the queries agents sent"),
        (("--db", kb.name, "--queries", str(queries), "--share", "1.5"), "--share must be"),
    ):
        done = cli(*base, *extra)
        assert done.returncode != 0 and words in done.stderr, (extra, done.stderr)
