"""An indexed table is searched as cosh searches it: cosh's query is ``table.query().nearest_to(v).limit(n)``
with nothing else set, so through an index LanceDB's defaults decide the rows (its nprobes, no
refine_factor, no ef). On an IVF_PQ copy (4 partitions, 16 sub-vectors) and an IVF_HNSW_SQ copy of a table,
the MCP server's answers, ``recall-gui check`` and ``recall-gui search`` equal LanceDB's
``tbl.search(v).limit(k)`` for every query tried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.agreement_set import ALL_QUESTIONS, passages
from tests.kbtools import cosh_entry, write_lance_table, write_registry
from tests.mcp.live import BackgroundLoop, live_session, run_cli, server_env, server_parameters

#: Every test here uses the indexed copies, which take seconds to build.
pytestmark = pytest.mark.slow

ROWS = 400
QUERIES = ALL_QUESTIONS[:40]
LIMITS = (5, 10)
INDEXES = {
    "pq": ("IvfPq", {"distance_type": "l2", "num_partitions": 4, "num_sub_vectors": 16}),
    "hnsw": ("IvfHnswSq", {"distance_type": "l2", "num_partitions": 4}),
}


@dataclass(frozen=True)
class IndexedCopies:
    root: Path
    registry_dir: Path
    env: dict[str, str]
    #: LanceDB's answer, ``search(v).limit(k)`` with nothing else set: (database, query, k) -> contents.
    expected: dict[tuple[str, str, int], tuple[str, ...]]


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> IndexedCopies:
    import lancedb
    from lancedb import index

    root = tmp_path_factory.mktemp("indexed")
    texts = passages(ROWS)
    vectors = np.vstack(embedder.embed_many(texts))
    ids = [f"doc-{number:03d}" for number in range(len(texts))]
    db_dir = root / "lancedb"
    for name, (kind, settings) in INDEXES.items():
        write_lance_table(db_dir, name, ids, texts, vectors)
        table = lancedb.connect(str(db_dir)).open_table(name)
        table.create_index("vector", config=getattr(index, kind)(**settings))
    registry_dir = write_registry(root / "registry", [cosh_entry(name, db_dir) for name in INDEXES])
    connection = lancedb.connect(str(db_dir))
    expected: dict[tuple[str, str, int], tuple[str, ...]] = {}
    query_vectors = [embedder.embed_sync(query) for query in QUERIES]
    for name in INDEXES:
        table = connection.open_table(name)
        assert len(table.list_indices()) == 1
        for query, vector in zip(QUERIES, query_vectors, strict=True):
            for limit in LIMITS:
                rows = table.search(vector).limit(limit).to_list()
                expected[(name, query, limit)] = tuple(row["content"] for row in rows)
    return IndexedCopies(root, registry_dir, server_env(root), expected)


def differing(found: dict[tuple[str, str, int], tuple[str, ...]], copies: IndexedCopies) -> list[Any]:
    assert found.keys() <= copies.expected.keys() and found
    return [key for key, contents in found.items() if contents != copies.expected[key]]


def test_lancedbs_defaults_are_not_the_exact_top_k(copies: IndexedCopies, embedder: Any) -> None:
    """The indexes are approximate here: a search that tuned them (or ranked exactly) would answer
    otherwise, so the comparisons below can fail."""
    import lancedb

    table = lancedb.connect(str(copies.root / "lancedb")).open_table("pq")
    exact = 0
    for query in QUERIES:
        vector = embedder.embed_sync(query)
        flat = table.search(vector).bypass_vector_index().limit(5).to_list()
        exact += tuple(row["content"] for row in flat) == copies.expected[("pq", query, 5)]
    assert exact < len(QUERIES)


@pytest.fixture(scope="module")
def server(copies: IndexedCopies) -> Iterator[Any]:
    loop = BackgroundLoop()
    try:
        yield (
            loop,
            loop.hold(
                live_session(server_parameters(copies.registry_dir, copies.env), copies.root / "server.log")
            ),
        )
    finally:
        loop.close()


def test_the_mcp_servers_answers_are_lancedbs_defaults(copies: IndexedCopies, server: Any) -> None:
    loop, live = server

    async def answers() -> dict[tuple[str, str, int], tuple[str, ...]]:
        found = {}
        for name in INDEXES:
            for query in QUERIES:
                for limit in LIMITS:
                    arguments = {"db_name": name, "query": query, "limit": limit}
                    result = await live.session.call_tool("recall_search", arguments)
                    assert not result.is_error, result.content[0].text
                    payload = json.loads(result.content[0].text)
                    found[(name, query, limit)] = tuple(hit["content"] for hit in payload["results"])
        return found

    assert differing(loop.run(answers(), timeout=300), copies) == []


@pytest.mark.process
def test_check_ranks_as_lancedbs_defaults(copies: IndexedCopies, tmp_path: Path) -> None:
    golden = tmp_path / "golden.json"
    checks = [
        {"db_name": name, "query": query, "limit": 5, "expect": ["doc-000"]}
        for name in INDEXES
        for query in QUERIES
    ]
    golden.write_text(json.dumps({"checks": checks}), encoding="utf-8")
    done = run_cli(copies.env, "check", "--registry", str(copies.registry_dir), "--json", str(golden))
    report = json.loads(done.stdout)
    import lancedb

    connection = lancedb.connect(str(copies.root / "lancedb"))
    by_id = {}
    for name in INDEXES:
        rows = connection.open_table(name).to_arrow().select(["id", "content"]).to_pydict()
        by_id[name] = dict(zip(rows["id"], rows["content"], strict=True))
    found = {
        (check["db_name"], check["query"], 5): tuple(by_id[check["db_name"]][i] for i in check["results"])
        for check in report["checks"]
    }
    assert differing(found, copies) == []


@pytest.mark.process
def test_search_prints_lancedbs_defaults(copies: IndexedCopies) -> None:
    for name in INDEXES:
        for query in QUERIES[:2]:
            done = run_cli(copies.env, "search", "--registry", str(copies.registry_dir), "--db", name, query)
            assert done.returncode == 0, done.stderr
            contents = tuple(hit["content"] for hit in json.loads(done.stdout)["results"])
            assert contents == copies.expected[(name, query, 5)]
