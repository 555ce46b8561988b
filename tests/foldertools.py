"""LanceDB folders written the way other tools write them, for the tests of opening folders by hand.

Every table holds the real passages of :data:`tests.kbtools.PASSAGES` with their vectors from the real
default model (all-MiniLM-L6-v2), except the one whose width no local model has: that one is only
browsed, never searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.kbtools import PASSAGES


def vector_column(matrix: Any) -> Any:
    import numpy as np
    import pyarrow as pa

    values = np.asarray(matrix, dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(values.ravel()), values.shape[1])


def registry_metadata(function: str, model: str, source: str = "text", vector: str = "vector") -> Any:
    """The schema metadata LanceDB's own embedding registry writes for ``function``/``model`` (made by
    LanceDB itself; creating the function loads no model and downloads nothing)."""
    from lancedb.embeddings import EmbeddingFunctionConfig, get_registry

    registry = get_registry()
    created = registry.get(function).create(name=model)
    config = EmbeddingFunctionConfig(source_column=source, vector_column=vector, function=created)
    return registry.get_table_metadata([config])


def write_lancedb_registry_table(
    db_dir: Path, table: str, vectors: Any, *, function: str = "sentence-transformers", model: str
) -> None:
    """A table as LanceDB's embedding API writes it: ``text`` and ``vector``, the model in the schema."""
    import lancedb
    import pyarrow as pa

    data = pa.table({"text": pa.array(list(PASSAGES.values()), pa.utf8()), "vector": vector_column(vectors)})
    data = data.replace_schema_metadata(registry_metadata(function, model))
    lancedb.connect(str(db_dir)).create_table(table, data)


def write_langchain_table(db_dir: Path, table: str, vectors: Any) -> None:
    """A table as LangChain's LanceDB store writes it: ``id``, ``text``, ``vector`` and a ``metadata``
    struct; no model named anywhere."""
    import lancedb
    import pyarrow as pa

    keys = list(PASSAGES)[: len(vectors)]  # the first passages, as many as there are vectors
    ids = [f"lc-{key}" for key in keys]
    metadata = [{"source": f"notes/{key}.md", "page": index} for index, key in enumerate(keys)]
    data = pa.table(
        {
            "id": pa.array(ids, pa.utf8()),
            "text": pa.array([PASSAGES[key] for key in keys], pa.utf8()),
            "vector": vector_column(vectors),
            "metadata": pa.array(metadata),
        }
    )
    lancedb.connect(str(db_dir)).create_table(table, data)


def write_wide_table(db_dir: Path, table: str, width: int, texts: Sequence[str]) -> None:
    """A table of ``width``-dimensional vectors (a model no local model matches); only browsed."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(len(texts), width)).astype(np.float32)
    data = pa.table(
        {
            "id": pa.array([f"w{i}" for i in range(len(texts))], pa.utf8()),
            "content": pa.array(list(texts), pa.utf8()),
            "vector": vector_column(matrix),
        }
    )
    lancedb.connect(str(db_dir)).create_table(table, data)
