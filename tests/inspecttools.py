"""A real knowledge base with a history: a table written in six versions (an append, a delete, an update
of a text, an update of a text and its vector, a tag, an overwrite), with string, number and nested
metadata. Every vector is the real model's embedding of its text."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.kbtools import PASSAGES, KnowledgeBase, cosh_entry, write_registry

NAME = "notes"
SOURCES = [f"doc{i % 3}.md" for i in range(len(PASSAGES))]
TIDES_AFTER = "Ocean tides follow the Moon and, to a lesser degree, the Sun."
BERLIN_AFTER = "Berlin, Germany's capital, is home to the Brandenburg Gate."
PARIS_2 = "Paris hosts the Louvre, the most visited art museum in the world."
NEW_ROW = "Kyoto was the imperial capital of Japan for over a thousand years."


@dataclass(frozen=True)
class History:
    """The knowledge base, and what each version did."""

    kb: KnowledgeBase
    #: version -> what made it (``created``, ``added``, ``deleted``, ``updated``, ``merged``, ``overwritten``)
    made_by: dict[int, str]
    tag: str = "before-cleanup"
    tagged_version: int = 3

    @property
    def latest(self) -> int:
        return max(self.made_by)


def _rows(embedder: Any, ids: list[str], texts: list[str], pages: list[int], sources: list[str]) -> Any:
    import numpy as np
    import pyarrow as pa

    vectors = np.vstack(embedder.embed_many(texts)).astype(np.float32)
    return pa.table(
        {
            "id": pa.array(ids, pa.utf8()),
            "content": pa.array(texts, pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
            "source": pa.array(sources, pa.utf8()),
            "page": pa.array(pages, pa.int64()),
            "meta": pa.array([{"lang": "en" if p % 2 else "fr"} for p in pages]),
        }
    )


def write_history(root: Path, embedder: Any) -> History:
    import lancedb

    db_dir = root / "lancedb"
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    db = lancedb.connect(str(db_dir))
    table = db.create_table(NAME, _rows(embedder, ids, texts, list(range(len(ids))), SOURCES))
    made_by = {table.version: "created"}
    table.add(_rows(embedder, ["paris-2"], [PARIS_2], [12], ["doc0.md"]))
    made_by[table.version] = "added"
    table.delete("id = 'coffee'")
    made_by[table.version] = "deleted"
    table.tags.create("before-cleanup", table.version)
    table.update(where="id = 'tides'", values={"content": TIDES_AFTER})
    made_by[table.version] = "updated"
    berlin = _rows(embedder, ["berlin"], [BERLIN_AFTER], [3], [SOURCES[3]])
    table.merge_insert("id").when_matched_update_all().execute(berlin)
    made_by[table.version] = "merged"
    import pyarrow as pa
    import pyarrow.compute as pc

    data = table.to_arrow()
    kept = data.filter(pc.invert(pc.is_in(data.column("id"), value_set=pa.array(["unicode"]))))
    new = _rows(embedder, ["kyoto"], [NEW_ROW], [13], ["doc1.md"])

    replaced = db.create_table(NAME, pa.concat_tables([kept.select(new.schema.names), new]), mode="overwrite")
    made_by[replaced.version] = "overwritten"
    registry = write_registry(root / "registry", [cosh_entry(NAME, db_dir)])
    kb = KnowledgeBase(NAME, db_dir, registry, tuple(ids), tuple(texts), None)
    return History(kb, made_by, tagged_version=3)


def lancedb_versions(db_dir: Path, name: str = NAME) -> list[tuple[int, int]]:
    """Version numbers and row counts as LanceDB lists them (to check that nothing was added)."""
    import lancedb

    table = lancedb.connect(str(db_dir)).open_table(name)
    listed = table.list_versions()
    tags = table.tags.list()
    return [(int(v["version"]), int(v["metadata"]["total_rows"])) for v in listed] + [
        (-1, int(tag["version"])) for tag in tags.values()
    ]
