"""Knowledge bases as cosh's TUI writes them (``rag.ingest("content", text)``): whole documents, one row
each, every row with the id "content"; and long texts, far past what any model reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_lance_table, write_registry


def long_text(words: int, seed: int = 7) -> str:
    """Sentences of the test passages in a shuffled order, ``words`` words long."""
    import numpy as np

    sentences = list(PASSAGES.values())
    order = np.random.default_rng(seed).permutation(words)
    text: list[str] = []
    for number in order:
        text.extend(sentences[int(number) % len(sentences)].split())
        if len(text) >= words:
            break
    return " ".join(text[:words])


#: A manual page stored whole: its first paragraph is what a search for it finds.
MANUAL = (
    "LS(1) — list directory contents. ls lists information about the files in a directory, sorted "
    "alphabetically unless another order is asked for. "
) + long_text(1800, seed=21)


def whole_documents(folder: Path, embedder: Any, name: str = "manuals") -> KnowledgeBase:
    """The passages and three long documents (:data:`MANUAL` among them), written as cosh writes them,
    embedded with the app's model, in a registry of their own."""
    import numpy as np

    documents = (*list(PASSAGES.values())[:6], MANUAL, long_text(2500, 12), long_text(900, 13))
    vectors = np.vstack([embedder.embed_sync(text) for text in documents])
    ids = ("content",) * len(documents)
    write_lance_table(folder / "lancedb", name, ids, documents, vectors)
    registry = write_registry(folder / "registry", [cosh_entry(name, folder / "lancedb")])
    return KnowledgeBase(name, folder / "lancedb", registry, ids, documents, vectors)
