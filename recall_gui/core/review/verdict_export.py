"""The standing verdicts as a table (``recall-gui review export``): one row per content with a verdict,
oldest verdict first, with how many rows of the table hold that content now and its text (empty when the
table no longer holds it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recall_gui.core.review.reviewing import Review
from recall_gui.core.review.snapshot import digests_of
from recall_gui.core.session.session import Session
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.rows import columns_from_arrow
from recall_gui.core.tables.export import ExportFormat, ExportTable, to_csv, to_json

EXPORT_FIELDS = ("id", "content_sha256", "verdict", "note", "who", "when", "table_version", "rows", "content")
#: Rows read per query when the texts are looked up.
TAKE_CHUNK = 4096


async def verdict_table(session: Session, review: Review) -> ExportTable:
    """Every standing verdict with its content's rows and text at the review's version."""
    standing = review.state.ledger.standing_records()
    snapshot = review.snapshot
    shas = [record.content_sha256 for record in standing]
    index, positions = snapshot.match_digests(digests_of(shas)) if shas else (np.empty(0, np.intp),) * 2
    rows = np.bincount(index, minlength=len(shas))
    first: dict[int, int] = {}
    for given, position in zip(index.tolist(), positions.tolist(), strict=True):
        first.setdefault(given, position)
    texts = await _texts(
        session, review, {given: int(snapshot.row_ids[position]) for given, position in first.items()}
    )
    table_rows: list[tuple[Any, ...]] = []
    for given, record in enumerate(standing):
        table_rows.append(
            (
                record.entry_id,
                record.content_sha256,
                record.verdict,
                record.note,
                record.who,
                record.when,
                record.table_version,
                int(rows[given]),
                texts.get(given, ""),
            )
        )
    return ExportTable(EXPORT_FIELDS, tuple(table_rows))


async def _texts(session: Session, review: Review, row_ids: dict[int, int]) -> dict[int, str]:
    """The text of each row id (keyed as given), read at the snapshot's version."""
    opened = await session.tables.open(review.target.at(review.snapshot.version))
    wanted = sorted(set(row_ids.values()))
    columns = [name for name in (opened.columns.id, opened.columns.content) if name]
    found: dict[int, str] = {}
    for start in range(0, len(wanted), TAKE_CHUNK):
        taking = opened.table.take_row_ids(wanted[start : start + TAKE_CHUNK]).select(columns)
        rows = await read_query(taking.with_row_id(), f'reading table "{opened.name}"')
        read = columns_from_arrow(rows, opened.columns)
        found.update(zip((int(row) for row in read.row_ids if row is not None), read.contents, strict=True))
    return {given: found.get(row_id, "") for given, row_id in row_ids.items()}


def export_text(table: ExportTable, fmt: ExportFormat) -> str:
    return to_csv(table) if fmt == "csv" else to_json(table)
