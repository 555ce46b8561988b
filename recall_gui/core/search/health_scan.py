"""A knowledge base's health report: LanceDB's own statistics and one streamed scan of its rows.

Counts come from LanceDB (``stats()``: rows and fragments; ``list_indices()``/``index_stats()``: which rows
each index covers). Lists come from one scan of the id, content and vector columns in batches, so memory
stays bounded whatever the table's size (per row only an id and a 16-byte digest of its content are kept,
to find contents that are exactly the same). Nothing is written: an optimize or a re-index is only advised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recall_gui.core.registry.registry import DatabaseEntry
from recall_gui.core.search.health import check_health
from recall_gui.core.session.session import Session
from recall_gui.core.storage.table_cache import legacy_fts_folder

#: More small fragments than this make searches slower than they need to be.
SMALL_FRAGMENTS_WARNED = 10
#: Rows read per batch of the scan.
SCAN_BATCH_ROWS = 8192


@dataclass(frozen=True)
class IndexHealth:
    name: str
    type: str
    columns: tuple[str, ...]
    unindexed_rows: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "columns": list(self.columns),
            "unindexed_rows": self.unindexed_rows,
        }


@dataclass
class HealthReport:
    rows: int = 0
    versions: int = 0
    fragments: int = 0
    small_fragments: int = 0
    indices: list[IndexHealth] = field(default_factory=list)
    width: int = 0
    zero_norm: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    not_finite: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    duplicate_groups: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        listed = (
            self.zero_norm,
            self.missing,
            self.not_finite,
            self.empty,
            self.duplicate_groups,
            self.warnings,
        )
        return not any(listed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "versions": self.versions,
            "fragments": {"count": self.fragments, "small": self.small_fragments},
            "indices": [index.to_dict() for index in self.indices],
            "vectors": {
                "width": self.width,
                "zero_norm": self.zero_norm,
                "missing": self.missing,
                "not_finite": self.not_finite,
            },
            "content": {"empty": self.empty, "duplicate_groups": self.duplicate_groups},
            "warnings": self.warnings,
        }


async def health_report(
    session: Session,
    entry: DatabaseEntry,
    on_progress: Callable[[int, int], None] | None = None,
) -> HealthReport:
    """The report of ``entry``'s table at its latest version. ``on_progress(rows_read, rows)`` after each
    batch of the scan; cancelling the awaiting task stops the scan between batches."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    opened = await session.tables.open(entry.target)
    table: Any = opened.table
    columns = opened.columns
    report = HealthReport(width=columns.vector_dim)
    stats = await table.stats()
    report.rows = int(stats["num_rows"])
    fragment_stats = stats.get("fragment_stats") or {}
    report.fragments = int(fragment_stats.get("num_fragments", 0))
    report.small_fragments = int(fragment_stats.get("num_small_fragments", 0))
    report.versions = len(await table.list_versions())
    for index in await table.list_indices():
        index_stats = await table.index_stats(index.name)
        unindexed = None if index_stats is None else int(index_stats.num_unindexed_rows)
        report.indices.append(IndexHealth(index.name, str(index.index_type), tuple(index.columns), unindexed))

    first_id: dict[bytes, str] = {}
    groups: dict[bytes, list[str]] = {}
    read = 0
    id_column = columns.id
    wanted = [name for name in (id_column, columns.content, columns.vector) if name is not None]
    batches = await table.query().select(wanted).to_batches(max_batch_length=SCAN_BATCH_ROWS)
    async for batch in batches:
        ids = (
            batch.column(id_column).cast(pa.string()).to_pylist()
            if id_column is not None
            else [str(read + number) for number in range(batch.num_rows)]
        )
        vectors = batch.column(columns.vector)
        present = np.asarray(vectors.is_valid())
        report.missing.extend(ids[number] for number in np.flatnonzero(~present))
        flat = pc.list_flatten(vectors).to_numpy(zero_copy_only=False).astype(np.float32)
        matrix = flat.reshape(-1, columns.vector_dim)
        positions = np.flatnonzero(present)
        finite = np.isfinite(matrix).all(axis=1)
        zero = finite & ~np.any(matrix != 0, axis=1)
        report.not_finite.extend(ids[positions[n]] for n in np.flatnonzero(~finite))
        report.zero_norm.extend(ids[positions[n]] for n in np.flatnonzero(zero))
        for number, text in enumerate(batch.column(columns.content).to_pylist()):
            if text is None or not str(text).strip():
                report.empty.append(ids[number])
                continue
            digest = hashlib.blake2b(str(text).encode("utf-8", "surrogatepass"), digest_size=16).digest()
            known = first_id.get(digest)
            if known is None:
                first_id[digest] = ids[number]
            else:
                groups.setdefault(digest, [known]).append(ids[number])
        read += batch.num_rows
        if on_progress is not None:
            on_progress(read, report.rows)
    report.duplicate_groups = list(groups.values())
    problems = (await check_health(session, entry)).problems
    _warn(
        report,
        entry,
        [f"{problem.message}" for problem in problems if problem.kind in ("model", "dimension")],
    )
    return report


def _warn(report: HealthReport, entry: DatabaseEntry, searching: list[str]) -> None:
    for index in report.indices:
        if index.unindexed_rows:
            report.warnings.append(
                f'{index.unindexed_rows} rows are not in the index "{index.name}" (added after it was '
                "built): searches scan them one by one; re-index the table to cover them"
            )
    if report.small_fragments > SMALL_FRAGMENTS_WARNED:
        report.warnings.append(
            f"{report.small_fragments} of {report.fragments} fragments are small: searches read many files; "
            "an optimize is recommended (table.optimize() in LanceDB; this app never runs it)"
        )
    target = entry.target
    legacy = legacy_fts_folder(target.uri, target.table_name)
    if legacy is not None:
        report.warnings.append(
            f"the table has a legacy (Tantivy) full-text index, {legacy}: LanceDB 0.40 refuses full-text "
            "search through table.search() while that folder exists, even beside a native index; delete "
            'that folder, then build a native index (table.create_index("content", config=FTS())) if there '
            "is none"
        )
    report.warnings.extend(searching)
