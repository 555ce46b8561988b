"""The window's choice of document columns: offered columns, the detected layout, and a choice the table
cannot honour refused with the reason (the schemas and layouts are written out by hand); and a chunk's
document as the window reads it."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.registry.registry_types import DatabaseEntry, EmbedderSpec
from recall_gui.core.search import DocumentLayout, layout_choices
from recall_gui.core.search.documents import Document, document_of
from recall_gui.core.session.session import Session
from tests.core.test_context_command import table
from tests.kbtools import KnowledgeBase

SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("source", pa.string()),
        ("doc_id", pa.string()),
        ("chunk_index", pa.int64()),
        ("vector", pa.list_(pa.float32(), 4)),
    ]
)
TAKEN = ("id", "text", "vector")


def test_without_a_choice_the_detected_layout_is_used_and_every_other_column_offered() -> None:
    choices = layout_choices(SCHEMA, TAKEN, None)
    assert choices.columns == ("source", "doc_id", "chunk_index")
    assert choices.detected == DocumentLayout("source", "chunk_index")
    assert choices.used == choices.detected
    assert choices.describe() == "documents by source, chunks ordered by chunk_index, detected"


def test_a_choice_of_the_tables_columns_is_used() -> None:
    choices = layout_choices(SCHEMA, TAKEN, DocumentLayout("doc_id", None))
    assert choices.used == DocumentLayout("doc_id", None)
    assert choices.detected == DocumentLayout("source", "chunk_index")
    assert choices.refused is None
    assert choices.describe() == "documents by doc_id, chunks ordered by the number in the id, as you chose"


def test_a_choice_naming_a_column_the_table_lacks_is_refused_with_the_reason() -> None:
    choices = layout_choices(SCHEMA, TAKEN, DocumentLayout("book", "chunk_index"))
    assert choices.used == DocumentLayout("source", "chunk_index")
    assert not choices.chosen
    assert choices.refused == 'the table has no column "book", so the detected columns are used'


# A chunk's document as the window reads it (in this process): the tables are written with LanceDB directly
# and the expected documents written out by hand.

LOCAL = EmbedderSpec("local", "AllMiniLML6V2")


def folder_entry(folder: Path, columns: dict[str, Any], embedder: EmbedderSpec = LOCAL) -> DatabaseEntry:
    """A table "kb" of ``columns`` (and small random vectors) in ``folder``, opened by its path."""
    table(folder, columns)
    return DatabaseEntry("kb", str(folder), "", embedder, table="kb", origin="opened")


def document(session: Session, entry: DatabaseEntry, entry_id: str, **how: Any) -> Document:
    return asyncio.run(document_of(session, entry, entry_id, **how))


def test_a_chunks_document_comes_in_its_position_columns_order_with_the_chunk_marked(
    tmp_path: Path, session: Session
) -> None:
    columns = {
        "id": ["c2", "x0", "c0", "c1"],
        "content": ["third", "other", "first", "second"],
        "source": ["a.md", "b.md", "a.md", "a.md"],
        "chunk_index": [2, 0, 0, 1],
    }
    found = document(session, folder_entry(tmp_path / "db", columns), "c1")
    assert (found.key, found.layout) == ("a.md", DocumentLayout("source", "chunk_index"))
    assert found.chunks == (("c0", "first"), ("c1", "second"), ("c2", "third"))
    assert found.at == 1
    assert found.neighbours("c1") == (("c0", "first"), ("c2", "third"))
    # Told by its id where the place given is another chunk's: the first chunk has nothing before it.
    assert found.neighbours("c0") == (None, ("c1", "second"))
    assert found.to_dict() == {
        "document": "a.md",
        "chunks": [{"id": i, "content": c} for i, c in found.chunks],
    }


def test_a_text_position_orders_by_its_text_and_chunks_without_one_come_last_by_their_id(
    tmp_path: Path, session: Session
) -> None:
    columns = {
        "id": ["n#0", "n#1", "n#2", "n#3", "n#4"],
        "content": ["v", "w", "x", "y", "z"],
        "source": ["n.md"] * 5,
        "written": ["2024-03-01", "2024-01-15", None, "2024-02-10", None],
    }
    entry = folder_entry(tmp_path / "db", columns)
    found = document(session, entry, "n#1", layout=DocumentLayout("source", "written"))
    assert [chunk_id for chunk_id, _ in found.chunks] == ["n#1", "n#3", "n#0", "n#2", "n#4"]
    assert found.at == 0


def test_without_a_document_column_the_ids_prefix_tells_the_document_and_not_a_longer_one(
    tmp_path: Path, session: Session
) -> None:
    columns = {
        "id": ["guide.md#10", "guide.md#1", "guide.md.bak#0", "guide.md#0", "guide.md#2"],
        "content": ["ten", "one", "backup", "zero", "two"],
    }
    found = document(session, folder_entry(tmp_path / "db", columns), "guide.md#2")
    assert (found.key, found.layout) == ("guide.md", DocumentLayout(None, None))
    assert [chunk_id for chunk_id, _ in found.chunks] == [
        "guide.md#0",
        "guide.md#1",
        "guide.md#2",
        "guide.md#10",
    ]
    assert found.at == 2


def test_a_chunk_whose_document_cannot_be_told_is_refused_saying_why(
    tmp_path: Path, session: Session
) -> None:
    entry = folder_entry(
        tmp_path / "db",
        {"id": ["a#0", "plain", "b#0"], "content": ["x", "y", "z"], "book": ["one", None, "two"]},
    )
    with pytest.raises(InvalidInputError) as no_value:
        document(session, entry, "plain", document_column="book")
    assert str(no_value.value) == '"plain" has no value in "book"'
    with pytest.raises(InvalidInputError) as untold:
        document(session, entry, "plain", layout=DocumentLayout(None, None))
    assert str(untold.value) == (
        'no document can be told for "plain": no column names one, and its id has no #, : or _chunk part'
    )
    assert untold.value.hint == "Name the column that holds the document with --document-column."


def test_an_entry_under_cosh_s_shared_id_is_its_own_document_named_by_its_content(
    cosh_kb: KnowledgeBase, session: Session
) -> None:
    """cosh stores each document whole under the id "content": nothing tells documents apart."""
    registered = load_registry(cosh_kb.registry_dir).get(cosh_kb.name)
    assert registered is not None
    # A cloud model's tokenizer is not here: the document comes without what the model reads of it.
    entry = replace(registered, embedder=EmbedderSpec("cloud", "text-embedding-3-small", "openai"))
    content, rows = cosh_kb.contents[2], len(cosh_kb.contents)
    sha = hashlib.sha256(content.encode("utf-8")).hexdigest()
    found = document(session, entry, f"content·{sha[:8]}", with_reading=True)
    assert (found.key, found.chunks, found.reading) == (f"content·{sha[:8]}", (("content", content),), ())
    assert found.to_dict() == {
        "document": f"content·{sha[:8]}",
        "chunks": [{"id": "content", "content_sha256": sha, "content": content}],
        "ids_repeat": {
            "rows": rows,
            "rows_sharing_an_id": rows,
            "ids_shared": 1,
            "shared_ids": {"content": rows},
        },
    }


def test_a_document_whose_model_is_not_here_is_shown_without_what_it_reads(
    tmp_path: Path, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "no-models"))  # an empty model cache
    columns = {"id": ["d#0", "d#1"], "content": ["first", "second"]}
    entry = folder_entry(tmp_path / "db", columns, EmbedderSpec("local", "BGESmallENV15"))
    found = document(session, entry, "d#1", with_reading=True)
    assert (found.chunks, found.reading) == ((("d#0", "first"), ("d#1", "second")), ())
