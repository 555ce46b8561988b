"""`recall-gui check`: golden checks judged on the agent's own results, with their exit statuses, against a
real knowledge base embedded with the real model."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.core.test_cli import cli
from tests.kbtools import EXACT_MODEL_JSON, KnowledgeBase, cosh_entry, snapshot_tree, write_registry

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


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
        "recall 1.000, MRR 1.000, nDCG 1.000 (means over 2 checks)",
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
    found = agent_ids.index("pw-reset") + 1
    # By hand: one of two expected ids found at rank `found`; the best order would put both at 1 and 2.
    metrics = {
        "recall": 0.5,
        "reciprocal_rank": 1 / found,
        "ndcg": (1 / math.log2(found + 1)) / (1 + 1 / math.log2(3)),
    }
    assert report == {
        "passed": 0,
        "failed": 1,
        "metrics": {"recall": 0.5, "mrr": 1 / found, "ndcg": metrics["ndcg"]},
        "checks": [
            {
                "db_name": kb.name,
                "searched": kb.name,
                "query": query,
                "limit": 3,
                "passed": False,
                "expected": [
                    {"id": "pw-reset", "rank": agent_ids.index("pw-reset") + 1},
                    {"id": "tides", "rank": None},
                ],
                "results": agent_ids,
                "metrics": metrics,
                "model": EXACT_MODEL_JSON,
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
        f"error: {path}, check 1 could not run: Database 'off' not found. Active databases: {kb.name}"
    ]


def test_metrics_per_check_and_their_means_are_the_ones_computed_by_hand(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    questions = ["How do I change my password?", "What is the capital of France?"]
    path = golden(
        tmp_path,
        [
            {
                "db_name": kb.name,
                "query": questions[0],
                "expect": [kb.ids[0], kb.ids[1], kb.ids[2]],
                "limit": 4,
            },
            {"db_name": kb.name, "query": questions[1], "expect": ["paris"], "limit": 2},
        ],
    )
    done = cli("check", "--registry", str(kb.registry_dir), "--json", str(path))
    report = json.loads(done.stdout)
    expected = []
    for question, wanted, limit in ((questions[0], kb.ids[:3], 4), (questions[1], ("paris",), 2)):
        agent = cli(
            "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", str(limit), question
        )
        ids = [result["id"] for result in json.loads(agent.stdout)["results"]]
        ranks = [ids.index(w) + 1 for w in wanted if w in ids]
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(wanted), limit) + 1))
        expected.append(
            {
                "recall": len(ranks) / len(wanted),
                "reciprocal_rank": 1 / min(ranks) if ranks else 0.0,
                "ndcg": sum(1 / math.log2(r + 1) for r in ranks) / ideal,
            }
        )
    for check, by_hand in zip(report["checks"], expected, strict=True):
        assert check["metrics"] == pytest.approx(by_hand)
    assert report["metrics"] == pytest.approx(
        {
            "recall": (expected[0]["recall"] + expected[1]["recall"]) / 2,
            "mrr": (expected[0]["reciprocal_rank"] + expected[1]["reciprocal_rank"]) / 2,
            "ndcg": (expected[0]["ndcg"] + expected[1]["ndcg"]) / 2,
        }
    )


def test_junit_report_has_a_case_per_check_and_a_failure_naming_the_missing_id(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    from xml.etree import ElementTree

    path = golden(
        tmp_path,
        [
            {"db_name": kb.name, "query": "What is the capital of France?", "expect": ["paris"]},
            {
                "db_name": kb.name,
                "query": "How do I change my password?",
                "expect": ["pw-reset", "tides"],
                "limit": 3,
            },
            {"db_name": "nowhere", "query": "anything", "expect": ["x"]},
        ],
    )
    out = tmp_path / "reports" / "report.xml"
    done = cli("check", "--registry", str(kb.registry_dir), "--json", "--junit", str(out), str(path))
    assert done.returncode == 2  # a check could not run: as without --junit
    assert json.loads(done.stdout)["failed"] == 1  # --json still prints
    suite = ElementTree.parse(out).getroot()
    assert (suite.tag, suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "testsuite",
        "3",
        "1",
        "1",
    )
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == [
        f'{kb.name}: "What is the capital of France?" (limit 5)',
        f'{kb.name}: "How do I change my password?" (limit 3)',
        'nowhere: "anything" (limit 5)',
    ]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "missing from the top 3: tides"
    assert failure.text is not None and "tides: missing" in failure.text.splitlines()
    assert any(line.startswith("pw-reset: rank ") for line in failure.text.splitlines())
    assert cases[2].find("error") is not None
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.xml"]  # no temporary file left


def test_a_junit_report_that_cannot_be_written_is_refused_with_status_2(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = golden(
        tmp_path, [{"db_name": kb.name, "query": "What is the capital of France?", "expect": ["paris"]}]
    )
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    done = cli("check", "--registry", str(kb.registry_dir), "--junit", str(blocker / "report.xml"), str(path))
    assert done.returncode == 2
    assert "the JUnit report was not written" in done.stderr


@pytest.mark.parametrize(
    ("check", "said"),
    [
        (
            '{"db_name": "notes", "query": "q", "expect": ["paris"], "limit": ' + "9" * 5000 + "}",
            ", line 2, check 1, limit: a number of 5,000 digits, too long to read (at most 4,000)",
        ),
        (
            '{"db_name": "notes", "query": "q", "expect": ["paris"], "x": ' + "[" * 900 + "]" * 900 + "}",
            ", line 2, check 1, x: nested more than 64 levels deep (at checks[0].x[0][0][0]…)",
        ),
        (
            '{"db_name": "notes", "query": "q", "expect": ' + "[" * 100_000 + "]" * 100_000 + "}",
            ": nested too deeply to read (more than 64 levels)",
        ),
    ],
    ids=["a limit of 5000 digits", "900 levels", "100000 levels"],
)
def test_a_long_number_or_deep_nesting_in_a_golden_file_is_named_with_status_2(
    kb: KnowledgeBase, tmp_path: Path, check: str, said: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"checks": [\n  ' + check + "\n]}", encoding="utf-8")
    for command in (["check"], ["compare", "--version", "1"]):
        done = cli(*command, "--registry", str(kb.registry_dir), str(bad))
        assert done.returncode == 2, done.stderr
        assert done.stdout == ""
        assert done.stderr.startswith(f"error: {bad}{said}\n"), done.stderr
        assert "Traceback" not in done.stderr


def test_a_golden_query_longer_than_the_bound_is_refused_naming_the_check(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = golden(tmp_path, [{"db_name": kb.name, "query": "x" * 102_401, "expect": ["paris"]}])
    done = cli("check", "--registry", str(kb.registry_dir), str(path))
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"error: {path}, line 3, check 1, query: the query is 102,401 characters long; "
        "at most 102,400 are searched\n"
    )
