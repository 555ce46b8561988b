"""Full-text and hybrid search within a filter, as the window runs them (in this process): LanceDB's own
answer with the same filter, and a filter LanceDB refuses is refused with the columns named."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lancedb.rerankers import RRFReranker

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.word_search import TextSearchResult, text_search
from tests.core.test_text_search import with_fts_index
from tests.kbtools import KnowledgeBase

pytestmark = pytest.mark.process  # a filter is first checked by the filter guard's worker process

QUERY = "reset the password of the capital of France"
FILTER = "id LIKE 'p%'"


def searched(kb: KnowledgeBase, method: Any, where: str) -> TextSearchResult:
    async def go() -> TextSearchResult:
        harness = Harness(kb.registry_dir)
        try:
            return await text_search(harness, harness.resolve_active(kb.name), QUERY, 4, method, where=where)
        finally:
            await harness.aclose()

    return asyncio.run(go())


@pytest.fixture
def indexed(kb: KnowledgeBase) -> Any:
    return with_fts_index(kb)


def test_full_text_within_a_filter_is_lancedbs_answer(kb: KnowledgeBase, indexed: Any) -> None:
    oracle = indexed.search(QUERY, query_type="fts").where(FILTER, prefilter=True).limit(4).to_list()
    assert {row["id"] for row in oracle} <= {"pw-reset", "pw-rules", "paris", "photosynthesis"}
    result = searched(kb, "fts", FILTER)
    assert [entry.id for entry in result.output.results] == [row["id"] for row in oracle]
    assert list(result.scores) == pytest.approx([row["_score"] for row in oracle])


def test_hybrid_within_a_filter_is_lancedbs_answer(kb: KnowledgeBase, indexed: Any, embedder: Any) -> None:
    oracle = (
        indexed.search(query_type="hybrid")
        .vector(embedder.embed_sync(QUERY))
        .text(QUERY)
        .distance_type("l2")
        .where(FILTER, prefilter=True)
        .rerank(RRFReranker())
        .limit(4)
        .to_list()
    )
    result = searched(kb, "hybrid", FILTER)
    assert [entry.id for entry in result.output.results] == [row["id"] for row in oracle]


def test_a_filter_lancedb_cannot_read_is_refused_naming_the_columns(kb: KnowledgeBase, indexed: Any) -> None:
    with pytest.raises(InvalidInputError) as refused:
        searched(kb, "fts", "no_such_column = 1")
    assert "no_such_column" in str(refused.value)
    assert "content" in f"{refused.value} {refused.value.hint}"
