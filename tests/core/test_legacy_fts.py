"""A table that still has a legacy (Tantivy) full-text index, written with Tantivy as LanceDB wrote one before
0.40: LanceDB 0.40 refuses it (the oracle), health warns with what to do, `search --fts` says why it cannot,
and the agent's vector search is untouched. Nothing is deleted or rebuilt."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import lancedb
import pytest
from lancedb.index import FTS

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.search.harness import Harness
from recall_gui.core.search.word_search import text_search
from tests.core.test_cli import cli
from tests.kbtools import KnowledgeBase, snapshot_tree

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own


def write_legacy_fts_index(table: Any, folder: Path) -> None:
    """The index LanceDB's ``create_fts_index(use_tantivy=True)`` built: a Tantivy index of the text with
    each row's position as ``doc_id``, in ``<table>.lance/_indices/fts``."""
    import tantivy

    folder.mkdir(parents=True)
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("doc_id", stored=True)
    builder.add_text_field("content", stored=True)
    index = tantivy.Index(builder.build(), path=str(folder))
    writer = index.writer()
    for doc_id, text in enumerate(table.to_arrow().column("content").to_pylist()):
        writer.add_document(tantivy.Document(doc_id=doc_id, content=[text]))
    writer.commit()
    writer.wait_merging_threads()


@pytest.fixture
def legacy(kb: KnowledgeBase) -> Path:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    folder = kb.db_dir / f"{kb.name}.lance" / "_indices" / "fts"
    write_legacy_fts_index(table, folder)
    return folder


def test_lancedb_refuses_the_legacy_index_and_health_says_what_to_do(kb: KnowledgeBase, legacy: Path) -> None:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    with pytest.raises(ValueError, match="Legacy Tantivy FTS index detected"):
        table.search("password", query_type="fts").limit(3).to_list()
    before = snapshot_tree(kb.db_dir)
    # Advice: listed, not failing by default; failing when --fail-on names it.
    advised = cli("health", "--registry", str(kb.registry_dir), "--db", kb.name)
    assert advised.returncode == 0, advised.stderr
    done = cli("health", "--registry", str(kb.registry_dir), "--db", kb.name, "--json", "--fail-on", "advice")
    assert done.returncode == 1, done.stderr
    warning = (
        f"the table has a legacy (Tantivy) full-text index, {legacy}: LanceDB 0.40 refuses full-text search "
        "through table.search() while that folder exists, even beside a native index; delete that folder, "
        'then build a native index (table.create_index("content", config=FTS())) if there is none'
    )
    assert warning in json.loads(done.stdout)["warnings"]
    assert snapshot_tree(kb.db_dir) == before  # nothing deleted, nothing built


def test_beside_a_native_index_the_app_searches_it_and_still_warns_until_the_folder_is_gone(
    kb: KnowledgeBase, legacy: Path
) -> None:
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    table.create_index("content", config=FTS())  # the owner builds a native index, the folder stays
    with pytest.raises(ValueError, match="Legacy Tantivy FTS index detected"):
        table.search("password", query_type="fts").limit(3).to_list()
    beside = cli(
        "search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "3", "--fts", "password"
    )
    assert beside.returncode == 0, beside.stderr
    warned = cli("health", "--registry", str(kb.registry_dir), "--db", kb.name, "--json")
    assert any(str(legacy) in warning for warning in json.loads(warned.stdout)["warnings"])
    shutil.rmtree(legacy)  # the owner deletes the folder, as the warning says
    oracle = [row["id"] for row in table.search("password", query_type="fts").limit(3).to_list()]
    assert oracle and [hit["id"] for hit in json.loads(beside.stdout)["results"]] == oracle
    health = cli("health", "--registry", str(kb.registry_dir), "--db", kb.name, "--json")
    assert not any("legacy" in warning for warning in json.loads(health.stdout)["warnings"])


def test_full_text_search_says_why_and_the_agents_vector_search_is_lancedbs(
    kb: KnowledgeBase, legacy: Path, embedder: Any
) -> None:
    refused = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--fts", "password")
    assert refused.returncode == 1 and refused.stdout == ""  # as for a table with no full-text index
    assert (
        f'"{kb.name}" cannot be searched by its words: its full-text index is a legacy (Tantivy) one, which '
        "LanceDB 0.40 cannot search"
    ) in refused.stderr
    assert f"Delete {legacy}, then build one in LanceDB" in refused.stderr
    query = "How do I change my password?"
    done = cli("search", "--registry", str(kb.registry_dir), "--db", kb.name, "--limit", "3", query)
    assert done.returncode == 0, done.stderr
    table = lancedb.connect(str(kb.db_dir)).open_table(kb.name)
    oracle = table.search(embedder.embed_sync(query)).distance_type("l2").limit(3).to_list()
    assert [hit["id"] for hit in json.loads(done.stdout)["results"]] == [row["id"] for row in oracle]
    assert legacy.is_dir()


def test_the_windows_full_text_search_refuses_a_legacy_index_saying_which_folder_to_delete(
    kb: KnowledgeBase, legacy: Path
) -> None:
    """The window's search (in this process) gives the same refusal as `search --fts`, for both methods."""
    before = snapshot_tree(kb.db_dir)

    async def refusal(method: Any) -> InvalidInputError:
        harness = Harness(kb.registry_dir)
        try:
            with pytest.raises(InvalidInputError) as caught:
                await text_search(harness, harness.resolve_active(kb.name), "password", 3, method)
            return caught.value
        finally:
            await harness.aclose()

    for method in ("fts", "hybrid"):
        refused = asyncio.run(refusal(method))
        assert str(refused) == (
            f'"{kb.name}" cannot be searched by its words: its full-text index is a legacy (Tantivy) one, '
            "which LanceDB 0.40 cannot search"
        )
        assert refused.hint == (
            f'Delete {legacy}, then build one in LanceDB, e.g. table.create_index("content", config=FTS()); '
            "recall-gui never writes to a knowledge base."
        )
    assert snapshot_tree(kb.db_dir) == before
