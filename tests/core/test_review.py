"""A review of a real LanceDB table: verdicts matched by content across versions and ids, changed since
reviewed (with the old text from the table's history), closing and reopening, Undo, the queue's orders
and walking them, progress; and the knowledge base's files byte-identical throughout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from recall_gui.core.inspect.duplicates import find_duplicates
from recall_gui.core.reach.reach_report import ReachReport, Unreachable
from recall_gui.core.review.queue import (
    Order,
    changed_order,
    not_reviewed_order,
    table_order,
)
from recall_gui.core.review.queue_sources import filter_queue, near_copies_queue, unreachable_queue
from recall_gui.core.review.reviewing import Review, open_review
from recall_gui.core.session.session import Session
from tests.kbtools import snapshot_tree
from tests.reviewtools import Table, record_line, sha, write_table

IDS = tuple(f"e{n:02d}" for n in range(12))
TEXTS = tuple(f"Entry {n}: fact number {n} about topic {n % 3}." for n in range(12))


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return write_table(tmp_path / "kb", IDS, TEXTS)


def opened(table: Table, **options: object) -> tuple[Session, Review]:
    session = Session(keep_vectors=False)
    return session, asyncio.run(open_review(session, table.entry(), **options))  # type: ignore[arg-type]


def close(session: Session) -> None:
    asyncio.run(session.aclose())


def position_of(review: Review, content: str) -> int:
    (position,) = review.snapshot.positions_of_sha(sha(content)).tolist()
    return int(position)


def test_close_and_reopen_continues_where_the_review_stopped(table: Table) -> None:
    session, review = opened(table)
    queue = not_reviewed_order(review.state)
    index = queue.next_index(-1, review.state, not_reviewed_only=True)
    for verdict in ("correct", "correct", "wrong", "outdated", "correct"):
        assert index is not None
        review.mark(queue.position(index), verdict)
        index = queue.next_index(index, review.state, not_reviewed_only=True)
    close(session)

    session, again = opened(table)
    resumed = not_reviewed_order(again.state)
    first = resumed.next_index(-1, again.state, not_reviewed_only=True)
    assert first is not None and again.snapshot.id_at(resumed.position(first)) == "e05"
    assert again.progress().text() == "reviewed 5 of 12 · 1 wrong · 1 outdated"
    assert again.state.verdict_at(position_of(again, TEXTS[2])) == "wrong"
    close(session)


def test_a_new_version_changing_three_reviewed_entries_shows_exactly_those_three(table: Table) -> None:
    session, review = opened(table)
    for position in range(len(IDS)):
        review.mark(position, "correct")
    close(session)
    new_texts = list(TEXTS)
    for n in (1, 4, 9):
        new_texts[n] = f"Entry {n}: a corrected fact."
    table.rewrite(IDS[2:] + IDS[:2], new_texts[2:] + new_texts[:2])  # re-indexed too

    session, again = opened(table)
    assert again.snapshot.version == 2
    changed = again.state.changed_entries()
    assert sorted(entry.entry_id for entry in changed) == ["e01", "e04", "e09"]
    assert again.state.changed == 3 and again.state.counts()["correct"] == 9
    assert [again.snapshot.id_at(p) for p in changed_order(again.state).positions] == ["e04", "e09", "e01"]
    for entry in changed:
        n = int(entry.entry_id[1:])
        assert entry.content_sha256 == sha(new_texts[n]) and entry.reviewed.content_sha256 == sha(TEXTS[n])
        assert asyncio.run(again.old_text(session, entry)) == TEXTS[n]  # version 1, read-only
        assert asyncio.run(again.text_at(session, entry.position)) == new_texts[n]
    close(session)


def test_rows_that_share_an_id_are_told_apart_by_content(tmp_path: Path) -> None:
    texts = ("first document", "second document", "third document")
    shared = write_table(tmp_path / "kb", ("content",) * 3, texts)
    session, review = opened(shared)
    review.mark(position_of(review, texts[1]), "wrong")
    assert [review.state.verdict_at(p) for p in range(3)] == [None, "wrong", None]
    close(session)
    # The text changes under the shared id: no "changed since reviewed" (the id tells nothing apart).
    shared.rewrite(("content",) * 3, ("first document", "second document, edited", "third document"))
    session, again = opened(shared)
    assert again.state.changed == 0 and again.state.not_reviewed == 3 and again.state.gone() == 1
    close(session)


def test_a_verdict_follows_its_content_to_another_id_and_row(table: Table) -> None:
    session, review = opened(table)
    review.mark(position_of(review, TEXTS[3]), "outdated", "superseded by the 2025 rules")
    close(session)
    table.rewrite(["renamed", *IDS[4:]], [TEXTS[3], *TEXTS[4:]])
    session, again = opened(table)
    position = position_of(again, TEXTS[3])
    record = again.state.record_at(position)
    assert again.snapshot.id_at(position) == "renamed" and record is not None
    assert (record.verdict, record.note, record.entry_id) == (
        "outdated",
        "superseded by the 2025 rules",
        "e03",
    )
    close(session)


def test_undo_takes_back_the_newest_verdict_and_the_file_only_grows(table: Table) -> None:
    session, review = opened(table)
    review.mark(0, "correct")
    review.mark(0, "wrong")
    review.mark(1, "duplicate")
    size = review.file.path.stat().st_size
    assert review.undo() is not None and review.state.verdict_at(1) is None
    assert review.undo() is not None and review.state.verdict_at(0) == "correct"
    lines = [json.loads(line) for line in review.file.path.read_text(encoding="utf-8").splitlines()]
    assert [line["kind"] for line in lines] == ["verdict"] * 3 + ["undo"] * 2
    assert lines[3]["undoes"] == lines[2]["record"] and review.file.path.stat().st_size > size
    close(session)
    session, again = opened(table)  # the undos hold after reopening
    assert [again.state.verdict_at(p) for p in (0, 1)] == ["correct", None]
    close(session)


def test_another_processs_verdicts_are_followed(table: Table) -> None:
    session, mine = opened(table, who="alice")
    other_session, theirs = opened(table, who="bob")
    theirs.mark(5, "wrong")
    assert mine.state.verdict_at(5) is None
    assert mine.follow_file() == 1 and mine.state.verdict_at(5) == "wrong"
    record = mine.state.record_at(5)
    assert record is not None and record.who == "bob"
    close(session)
    close(other_session)


def test_walking_the_queue_skips_what_has_a_verdict_when_asked(table: Table) -> None:
    session, review = opened(table)
    for position in (1, 2, 5):
        review.mark(position, "skip")
    queue = table_order(review.state)
    assert queue.next_index(0, review.state) == 1
    assert queue.next_index(0, review.state, not_reviewed_only=True) == 3
    assert queue.previous_index(5, review.state, not_reviewed_only=True) == 4
    assert queue.previous_index(3, review.state, not_reviewed_only=True) == 0
    assert queue.next_index(11, review.state) is None and queue.previous_index(0, review.state) is None
    assert queue.counter(4) == "5 of 12" and queue.index_of(7) == 7
    close(session)


def test_a_filter_orders_the_rows_it_keeps_and_a_statement_is_refused(table: Table) -> None:
    from recall_gui.core.base.errors import FilterError

    session, review = opened(table)
    queue = asyncio.run(filter_queue(session, review, "id IN ('e07', 'e02', 'e10')"))
    assert queue.order == Order.FILTER and [review.snapshot.id_at(p) for p in queue.positions] == [
        "e02",
        "e07",
        "e10",
    ]
    with pytest.raises(FilterError):
        asyncio.run(filter_queue(session, review, "id = 'e01'; DROP TABLE notes"))
    close(session)


def test_near_copies_come_group_by_group(tmp_path: Path) -> None:
    one, other = np.eye(4, 8, dtype=np.float32)[0], np.eye(4, 8, dtype=np.float32)[1]
    vectors = np.stack([one, np.eye(4, 8, dtype=np.float32)[2], other, one, other])
    texts = ("copy A", "alone", "copy B", "copy A, reworded", "copy B")
    copies = write_table(tmp_path / "kb", ("a1", "alone", "b1", "a2", "b2"), texts, vectors=vectors)
    session = Session()  # near-copies are found among the vectors in memory
    review = asyncio.run(open_review(session, copies.entry()))
    report = asyncio.run(find_duplicates(session, copies.entry().target, threshold=1e-6))
    queue = near_copies_queue(review, report)
    assert queue.order == Order.NEAR_COPIES
    assert [review.snapshot.id_at(p) for p in queue.positions] == ["a1", "a2", "b1", "b2"]
    close(session)


def test_unreachable_entries_of_an_older_version_are_found_by_their_content(table: Table) -> None:
    session, review = opened(table)
    row_of = {review.snapshot.id_at(p): int(review.snapshot.row_ids[p]) for p in range(len(IDS))}
    unreachable = tuple(Unreachable(key, row_of[key], "q", None, (), "hub", "") for key in ("e08", "e03"))
    report = ReachReport(
        db_name="notes", agent_searches=True, why_not=None, version=review.snapshot.version, model=None,
        metric="l2", method="exact", exact_places=True, note=None, limit=5, depth=100,
        query_from="first-sentence", searched=12, reachable=10, gini=0.0, hub_min=2,
        unreachable=unreachable, retrievability=(),
    )  # fmt: skip
    close(session)
    table.rewrite(IDS[::-1], TEXTS[::-1])  # a new version: other row ids
    session, again = opened(table)
    queue = asyncio.run(unreachable_queue(session, again, report))
    assert [again.snapshot.id_at(p) for p in queue.positions] == ["e08", "e03"]
    assert "matched to version 2 by content" in queue.note
    close(session)


def test_the_knowledge_base_is_byte_identical_after_a_whole_review(table: Table) -> None:
    before = snapshot_tree(table.db_dir)
    session, review = opened(table)
    for position in range(6):
        review.mark(position, "wrong" if position % 2 else "correct", "note")
    review.undo()
    asyncio.run(filter_queue(session, review, "id > 'e03'"))
    asyncio.run(review.text_at(session, 3))
    assert review.state.changed == 0 and review.progress().reviewed == 5
    close(session)
    assert snapshot_tree(table.db_dir) == before
    assert not list(table.db_dir.rglob("*.jsonl")) and not list(table.db_dir.rglob("*.lock"))


def test_a_version_is_hashed_once_and_then_read_from_the_cache_folder(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recall_gui.core.review import snapshot as snapshots

    session, review = opened(table)
    first = review.snapshot
    assert first.not_kept == ""

    async def never(*_args: object) -> None:
        raise AssertionError("read and hashed again")

    monkeypatch.setattr(snapshots, "_read_rows", never)
    again = asyncio.run(snapshots.read_snapshot(session, table.entry().target))
    assert np.array_equal(again.digests, first.digests) and again.ids.to_pylist() == list(IDS)
    assert [bytes(row).hex() for row in again.digests] == [sha(text) for text in TEXTS]
    close(session)


def test_a_damaged_line_of_the_review_file_is_said_and_the_rest_is_read(table: Table, tmp_path: Path) -> None:
    path = tmp_path / "team.jsonl"
    path.write_text(
        "{broken\n" + record_line(TEXTS[4], "wrong", record="r1", entry_id="e04"), encoding="utf-8"
    )
    session, review = opened(table, path=path)
    assert review.damaged_text() == f"1 line of {path} is not a review record (kept, not read)"
    assert review.state.verdict_at(position_of(review, TEXTS[4])) == "wrong"
    close(session)


@pytest.mark.parametrize("with_ids", [True, False])
def test_digests_are_the_texts_sha256_missing_and_non_latin_texts_too(tmp_path: Path, with_ids: bool) -> None:
    import lancedb
    import pyarrow as pa

    from recall_gui.core.review.snapshot import read_snapshot
    from recall_gui.core.storage.target import TableTarget

    texts = ["plain", None, "Grüße, ش, 🚀", "", "x" * 100_000]
    columns = {
        "content": pa.array(texts, pa.large_string()),
        "vector": pa.array([[0.5, 1.0]] * 5, pa.list_(pa.float32(), 2)),
    }
    if with_ids:
        columns = {"id": pa.array([10, 11, 12, 12, None], pa.int64()), **columns}
    lancedb.connect(str(tmp_path / "db")).create_table("t", pa.table(columns))
    session = Session(keep_vectors=False)
    snapshot = asyncio.run(read_snapshot(session, TableTarget(str(tmp_path / "db"), "t")))
    close(session)
    assert [snapshot.sha_at(p) for p in range(5)] == [sha(text or "") for text in texts]
    ids = [snapshot.id_at(p) for p in range(5)]
    assert ids == (
        ["10", "11", "12", "12", ""] if with_ids else [str(row) for row in snapshot.row_ids.tolist()]
    )
    assert snapshot.id_counts.tolist() == ([1, 1, 2, 2, 1] if with_ids else [1] * 5)
