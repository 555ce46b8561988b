"""The search pipeline: the query is handed to the embedding thread at once (a model still to load loads
first, in the same job), and when the table's vectors are in memory the ranking job waits for the vector
on its own thread (``nearest._rank_when_ready``). Same answers, same errors as the low-level search with a
vector at hand."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.errors import DimensionMismatchError, EmbedderError
from recall_gui.core.base.types import RecallSearchInput, SearchResult
from recall_gui.core.search import nearest
from recall_gui.core.search.harness import Harness
from tests.coretools import onnx_session, query_session, search_hits
from tests.kbtools import KnowledgeBase

QUERY = "capital of France"


@pytest.fixture
def threaded_ranking(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Rank every table on the compute thread (test tables are far below the size that does it), and
    count the rankings that waited there for a vector still being embedded."""
    calls: list[int] = []
    original = nearest._rank_when_ready

    def counted(query: Any, *args: Any, **kwargs: Any) -> Any:
        if not query.future.done():
            calls.append(1)
        return original(query, *args, **kwargs)

    monkeypatch.setattr(nearest, "INLINE_RANK_BYTES", 0)
    monkeypatch.setattr(nearest, "_rank_when_ready", counted)
    return calls


def search_twice(kb: KnowledgeBase, query: str = QUERY, limit: int = 3) -> tuple[Any, Any]:
    """The first search loads the model into the harness's session; the second finds it loaded."""

    async def go() -> tuple[Any, Any]:
        harness = Harness(kb.registry_dir)
        try:
            entry = harness.resolve_active(kb.name)
            first = await harness.search_database(entry, query, limit)
            return first, await harness.search_database(entry, query, limit)
        finally:
            await harness.aclose()

    return asyncio.run(go())


def plain_search(kb: KnowledgeBase, vector: Any, limit: int = 3) -> SearchResult:
    return search_hits(RecallSearchInput(str(kb.db_dir), kb.name, 384, QUERY, vector, limit))


def test_the_pipelined_search_answers_as_the_plain_one(
    kb: KnowledgeBase, embedder: Any, threaded_ranking: list[int]
) -> None:
    first, second = search_twice(kb)
    assert len(threaded_ranking) >= 1  # the first at least: its model was still loading
    plain = plain_search(kb, embedder.embed_sync(QUERY))
    for report in (first, second):
        assert report.result.method == "exact"
        assert [hit.id for hit in report.result.hits] == [hit.id for hit in plain.hits]
        assert [hit.distance for hit in report.result.hits] == pytest.approx([h.distance for h in plain.hits])
    assert second.result.hits[0].id == "paris"
    assert 0 < second.embed_ms <= second.total_ms and second.result.search_ms <= second.total_ms


def test_an_embedding_error_reaches_the_caller_through_the_ranking_job(
    kb: KnowledgeBase, threaded_ranking: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.embedders.local import LocalEmbedder

    calls: list[str] = []
    original = LocalEmbedder.embed_sync

    def fails_the_second_time(self: LocalEmbedder, text: str) -> Any:
        calls.append(text)
        if len(calls) > 1:
            raise RuntimeError("onnxruntime: broken input")
        return original(self, text)

    monkeypatch.setattr(LocalEmbedder, "embed_sync", fails_the_second_time)
    with pytest.raises(EmbedderError) as caught:
        search_twice(kb)
    assert "the query could not be embedded: onnxruntime: broken input" in str(caught.value)
    assert "AllMiniLML6V2" in str(caught.value)
    assert len(threaded_ranking) >= 1


def test_a_vector_of_the_wrong_width_is_refused_naming_the_model(
    kb: KnowledgeBase, threaded_ranking: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.embedders.local import LocalEmbedder

    original = LocalEmbedder.embed_sync
    monkeypatch.setattr(LocalEmbedder, "embed_sync", lambda self, text: original(self, text)[:383])
    with pytest.raises(DimensionMismatchError) as caught:
        search_twice(kb)
    assert str(caught.value) == "vector dimension mismatch: input has 383, but table schema has 384"
    assert caught.value.hint and "all-MiniLM-L6-v2" in caught.value.hint


def test_queries_run_on_one_thread_and_bulk_embedding_on_a_session_of_its_own() -> None:
    from recall_gui.core.embedders.local import QUERY_THREADS
    from recall_gui.core.embedders.pool import load_local_model

    embedder = load_local_model("AllMiniLML6V2")  # as the app serves it (the run's shares one session)
    query = query_session(embedder)
    assert query.get_session_options().intra_op_num_threads == QUERY_THREADS == 1
    texts = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
    bulk = np.vstack(embedder.embed_many(texts))
    bulk_session = onnx_session(embedder._bulk_model)
    assert bulk_session is not query
    assert bulk_session.get_session_options().intra_op_num_threads != 1
    queries = np.vstack([embedder.embed_sync(text) for text in texts])
    assert np.allclose(bulk, queries, atol=1e-5)
