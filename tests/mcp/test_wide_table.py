"""A table of thousands of columns: the agent's search reads its id and content only, through the MCP
server's ``recall_search`` and through ``recall-gui search``, and answers as LanceDB ranks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.search import nearest
from recall_gui.core.search.harness import Harness
from recall_gui.core.session import vector_cache
from recall_gui.mcp.server import call_recall_search
from tests.core.test_cli import cli
from tests.kbtools import PASSAGES, cosh_entry, write_lance_table, write_registry

#: Metadata columns besides id, content and vector.
WIDTH = 3000
QUERY = "What is the capital of France?"
NEEDED = {"id", "content", "vector", "_distance", "_rowid"}


@pytest.fixture
def wide(tmp_path: Path, passage_vectors: Any) -> tuple[Path, Path]:
    ids, texts = list(PASSAGES), list(PASSAGES.values())
    extra = {f"meta_{c}": list(range(c, c + len(ids))) for c in range(WIDTH)}
    write_lance_table(tmp_path / "db", "notes", ids, texts, passage_vectors, extra=extra)
    registry = write_registry(tmp_path / "registry", [cosh_entry("notes", tmp_path / "db")])
    return tmp_path / "db", registry


def lance_ids(db: Path, embedder: Any, limit: int) -> list[str]:
    import lancedb

    table = lancedb.connect(str(db)).open_table("notes")
    query = np.asarray(embedder.embed_sync(QUERY), np.float32)
    return (
        table.search(query)
        .distance_type("l2")
        .select(["id"])
        .limit(limit)
        .to_arrow()
        .column("id")
        .to_pylist()
    )


def test_the_servers_recall_search_reads_only_id_and_content(
    wide: tuple[Path, Path], embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, registry = wide
    read: list[set[str]] = []
    for module in (nearest, vector_cache):
        original = module.read_query

        async def recording(query: Any, what: str, original: Any = original) -> Any:
            rows = await original(query, what)
            read.append(set(rows.column_names))
            return rows

        monkeypatch.setattr(module, "read_query", recording)

    async def go() -> tuple[list[str], list[dict[str, Any]]]:
        harness = Harness(registry)  # the server's own kind of session: vectors kept in memory
        try:
            texts = []
            for _ in range(2):  # the first call reads the vectors into memory; the second is served from it
                result = await call_recall_search(harness, {"db_name": "notes", "query": QUERY, "limit": 3})
                texts.append(result.content[0].text)
            report = await harness.run({"db_name": "notes", "query": QUERY, "limit": 3})
            return texts, [hit.extra for hit in report.result.hits]
        finally:
            await harness.aclose()

    texts, extras = asyncio.run(go())
    expected = lance_ids(db, embedder, 3)
    for text in texts:
        assert [result["id"] for result in json.loads(text)["results"]] == expected
    assert extras == [{}, {}, {}]  # no metadata column was carried into the hits
    assert all(columns <= NEEDED for columns in read), [sorted(c)[:8] for c in read if not c <= NEEDED]


@pytest.mark.process
def test_the_cli_search_on_a_wide_folder_answers_as_lancedb(wide: tuple[Path, Path], embedder: Any) -> None:
    db, registry = wide
    expected = lance_ids(db, embedder, 4)
    for args in (("--path", str(db)), ("--registry", str(registry), "--db", "notes")):
        done = cli("search", *args, "--limit", "4", QUERY)
        assert done.returncode == 0, done.stderr
        results = json.loads(done.stdout)["results"]
        assert [set(result) for result in results] == [{"id", "content"}] * 4
        assert [result["id"] for result in results] == expected
    filtered = cli("search", "--path", str(db), "--where", "meta_7 >= 10", "--limit", "2", QUERY)
    assert filtered.returncode == 0, filtered.stderr
    assert [set(result) for result in json.loads(filtered.stdout)["results"]] == [{"id", "content"}] * 2
