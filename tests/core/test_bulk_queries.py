"""Many queries embedded at once by the session's model pool get, bit for bit, the vectors each gets
alone: batches pad texts to the longest, and the padding must change nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from recall_gui.core.embedders.pool import BULK_JOB
from recall_gui.core.registry.registry_types import EmbedderSpec
from tests.kbtools import PASSAGES

TEXTS = [
    *PASSAGES.values(),
    "",
    "x",
    "How do I reset my password?",
    "Unicode: 🚀 ش 日本語のテキスト",
    " ".join(["a much longer query that runs past the model's limit of tokens"] * 40),
    "How do I reset my password?",
]


@pytest.mark.slow
def test_bulk_queries_are_each_querys_own_vector(session: Any) -> None:
    spec = EmbedderSpec("local", "AllMiniLML6V2")
    texts = TEXTS * (BULK_JOB // len(TEXTS) + 1)  # more than one job of the pool
    seen: list[tuple[int, int]] = []

    async def go() -> tuple[Any, list[Any], str]:
        step = lambda done, total: seen.append((done, total))  # noqa: E731
        bulk = await session.models.embed_queries(spec, texts, 384, step)
        alone = [await session.models.start_query(spec, text).wait() for text in TEXTS]
        return bulk, alone, alone[0].used

    bulk, alone, used = asyncio.run(go())
    assert bulk.vectors.shape == (len(texts), 384) and bulk.vectors.dtype == np.float32
    for number, text in enumerate(texts):
        assert bulk.vectors[number].tobytes() == alone[TEXTS.index(text)].vector.tobytes(), text[:40]
    assert bulk.used == used
    assert seen[-1] == (len(texts), len(texts)) and len(seen) == -(-len(texts) // BULK_JOB)


def test_no_queries_give_an_empty_matrix_of_the_tables_width(session: Any) -> None:
    spec = EmbedderSpec("local", "AllMiniLML6V2")
    empty = asyncio.run(session.models.embed_queries(spec, [], 384))
    assert empty.vectors.shape == (0, 384)


def test_a_cloud_models_bulk_queries_are_its_single_answers(
    session: Any, fake_provider: Any, monkeypatch: Any
) -> None:
    """One request per query (four in flight), each vector the one a single query gets."""
    for key, value in fake_provider.environment("openai").items():
        monkeypatch.setenv(key, value)
    spec = EmbedderSpec("cloud", "text-embedding-local", "openai")
    texts = TEXTS[:7]

    async def go() -> tuple[Any, list[Any]]:
        bulk = await session.models.embed_queries(spec, texts, 384)
        alone = [await session.models.start_query(spec, text, 384).wait() for text in texts]
        return bulk, alone

    bulk, alone = asyncio.run(go())
    assert [row.tobytes() for row in bulk.vectors] == [one.vector.tobytes() for one in alone]
    assert bulk.used == alone[0].used == "openai / text-embedding-local"
    assert len(fake_provider.requests) == 2 * len(texts)
