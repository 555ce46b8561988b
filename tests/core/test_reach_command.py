"""`recall-gui reach`: the JSON's fields against LanceDB's own flat search (tests/reachtools.py), exit codes
like `check` (0 all reachable, 1 some not, 2 could not run), the text output, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree
from tests.reachtools import CAUSES, NAME, Planted, lancedb_oracle, write_planted


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Planted:
    return write_planted(tmp_path_factory.mktemp("planted-cli"), embedder)


def test_reach_json_is_lancedbs_answer_and_writes_nothing(planted: Planted, embedder: Any) -> None:
    before = snapshot_tree(planted.db_dir)
    registry_before = snapshot_tree(planted.registry_dir)
    done = cli("reach", "--registry", str(planted.registry_dir), "--db", NAME, "--limit", "1", "--json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    oracle = lancedb_oracle(planted, embedder, 1, depth=100)
    unreachable = {item["id"]: item for item in data["unreachable"]}
    expected = [key for key, found in oracle.results.items() if key not in found]
    expected += [key for key, query in zip(planted.ids, planted.queries, strict=True) if not query]
    assert sorted(unreachable) == sorted(expected)
    for key, item in unreachable.items():
        assert set(item) >= {"id", "query", "rank", "taken_by", "why", "cause"}
        if key in oracle.results:
            assert item["taken_by"] == oracle.results[key] and item["rank"] == oracle.places[key]
        else:
            assert item["rank"] is None and item["taken_by"] == [] and item["query"] == ""
    for key, cause in CAUSES.items():
        assert unreachable[key]["cause"] == cause
    assert data["limit"] == 1 and data["entries"] == len(planted.ids)
    assert data["reachable"] == len(oracle.results) - sum(1 for k, f in oracle.results.items() if k not in f)
    assert [item["id"] for item in data["retrievability"]] == list(planted.ids)
    assert {"returned_for"} <= set(data["retrievability"][0])
    assert 0 <= data["gini"] < 1 and data["hubs"][0]["id"] == "hub"
    assert snapshot_tree(planted.db_dir) == before and snapshot_tree(planted.registry_dir) == registry_before


def test_reach_exits_0_when_every_entry_is_reachable(kb: KnowledgeBase) -> None:
    done = cli("reach", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "3")
    assert done.returncode == 0, done.stderr
    assert f"{len(kb.ids)} of {len(kb.ids)} entries asked for reach the results (100.0%)" in done.stdout
    assert "UNREACHABLE" not in done.stdout


def test_reach_text_lists_the_unreachable_with_why(planted: Planted) -> None:
    done = cli("reach", "--registry", str(planted.registry_dir), "--db", NAME, "--limit", "1")
    assert done.returncode == 1, done.stderr
    assert 'UNREACHABLE  tides-copy  (rank 2) "Ocean tides' in done.stdout
    assert "taken by: tides" in done.stdout and "hub  hub: returned for" in done.stdout


def test_reach_of_a_folder_path_counts_a_golden_files_queries(planted: Planted, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    check = {"db_name": NAME, "query": "Why are there tides?", "expect": ["tides"], "limit": 2}
    other = {"db_name": "another", "query": "What is rust?", "expect": ["rust"], "limit": 3}
    golden.write_text(json.dumps({"checks": [check, other]}), encoding="utf-8")  # another's not counted
    done = cli(
        "reach",
        "--registry",
        str(planted.registry_dir),
        "--path",
        str(planted.db_dir),
        "--queries",
        str(golden),
        "--json",
    )
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["db_name"] == NAME and data["agent_searches"] and data["queries"] == 1
    assert sum(item["returned_for_queries"] for item in data["retrievability"]) == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--db", "nope"], "Database 'nope' not found"),
        (["--db", NAME, "--limit", "0"], "--limit must be between 1 and 100"),
        (["--db", NAME, "--depth", "0"], "--depth must be between"),
        (["--db", NAME, "--query-from", "third-word"], "no way to make a query"),
        (["--db", NAME, "--query-from", "column:nope"], "no column 'nope'"),
        (["--db", NAME, "--ray-address", "ray://x:1"], "--ray-address is for --engine ray"),
        (["--path", "/nowhere/at/all"], "/nowhere/at/all"),
    ],
)
def test_reach_that_cannot_run_exits_2_with_the_reason(
    planted: Planted, options: list[str], message: str
) -> None:
    done = cli("reach", "--registry", str(planted.registry_dir), *options)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert message in done.stderr and done.stdout == ""


def test_reach_counts_what_the_agents_logged_queries_return(kb: KnowledgeBase) -> None:
    import asyncio

    from recall_gui.core.agent_log.agent_log import LogFiles
    from recall_gui.core.search.harness import Harness
    from tests.logtools import logged_call, write_records

    harness = Harness(kb.registry_dir)
    asked = [("How do I change my password?", 2), ("What is the capital of France?", 1)]
    try:
        records = [logged_call(harness, {"db_name": kb.name, "query": q, "limit": n}) for q, n in asked]
    finally:
        asyncio.run(harness.aclose())
    write_records(LogFiles(), records)
    done = cli("reach", "--registry", str(kb.registry_dir), "--db", kb.name, "--log", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    returned = {item["id"]: item["returned_for_queries"] for item in data["retrievability"]}
    expected = {entry_id: 0 for entry_id in kb.ids}
    for record in records:
        for entry_id in set(record.result_ids):
            expected[entry_id] += 1
    assert data["queries"] == 2 and returned == expected and sum(expected.values()) == 3


def test_reach_text_escapes_control_characters_from_the_table() -> None:
    from recall_gui.cli.reach import format_report
    from recall_gui.core.reach.reach_report import ReachReport, Retrievability, Unreachable

    hostile = "evil\x1b[2Jid"
    report = ReachReport(
        db_name="kb\x1b]0;title\x07",
        agent_searches=True,
        why_not=None,
        version=1,
        model=None,
        metric="cosine",
        method="exact",
        exact_places=True,
        note=None,
        limit=1,
        depth=10,
        query_from="title",
        searched=2,
        reachable=1,
        gini=0.5,
        hub_min=1,
        unreachable=(Unreachable(hostile, 1, "line\x07one", 2, ("taker\x1b",), "outranked", "why\x1b"),),
        retrievability=(Retrievability(hostile, 1, 0, None, 2), Retrievability("taker\x1b", 0, 2, None, 1)),
    )
    text = format_report(report)
    assert "\x1b" not in text and "\x07" not in text
    assert "evil\\x1b[2Jid" in text and "taker\\x1b" in text  # escaped, not dropped


def test_reach_names_an_infinite_vector_as_lancedb_ranks_it_and_an_entry_without_an_id(
    tmp_path: Path, embedder: Any, passage_vectors: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A row whose vector holds an infinity is returned by LanceDB's search (last, by L2): the report
    says so, at LanceDB's place, never that no search returns it. A row without an id, which takes
    another's place, is named by its content's hash."""
    import hashlib

    import lancedb
    import numpy as np
    import pyarrow as pa

    from recall_gui.cli import main
    from tests.kbtools import PASSAGES, cosh_entry, write_registry

    vectors = np.asarray(passage_vectors, np.float32)
    infinite = vectors[list(PASSAGES).index("berlin")].copy()
    infinite[0] = np.inf
    copy = "The capital of France is Paris, a city on the Seine, once more."
    ids = [None, *PASSAGES, "infinite"]  # the copy without an id comes first: it wins paris's tie
    texts = [copy, *PASSAGES.values(), "Berlin is the capital and largest city of Germany, infinitely."]
    matrix = np.vstack([vectors[list(PASSAGES).index("paris")], vectors, infinite])
    table = pa.table(
        {
            "id": pa.array(ids, pa.utf8()),
            "content": pa.array(texts, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), 384),
        }
    )
    db = tmp_path / "db"
    lancedb.connect(str(db)).create_table("t", table)
    cosine = {**cosh_entry("t-cosine", db), "table": "t", "metric": "cosine"}
    registry = write_registry(tmp_path / "registry", [cosh_entry("t", db), cosine])

    assert main(["reach", "--registry", str(registry), "--db", "t", "--limit", "1", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    unreachable = {item["id"]: item for item in data["unreachable"]}
    # LanceDB's own flat search for the row's query (its whole text: one sentence) returns it, last.
    own = embedder.embed_sync(texts[-1])
    found = lancedb.connect(str(db)).open_table("t").search(own).distance_type("l2").limit(100).to_arrow()
    place = found["id"].to_pylist().index("infinite") + 1
    assert place == len(texts) and found["_distance"].to_pylist()[place - 1] == float("inf")
    item = unreachable["infinite"]
    assert item["rank"] == place and item["cause"] == "not-finite"
    assert "infinite" in item["why"] and "no search returns it" not in item["why"]
    name = "(no id) content·" + hashlib.sha256(copy.encode("utf-8")).hexdigest()[:8]
    assert unreachable["paris"]["taken_by"] == [name]

    # By cosine, LanceDB's search never returns it (its distance is not a number): the report says so.
    assert main(["reach", "--registry", str(registry), "--db", "t-cosine", "--limit", "1", "--json"]) == 1
    item = {entry["id"]: entry for entry in json.loads(capsys.readouterr().out)["unreachable"]}["infinite"]
    by_cosine = lancedb.connect(str(db)).open_table("t").search(own).distance_type("cosine").limit(100)
    assert "infinite" not in by_cosine.to_arrow()["id"].to_pylist()
    assert item["cause"] == "not-finite" and item["rank"] is None and "no search returns it" in item["why"]

    assert main(["reach", "--registry", str(registry), "--db", "t", "--limit", "1"]) == 1
    text = capsys.readouterr().out
    assert f"       taken by: {name}\n" in text
    assert ", ," not in text and not any(line.endswith(", ") for line in text.splitlines())
