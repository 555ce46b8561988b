"""Golden checks on a knowledge base written as cosh writes one (every row's id is "content"): a check that
expects "content" is refused, never passed; a check naming entries by their content's sha256 passes and
fails as LanceDB's own ranks say; recall, MRR and nDCG count entries, not ids."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from recall_gui.core.golden.expected import ContentRef, expected_ranks
from recall_gui.core.golden.golden import parse_golden
from recall_gui.core.golden.retrieval_metrics import check_metrics
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase

QUERY = "How do I change my password?"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def golden(tmp_path: Path, checks: list[dict[str, Any]]) -> Path:
    path = tmp_path / "golden.json"
    path.write_text(json.dumps({"checks": checks}, indent=2), encoding="utf-8")
    return path


def lance_order(kb: KnowledgeBase, embedder: Any, query: str, limit: int) -> list[str]:
    """The contents LanceDB itself returns for ``query``, nearest first (its flat search, cosh's L2)."""
    import lancedb

    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    rows = table.search(embedder.embed_sync(query)).distance_type("l2").limit(limit).to_list()
    return [row["content"] for row in rows]


@pytest.mark.process
def test_a_check_expecting_the_shared_id_exits_2_and_says_why(cosh_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = golden(tmp_path, [{"db_name": "docs", "query": QUERY, "expect": ["content"]}])
    done = cli("check", "--registry", str(cosh_kb.registry_dir), str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    rows = len(cosh_kb.ids)
    assert done.stderr.startswith(
        f'error: {path}, check 1 could not run: it expects the id "content", which {rows} rows of its '
        "table share: any of them would pass it"
    )
    assert '"content_sha256"' in done.stderr and '"ids_may_repeat": true' in done.stderr
    assert done.stdout.splitlines()[0] == f'ERROR  docs  "{QUERY}" (limit 5)'
    assert f'note: docs: ids repeat in this table: all {rows} rows share the id "content"' in done.stdout


@pytest.mark.process
def test_the_refusal_is_an_error_in_json_and_junit(cosh_kb: KnowledgeBase, tmp_path: Path) -> None:
    path = golden(tmp_path, [{"db_name": "docs", "query": QUERY, "expect": ["content"]}])
    junit = tmp_path / "report.xml"
    done = cli("check", "--registry", str(cosh_kb.registry_dir), "--json", "--junit", str(junit), str(path))
    assert done.returncode == 2
    report = json.loads(done.stdout)
    assert (report["passed"], report["failed"], report["errors"]) == (0, 0, 1)
    check = report["checks"][0]
    assert check["passed"] is False and check["error"].startswith('it expects the id "content"')
    assert "metrics" not in check and report["metrics"] is None
    assert check["ids_repeat"]["shared_ids"] == {"content": len(cosh_kb.ids)}
    suite = ElementTree.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    error = suite.find("testcase/error")
    assert error is not None and error.get("message", "").startswith('it expects the id "content"')


@pytest.mark.process
def test_ids_may_repeat_lets_the_id_check_run_and_counts_one_entry(
    cosh_kb: KnowledgeBase, tmp_path: Path
) -> None:
    check = {"db_name": "docs", "query": QUERY, "expect": ["content"], "ids_may_repeat": True, "limit": 3}
    done = cli("check", "--registry", str(cosh_kb.registry_dir), "--json", str(golden(tmp_path, [check])))
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)["checks"][0]
    assert outcome["expected"] == [{"id": "content", "rank": 1}]
    assert outcome["metrics"] == {"recall": 1.0, "reciprocal_rank": 1.0, "ndcg": 1.0}


@pytest.mark.process
def test_checks_by_content_pass_and_fail_as_lancedb_ranks_say(
    cosh_kb: KnowledgeBase, tmp_path: Path, embedder: Any
) -> None:
    order = lance_order(cosh_kb, embedder, QUERY, len(cosh_kb.ids))
    second, fourth = order[1], order[3]
    passing = {"db_name": "docs", "query": QUERY, "expect": [{"content_sha256": sha(second)}], "limit": 2}
    failing = {"db_name": "docs", "query": QUERY, "expect": [{"content_sha256": sha(fourth)}], "limit": 3}
    path = golden(tmp_path, [passing, failing])
    done = cli("check", "--registry", str(cosh_kb.registry_dir), str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [f'PASS   docs  "{QUERY}" (limit 2)', f"       content·{sha(second)[:8]}: rank 2"]
    assert lines[2:4] == [f'FAIL   docs  "{QUERY}" (limit 3)', f"       sha256 {sha(fourth)[:8]}…: missing"]

    path = golden(tmp_path, [failing, {**failing, "limit": 4}])
    done = cli("check", "--registry", str(cosh_kb.registry_dir), "--json", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    missed, found = json.loads(done.stdout)["checks"]
    assert missed["expected"] == [{"content_sha256": sha(fourth), "rank": None}]
    assert missed["results"] == [{"id": "content", "content_sha256": sha(text)} for text in order[:3]]
    assert found["expected"] == [{"content_sha256": sha(fourth), "id": "content", "rank": 4}]


# --- counting entries, not ids --------------------------------------------------------------------------


def test_one_result_answers_one_expectation_and_the_metrics_count_entries() -> None:
    a, b, c = ("a" * 64), ("b" * 64), ("c" * 64)
    ids = ["content", "content", "content"]
    # Two expectations: the content b (at rank 2) and any "content" (rank 1 is free: b took rank 2).
    ranks = expected_ranks([ContentRef(b), "content"], ids, [a, b, c])
    assert [(r.rank, r.found_sha256) for r in ranks] == [(2, b), (1, a)]
    # The id does not take rank 2 from the content that names it, whatever the order in the file.
    ranks = expected_ranks(["content", ContentRef(a)], ids, [a, b, c])
    assert [r.rank for r in ranks] == [2, 1]
    # A content named twice over (by an id too) is one entry: the id takes the next "content".
    assert [r.rank for r in expected_ranks([ContentRef(c), "content"], ids[:1], [c])] == [1, None]
    # By hand: expected at ranks 1 and 3 of 3, limit 3: recall 1, RR 1, nDCG (1 + 1/2) / (1 + 1/log2 3).
    ranks = expected_ranks([ContentRef(a), ContentRef(c)], ids, [a, b, c])
    metrics = check_metrics([r.rank for r in ranks], 3)
    assert metrics.recall == 1.0 and metrics.reciprocal_rank == 1.0
    assert metrics.ndcg == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)), abs=1e-12)
    # One of two found at rank 2: recall 1/2, RR 1/2, nDCG (1/log2 3) / (1 + 1/log2 3).
    ranks = expected_ranks([ContentRef(b), ContentRef("d" * 64)], ids, [a, b, c])
    metrics = check_metrics([r.rank for r in ranks], 3)
    assert (metrics.recall, metrics.reciprocal_rank) == (0.5, 0.5)
    assert metrics.ndcg == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)), abs=1e-12)


