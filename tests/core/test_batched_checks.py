"""Golden checks of one database share one pass over its vectors; each check's results are still exactly
LanceDB's flat search for its query (the oracle), and the same as one search per check."""

from __future__ import annotations

import asyncio
from typing import Any

import lancedb
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from recall_gui.core.golden.golden import GoldenCheck
from recall_gui.core.search.harness import Harness
from recall_gui.core.session.exact import VectorMatrix, nearest_rows, nearest_rows_many
from tests.kbtools import PASSAGES, KnowledgeBase

QUESTIONS = [
    "How do I change my password?",
    "What is the capital of France?",
    "Why do tides happen?",
    "How is coffee made?",
    "What does git rebase do?",
]


def test_a_files_checks_get_lancedbs_results_each(kb: KnowledgeBase, embedder: Any) -> None:
    from recall_gui.core.golden.checks import run_checks

    checks = [
        GoldenCheck(kb.name, q, ("paris",), limit)
        for q, limit in zip(QUESTIONS, (1, 3, 5, 7, 12), strict=True)
    ]
    checks.append(GoldenCheck("elsewhere", "anything", ("x",), 5))  # a database that is not there

    async def go() -> Any:
        harness = Harness(kb.registry_dir)
        try:
            return await run_checks(harness, checks)
        finally:
            await harness.aclose()

    run = asyncio.run(go())
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    for check, outcome in zip(checks[:-1], run.outcomes, strict=False):
        oracle = (
            table.search(embedder.embed_sync(check.query)).distance_type("l2").limit(check.limit).to_list()
        )
        assert outcome.results == tuple(row["id"] for row in oracle)
    assert run.outcomes[-1].error is not None and "elsewhere" in run.outcomes[-1].error
    assert len(PASSAGES) >= 12


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    rows=st.integers(1, 300),
    queries=st.integers(1, 20),
    metric=st.sampled_from(["l2", "cosine", "dot"]),
)
def test_one_pass_for_many_queries_answers_as_one_scan_each(
    seed: int, rows: int, queries: int, metric: str
) -> None:
    generator = np.random.default_rng(seed)
    base = generator.normal(size=(max(rows // 4, 1), 16)).astype(np.float32)
    # Clouds of near-copies and exact duplicates: the order of near ties is what could differ.
    matrix = (
        base[generator.integers(0, len(base), rows)] + generator.normal(scale=1e-7, size=(rows, 16))
    ).astype(np.float32)
    vectors = VectorMatrix.build(matrix, np.arange(rows, dtype=np.uint64) * 3)
    asked = generator.normal(size=(queries, 16)).astype(np.float32)
    ks = [int(k) for k in generator.integers(1, 12, queries)]
    together = nearest_rows_many(vectors, asked, metric, ks, chunk=7)
    for query, k, (positions, distances) in zip(asked, ks, together, strict=True):
        alone = nearest_rows(vectors, query, metric, k)
        assert positions.tolist() == alone[0].tolist()
        assert distances.tobytes() == alone[1].tobytes()
