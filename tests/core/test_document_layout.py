"""The window's choice of document columns: offered columns, the detected layout, and a choice the table
cannot honour refused with the reason (the schemas and layouts are written out by hand)."""

from __future__ import annotations

import pyarrow as pa

from recall_gui.core.search import DocumentLayout, layout_choices

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
