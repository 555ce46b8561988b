"""Looking back at logged calls with a real knowledge base and the real model: replay after another program
changed the table, contents by id, coverage and its never-returned rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recall_gui.core.agent_log.agent_review import (
    coverage,
    lookup_contents,
    replay,
    returned_ids,
    rows_by_row_id,
)
from recall_gui.core.agent_log.call_record import CallRecord, now_iso
from recall_gui.core.agent_log.rank_changes import compare_ids
from recall_gui.core.registry.registry import load_registry
from recall_gui.core.search.harness import Harness
from tests.coretools import in_session, target
from tests.kbtools import KnowledgeBase, cosh_entry, write_lance_table, write_registry
from tests.logtools import add_row_elsewhere, logged_call

ROOT = Path(__file__).resolve().parents[2]


# --- comparing ------------------------------------------------------------------------------------------


def test_compare_marks_gained_lost_and_moved_ids() -> None:
    diff = compare_ids(["a", "b", "c", "d"], ["b", "a", "c", "x"])
    assert [(row.id, row.old_rank, row.new_rank, row.change) for row in diff.rows] == [
        ("b", 2, 1, "moved"),
        ("a", 1, 2, "moved"),
        ("c", 3, 3, "same"),
        ("x", None, 4, "gained"),
        ("d", 4, None, "lost"),
    ]
    assert (diff.gained, diff.lost, diff.moved) == (("x",), ("d",), ("b", "a"))
    assert diff.summary == "1 gained, 1 lost, 2 moved"
    same = compare_ids(["a", "b"], ["a", "b"])
    assert not same.changed and same.summary == "the same ids in the same order"


# --- replay -----------------------------------------------------------------------------------------------


@pytest.mark.process
def test_replay_marks_what_changed_after_another_program_added_a_row(
    kb: KnowledgeBase, embedder: Any, tmp_path: Path
) -> None:
    harness = Harness(kb.registry_dir)
    try:
        arguments = {"db_name": kb.name, "query": "What is the capital city of France?", "limit": 3}
        before = logged_call(harness, arguments)
        assert before.result_ids[0] == "paris"

        unchanged = asyncio.run(replay(harness, before))
        assert unchanged.error is None and not unchanged.diff.changed

        content = "Paris is the capital city of France."
        add_row_elsewhere(kb.db_dir, kb.name, "paris-capital", content, embedder, tmp_path)

        again = asyncio.run(replay(harness, before))
    finally:
        asyncio.run(harness.aclose())
    assert again.error is None and again.report is not None
    assert again.report.result.table_version is not None and before.table_version is not None
    assert again.report.result.table_version > before.table_version
    diff = again.diff
    assert diff.changed
    assert diff.gained == ("paris-capital",)
    assert diff.lost == (before.result_ids[-1],)  # pushed out of the three
    now = [row.id for row in diff.rows if row.new_rank is not None]
    assert now == [hit.id for hit in again.report.result.hits]
    assert set(diff.moved) == {
        i for i in before.result_ids[:2] if now.index(i) + 1 != before.result_ids.index(i) + 1
    }


def test_replay_of_a_failed_or_foreign_call_says_why(kb: KnowledgeBase) -> None:
    harness = Harness(kb.registry_dir)
    missing = CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": "gone", "query": "x"})
    foreign = CallRecord(now_iso(), "c", "1", "recall_write", {"db_name": kb.name}, ("a",))
    try:
        failed = asyncio.run(replay(harness, missing))
        other = asyncio.run(replay(harness, foreign))
    finally:
        asyncio.run(harness.aclose())
    assert failed.error == f"Database 'gone' not found. Active databases: {kb.name}"
    assert other.error == "Unknown tool: recall_write (this server has recall_search)"
    assert other.diff.lost == ("a",)


# --- contents by id ----------------------------------------------------------------------------------------


def test_contents_are_looked_up_by_id_and_gone_ids_left_out(kb: KnowledgeBase) -> None:
    wanted = ["tides", "no-such-id", "paris", "tides"]
    found = in_session(lambda session: lookup_contents(session, target(str(kb.db_dir), kb.name), wanted))
    assert found == {i: kb.contents[kb.ids.index(i)] for i in ("tides", "paris")}


def test_ids_with_quotes_and_numeric_id_columns_are_found(tmp_path: Path, passage_vectors: Any) -> None:
    import lancedb
    import numpy as np
    import pyarrow as pa

    quoted = ("it's", 'say "hi"', "back`tick", "plain")
    write_lance_table(tmp_path, "quoted", quoted, ("one", "two", "three", "four"), passage_vectors[:4])
    found = in_session(
        lambda session: lookup_contents(session, target(str(tmp_path), "quoted"), list(quoted))
    )
    assert found == dict(zip(quoted, ("one", "two", "three", "four"), strict=True))

    matrix = np.asarray(passage_vectors[:3], dtype=np.float32)
    numeric = pa.table(
        {
            "id": pa.array([7, 8, 9], pa.int64()),
            "content": ["seven", "eight", "nine"],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )
    lancedb.connect(str(tmp_path)).create_table("numeric", numeric)
    found = in_session(
        lambda session: lookup_contents(session, target(str(tmp_path), "numeric"), ["9", "7", "1"])
    )
    assert found == {"9": "nine", "7": "seven"}


# --- coverage ---------------------------------------------------------------------------------------------


def test_coverage_counts_the_entries_the_logged_calls_returned(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path
) -> None:
    kb = make_kb()
    harness = Harness(kb.registry_dir)
    try:
        records = [
            logged_call(harness, {"db_name": kb.name, "query": "reset my password", "limit": 2}),
            logged_call(harness, {"db_name": kb.name, "query": "capital of Germany", "limit": 1}),
            logged_call(harness, {"db_name": kb.name, "query": "reset my password", "limit": 3}),
        ]
    finally:
        asyncio.run(harness.aclose())
    ignored = [
        CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": kb.name, "query": "x"}, error="failed"),
        CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": "other", "query": "x"}, ("tides",)),
        CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": kb.name}, ("no-longer-there",)),
    ]
    expected_returned = {i for r in records for i in r.result_ids}
    assert len(expected_returned) < len(records[0].result_ids) + 1 + 3  # the two password calls overlap

    entry = load_registry(kb.registry_dir).get(kb.name)
    assert entry is not None
    found = in_session(lambda session: coverage(session, entry, [*records, *ignored]))
    assert found.entries == len(kb.ids)
    assert found.returned == len(expected_returned)
    assert found.never_returned == tuple(i for i in kb.ids if i not in expected_returned)
    assert found.calls == 4  # the three above, and the one whose id is gone from the table
    assert found.to_dict() == {
        "db_name": kb.name,
        "entries": len(kb.ids),
        "returned": len(expected_returned),
        "never_returned": list(found.never_returned),
    }
    assert returned_ids(ignored, kb.name) == ({"no-longer-there"}, 1)

    # The never-returned rows, browsed page by page in the same order, with their contents.
    pages = [
        in_session(
            lambda session, offset=offset: rows_by_row_id(
                session, entry.target, found.never_returned_rows, offset=offset, limit=4
            )
        )
        for offset in range(0, len(found.never_returned_rows), 4)
    ]
    assert all(page.total == len(found.never_returned) for page in pages)
    assert tuple(i for page in pages for i in page.ids) == found.never_returned
    assert tuple(c for page in pages for c in page.contents) == tuple(
        kb.contents[kb.ids.index(i)] for i in found.never_returned
    )


def test_coverage_of_a_table_without_an_id_column_uses_row_ids(tmp_path: Path, passage_vectors: Any) -> None:
    import lancedb
    import numpy as np
    import pyarrow as pa

    matrix = np.asarray(passage_vectors[:3], dtype=np.float32)
    data = pa.table(
        {
            "text": ["alpha", "beta", "gamma"],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), matrix.shape[1]),
        }
    )
    lancedb.connect(str(tmp_path / "db")).create_table("plain", data)
    registry = write_registry(tmp_path / "registry", [cosh_entry("plain", tmp_path / "db")])
    entry = load_registry(registry).get("plain")
    assert entry is not None
    record = CallRecord(now_iso(), "c", "1", "recall_search", {"db_name": "plain", "query": "q"}, ("1",))
    found = in_session(lambda session: coverage(session, entry, [record]))
    assert (found.entries, found.returned, found.never_returned) == (3, 1, ("0", "2"))
    contents = in_session(lambda session: lookup_contents(session, entry.target, ["2", "0"]))
    assert contents == {"2": "gamma", "0": "alpha"}


@pytest.mark.parametrize("limit", [0, 100])
def test_pages_past_the_end_or_empty_are_empty(kb: KnowledgeBase, limit: int) -> None:
    page = in_session(
        lambda session: rows_by_row_id(
            session, target(str(kb.db_dir), kb.name), (0, 1), offset=5, limit=limit
        )
    )
    assert (len(page), page.total) == (0, 2)
