"""`search --fts` and `--hybrid`: LanceDB's own full-text and RRF answers (ids and order), on a table with a
native full-text index; none is ever built by the app."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lancedb
import pytest
from lancedb.index import FTS
from lancedb.rerankers import RRFReranker

from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

QUERY = "reset the password of the capital of France"


def with_fts_index(kb: KnowledgeBase) -> Any:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.create_index("content", config=FTS())
    return table


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["id"] for row in rows]


def test_fts_returns_lancedbs_full_text_answer_in_the_agents_json_shape(kb: KnowledgeBase) -> None:
    table = with_fts_index(kb)
    oracle = table.search(QUERY, query_type="fts").limit(4).to_list()
    scores = [row["_score"] for row in oracle]
    assert len(set(scores)) == len(scores)  # no ties: LanceDB's order is one order
    before = snapshot_tree(kb.db_dir)
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "4", "--fts", QUERY)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["query"] == QUERY
    assert [r["id"] for r in answer["results"]] == ids(oracle)
    assert [r["content"] for r in answer["results"]] == [row["content"] for row in oracle]
    assert snapshot_tree(kb.db_dir) == before


def test_hybrid_fuses_the_agents_vector_and_the_words_as_lancedbs_rrf_does(
    kb: KnowledgeBase, embedder: Any
) -> None:
    table = with_fts_index(kb)
    vector = embedder.embed_sync(QUERY)
    oracle = (
        table.search(query_type="hybrid")
        .vector(vector)
        .text(QUERY)
        .distance_type("l2")
        .rerank(RRFReranker())
        .limit(5)
        .to_list()
    )
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--hybrid", QUERY)
    assert done.returncode == 0, done.stderr
    assert [r["id"] for r in json.loads(done.stdout)["results"]] == ids(oracle)


def test_without_a_full_text_index_it_says_so_and_how_to_build_one(kb: KnowledgeBase) -> None:
    before = snapshot_tree(kb.db_dir)
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--fts", QUERY)
    assert done.returncode == 1
    assert "cannot be searched by its words: it has no full-text index" in done.stderr
    assert "create_index" in done.stderr
    assert snapshot_tree(kb.db_dir) == before  # no index was built


def test_fts_and_hybrid_cannot_be_asked_together(kb: KnowledgeBase, tmp_path: Path) -> None:
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--fts", "--hybrid", QUERY)
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