def test_a_golden_file_reads_and_writes_the_content_form() -> None:
    digest = "0123456789abcdef" * 4
    text = json.dumps(
        {"checks": [{"db_name": "docs", "query": "q", "expect": ["x", {"content_sha256": digest}]}]}
    )
    check = parse_golden(text, "g.json").checks[0]
    assert check.expect == ("x", ContentRef(digest)) and check.ids_may_repeat is False
    assert check.to_dict()["expect"] == ["x", {"content_sha256": digest}]
    assert check.expect_text == f"x, sha256:{digest}"


@pytest.mark.parametrize(
    ("element", "said"),
    [
        ({"content_sha256": "ABC"}, "expect[0].content_sha256: 'ABC' does not match"),
        ({"content_sha256": "a" * 64, "id": "x"}, "expect[0]: "),
        ({"sha": "a" * 64}, "expect[0]: "),
    ],
)
def test_a_malformed_content_element_is_refused_naming_where(element: dict[str, str], said: str) -> None:
    from recall_gui.core.base import GoldenFileError

    text = json.dumps({"checks": [{"db_name": "docs", "query": "q", "expect": [element]}]})
    with pytest.raises(GoldenFileError) as raised:
        parse_golden(text, "g.json")
    assert raised.value.message.startswith(f"g.json, line 1, check 1, {said}"), raised.value.message


def test_the_check_editor_reads_a_content_among_the_ids() -> None:
    from recall_gui.core.golden.golden import GoldenCheck, edited

    digest = "ab" * 32
    check = edited(GoldenCheck("docs", "q", ("x",)), ids=f"x, sha256:{digest}, sha256:nothex")
    assert check.expect == ("x", ContentRef(digest), "sha256:nothex")
    assert check.expect_text == f"x, sha256:{digest}, sha256:nothex"


def test_compare_names_what_b_lost_and_gained_by_content() -> None:
    from recall_gui.core.golden.check_comparison import Comparison
    from recall_gui.core.golden.checks import CheckOutcome
    from recall_gui.core.golden.golden import GoldenCheck
    from recall_gui.core.storage.entry_names import IdRepeats

    a, b, c = "a" * 64, "b" * 64, "c" * 64
    check = GoldenCheck("docs", "q", (ContentRef(a),), 2)
    shared = IdRepeats(9, {"content": 9})
    side_a = CheckOutcome(check, ("content", "content"), result_sha256=(a, b), repeats=shared)
    side_b = CheckOutcome(check, ("content", "content"), result_sha256=(b, c), repeats=shared)
    compared = Comparison((side_a,), (side_b,))
    row = compared.to_dict()["checks"][0]
    assert (row["lost"], row["gained"]) == ([f"content·{a[:8]}"], [f"content·{c[:8]}"])
    assert compared.regressed  # A found the expected content, B did not
    assert row["a"]["expected"] == [{"content_sha256": a, "id": "content", "rank": 1}]
