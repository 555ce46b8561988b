"""What a loaded model keeps in memory after embedding: onnxruntime's memory arena would keep what the
largest batch took for as long as the session lives (a window or a server, for hours); the app's runs of
more than a long query's tokens shrink it, so the process gives that memory back."""

from __future__ import annotations

from typing import Any

from recall_gui.core.base.heap import release_free_memory
from tests.owners import resident_mb

#: Eight texts cut at 512 tokens: without the shrink, onnxruntime's arena kept ~0.2 GB of the batch here.
LONG_TEXTS = [" ".join(f"word{word} text{number}" for word in range(300)) for number in range(8)]


def trimmed_resident_mb() -> int:
    release_free_memory()  # the C heap's free pages go back, as the app does after big jobs
    return resident_mb()


def test_a_batch_of_long_texts_leaves_no_memory_with_the_model(embedder: Any) -> None:
    embedder.embed_many(LONG_TEXTS[:1])  # the session's first run allocates once for good
    before = trimmed_resident_mb()
    vectors = embedder.embed_many(LONG_TEXTS)
    assert len(vectors) == len(LONG_TEXTS)
    assert trimmed_resident_mb() - before < 100, before
