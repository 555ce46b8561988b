"""A knowledge base with planted unreachable entries, and LanceDB's own answer for each entry's query.

Every passage is one sentence, so its pseudo-query (the first sentence) is its whole text, spelled out
here. Planted, with the cause the report must name:

- ``tides-copy``: ``tides`` ingested twice (the same vector): the earlier row wins the tie (near-copy);
- ``rebase-copy``: ``git-rebase`` again with a vector a hair away: one of the two loses (near-copy);
- ``empty-0..2``: no text (empty);
- ``zero``: a text whose vector is all zeros (zero-vector);
- ``no-vector``: a text without a vector (no-vector);
- ``boiler-0..3``: four chunks with the same first sentence: three lose (boilerplate);
- ``victim-0..5`` and ``hub``: six cooking tips stored with vectors far from their own texts, and a
  chunk whose vector sits among their queries: it takes the place of each (hub);
- ``weak``: a text stored with a vector far from it, on a topic no other entry touches: the zero vector,
  as near every query by L2 as a match of cosine 0.5, takes its place (taken-by-zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.kbtools import PASSAGES, cosh_entry, write_registry

NAME = "notes"
BOILERPLATE = "This page is part of the Example handbook."
BOILER_TAILS = (
    "Install the package with pip.",
    "Run the tests with pytest.",
    "Read the changelog before upgrading.",
    "Report bugs on the tracker.",
)
VICTIMS = (
    "Knead bread dough until it is smooth and elastic.",
    "Simmer the soup gently so the vegetables stay firm.",
    "Salt the pasta water before the pasta goes in.",
    "Rest a roast for ten minutes before carving it.",
    "Whisk egg whites in a clean bowl for stiff peaks.",
    "Toast spices in a dry pan to wake their aroma.",
)
#: How near a victim's stored vector is to its own query (cosine): far below the hub's.
VICTIM_COSINE = 0.3
WEAK = "Origami cranes are folded from a single square of paper."

#: The cause each planted entry must be given (when it is unreachable).
CAUSES = {
    "tides-copy": "near-copy",
    "empty-0": "empty",
    "empty-1": "empty",
    "empty-2": "empty",
    "zero": "zero-vector",
    "no-vector": "no-vector",
    "weak": "taken-by-zero",
    **{f"victim-{n}": "hub" for n in range(len(VICTIMS))},
}


@dataclass(frozen=True)
class Planted:
    db_dir: Path
    registry_dir: Path
    ids: tuple[str, ...]
    texts: tuple[str, ...]
    #: The query each entry's first sentence makes (``""``: none).
    queries: tuple[str, ...]


def planted_rows(embedder: Any, seed: int = 0) -> tuple[list[str], list[str], list[Any]]:
    """Ids, texts and vectors (``None``: no vector) of the planted knowledge base."""
    rng = np.random.default_rng(seed)
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    vectors: list[Any] = [np.asarray(v, np.float32) for v in embedder.embed_many(texts)]

    def add(entry_id: str, text: str, vector: Any) -> None:
        ids.append(entry_id)
        texts.append(text)
        vectors.append(vector)

    add("tides-copy", PASSAGES["tides"], vectors[ids.index("tides")].copy())
    rebase = vectors[ids.index("git-rebase")] + rng.normal(0, 1e-3, 384).astype(np.float32)
    add("rebase-copy", PASSAGES["git-rebase"], (rebase / np.linalg.norm(rebase)).astype(np.float32))
    for number in range(3):
        add(f"empty-{number}", "", embedder.embed_sync(""))
    add("zero", "Paris is the capital city of France.", np.zeros(384, np.float32))
    add("no-vector", "Photosynthesis makes sugar from light.", None)
    for number, tail in enumerate(BOILER_TAILS):
        text = f"{BOILERPLATE} {tail}"
        add(f"boiler-{number}", text, embedder.embed_sync(text))

    def far_from(text: str) -> Any:
        """A unit vector of cosine :data:`VICTIM_COSINE` with ``text``'s own."""
        own = embedder.embed_sync(text)
        away = rng.normal(0, 1, 384)
        away -= (away @ own) * own
        away /= np.linalg.norm(away)
        stored = VICTIM_COSINE * own + np.sqrt(1 - VICTIM_COSINE**2) * away
        return (stored / np.linalg.norm(stored)).astype(np.float32)

    for number, text in enumerate(VICTIMS):
        add(f"victim-{number}", text, far_from(text))
    hub = np.vstack([embedder.embed_sync(text) for text in VICTIMS]).sum(axis=0)
    add("hub", "General kitchen notes.", (hub / np.linalg.norm(hub)).astype(np.float32))
    add("weak", WEAK, far_from(WEAK))
    return ids, texts, vectors


def write_planted(root: Path, embedder: Any, *, id_column: bool = True) -> Planted:
    """The planted table in cosh's schema (``id_column`` false: LangChain's ``text``/``vector`` without
    ids), registered active as ``notes``."""
    import lancedb
    import pyarrow as pa

    ids, texts, vectors = planted_rows(embedder)
    flat = np.concatenate([np.zeros(384, np.float32) if v is None else v for v in vectors])
    mask = pa.array([v is None for v in vectors])
    column = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.float32()), 384, mask=mask)
    data = {"id": pa.array(ids, pa.utf8()), "content": pa.array(texts, pa.utf8()), "vector": column}
    if not id_column:
        data = {"text": data["content"], "vector": column}
    db_dir = root / "lancedb"
    lancedb.connect(str(db_dir)).create_table(NAME, pa.table(data), on_bad_vectors="null")
    registry = write_registry(root / "registry", [cosh_entry(NAME, db_dir)])
    queries = tuple(text.split(". ")[0] + "." if text.startswith(BOILERPLATE) else text for text in texts)
    return Planted(db_dir, registry, tuple(ids), tuple(texts), queries)


@dataclass(frozen=True)
class Oracle:
    """LanceDB's flat search for each entry's query: the agent's results (ids, row ids) and the entry's
    place among the first ``depth`` rows."""

    results: dict[str, list[str]]
    result_rows: dict[str, list[int]]
    places: dict[str, int | None]


def lancedb_oracle(planted: Planted, embedder: Any, limit: int, depth: int, metric: str = "l2") -> Oracle:
    import lancedb

    table = lancedb.connect(str(planted.db_dir)).open_table(NAME)
    every = table.search().with_row_id(True).limit(None).to_arrow()
    row_of = dict(zip(every.column("_rowid").to_pylist(), range(every.num_rows), strict=True))
    results: dict[str, list[str]] = {}
    rows: dict[str, list[int]] = {}
    places: dict[str, int | None] = {}
    for number, query in enumerate(planted.queries):
        if not query:
            continue
        key = planted.ids[number]
        vector = embedder.embed_sync(query)
        found = table.search(vector).distance_type(metric).limit(depth).with_row_id(True).to_list()
        found_rows = [int(row["_rowid"]) for row in found]
        results[key] = [planted.ids[row_of[row]] for row in found_rows[:limit]]
        rows[key] = found_rows[:limit]
        own = [row for row in found_rows if row_of[row] == number]
        places[key] = found_rows.index(own[0]) + 1 if own else None
    return Oracle(results, rows, places)
