"""A knowledge base's health report: LanceDB's own statistics and one streamed scan of its rows.

Counts come from LanceDB (``stats()``: rows and fragments; ``list_indices()``/``index_stats()``: which rows
each index covers). Lists come from one scan of the id, content and vector columns in batches, so memory
stays bounded whatever the table's size (per row only an id and a 16-byte digest of its content are kept,
to find contents that are exactly the same). The same scan measures each text against what the model
reads (its tokenizer, on the session's inspection thread while the next batch is read): how many rows are
longer, and how much of the text no vector search can find. Where ids repeat, rows are listed by their
content (``content·3f2a9c1e``). Nothing is written: an optimize or a re-index is only advised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recall_gui.core.base.captions import plural
from recall_gui.core.base.errors import RecallError
from recall_gui.core.embedders.model_reading import ModelReading, ReadExtent, TableReading
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.search.health import check_health
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.entry_names import IdRepeats
from recall_gui.core.storage.lance_calls import bounded
from recall_gui.core.storage.target import legacy_fts_folder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: More small fragments than this make searches slower than they need to be.
SMALL_FRAGMENTS_WARNED = 10
#: Rows read per page of the scan (its memory grows with it: docs/PERFORMANCE_LOG.md#health).
SCAN_BATCH_ROWS = 4096
#: What a report can list, by kind (``health --fail-on`` chooses among them): vectors a search cannot use;
#: a model or width a search fails with; empty contents; contents that are exactly the same; advice
#: (rows outside an index, many small fragments, a legacy full-text index); rows longer than the model
#: reads (text no vector search can find).
HEALTH_KINDS = ("vectors", "model", "empty", "duplicates", "advice", "unread")


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
    #: Vectors whose squared length underflows float32 (below its smallest normal number) or overflows it.
    too_short: list[str] = field(default_factory=list)
    too_long: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    duplicate_groups: list[list[str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The warnings that say a search fails (the model, the vectors' width).
    search_problems: list[str] = field(default_factory=list)
    #: The warnings that only advise (index coverage, small fragments, a legacy full-text index).
    advice: list[str] = field(default_factory=list)
    #: The ids several rows share (the lists name those rows ``content·3f2a9c1e``).
    repeats: IdRepeats = field(default_factory=IdRepeats)
    #: How much of the table's text its model reads; ``None`` when that is not known (``reading_note``).
    reading: TableReading | None = None
    reading_note: str | None = None

    @property
    def reading_text(self) -> str:
        """What the model reads of the table, in a line."""
        if self.reading is not None:
            return self.reading.describe()
        return f"what the model reads is not known: {self.reading_note}"

    def listed_kinds(self) -> frozenset[str]:
        """The kinds of :data:`HEALTH_KINDS` the report lists something of."""
        listed = {
            "vectors": bool(
                self.missing or self.zero_norm or self.not_finite or self.too_short or self.too_long
            ),
            "model": bool(self.search_problems),
            "empty": bool(self.empty),
            "duplicates": bool(self.duplicate_groups),
            "advice": bool(self.advice),
            "unread": self.reading is not None and self.reading.rows_longer > 0,
        }
        return frozenset(kind for kind, found in listed.items() if found)

    @property
    def healthy(self) -> bool:
        listed = (
            self.zero_norm,
            self.missing,
            self.not_finite,
            self.too_short,
            self.too_long,
            self.empty,
            self.duplicate_groups,
            self.warnings,
        )
        return not any(listed) and "unread" not in self.listed_kinds()

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
                "too_short": self.too_short,
                "too_long": self.too_long,
            },
            "content": {"empty": self.empty, "duplicate_groups": self.duplicate_groups},
            "model_reads": self.reading.to_dict()
            if self.reading is not None
            else {"unknown": self.reading_note},
            **({"ids_repeat": self.repeats.to_dict()} if self.repeats else {}),
            "warnings": self.warnings,
        }


async def health_report(
    session: Session,
    entry: DatabaseEntry,
    on_progress: Callable[[int, int], None] | None = None,
) -> HealthReport:
    """The report of ``entry``'s table at its latest version. ``on_progress(rows_read, rows)`` after each
    batch of the scan; cancelling the awaiting task stops the scan between batches. Each batch's texts are
    also measured against what the model reads, on the session's inspection thread."""
    import asyncio

    opened = await session.tables.open(entry.target)
    table: Any = opened.table
    columns = opened.columns
    report = HealthReport(width=columns.vector_dim)
    await _statistics(table, report)
    pinned_table = await session.tables.open(entry.target.at(opened.version))
    report.repeats = await pinned_table.id_repeats()
    reading = await _model_reading(session, entry, report)
    loop = asyncio.get_running_loop()
    measuring: asyncio.Future[list[ReadExtent]] | None = None
    #: Each row's content digest (8 bytes; 8 MB a million rows) and whether it has content: the rows that
    #: share one are read again at the end and grouped by their very text.
    digests: list[npt.NDArray[np.uint64]] = []
    has_text: list[npt.NDArray[np.bool_]] = []
    read = 0
    id_column = columns.id
    wanted = [name for name in (id_column, columns.content, columns.vector) if name is not None]
    # Pages of one version, each its own bounded read: LanceDB's streamed scan reads far ahead of the
    # batch it hands over (docs/PERFORMANCE_LOG.md#health).
    pinned: Any = pinned_table.table
    while read < report.rows:
        page = pinned.query().select(wanted).offset(read).limit(SCAN_BATCH_ROWS).to_arrow()
        batch = await bounded(page, f'reading "{entry.name}" for its health')
        if batch.num_rows == 0:
            break
        if measuring is not None and report.reading is not None:  # the last batch's, read meanwhile
            report.reading.add(await measuring)
        texts = ["" if text is None else str(text) for text in batch.column(columns.content).to_pylist()]
        measuring = (
            loop.run_in_executor(session.inspect_executor, _measure, reading, texts) if reading else None
        )
        ids = _names(report.repeats, batch, id_column, texts, read)
        _check_vectors(report, ids, batch.column(columns.vector).combine_chunks(), columns.vector_dim)
        page_digests, page_has_text = _digest_contents(report, ids, batch.column(columns.content).to_pylist())
        digests.append(page_digests)
        has_text.append(page_has_text)
        read += batch.num_rows
        if on_progress is not None:
            on_progress(read, report.rows)
    if measuring is not None and report.reading is not None:
        report.reading.add(await measuring)
    report.duplicate_groups = await _same_content(
        pinned, digests, has_text, id_column, columns.content, repeats=report.repeats
    )
    problems = (await check_health(session, entry)).problems
    _warn(
        report,
        entry,
        [f"{problem.message}" for problem in problems if problem.kind in ("model", "dimension")],
    )
    return report


async def _model_reading(session: Session, entry: DatabaseEntry, report: HealthReport) -> ModelReading | None:
    """The model's reading of texts (its model loaded), with ``report.reading`` ready to sum it; ``None``
    with ``report.reading_note`` saying why when it cannot be known here."""
    try:
        reading = await session.models.reading(entry.embedder)
    except RecallError as error:
        report.reading_note = f"the model cannot be loaded here ({error.message})"
        return None
    if reading is None:
        kinds = {"cloud": "a cloud model's tokenizer is not here", "unknown": "no model is known for it"}
        report.reading_note = kinds.get(entry.embedder.kind, "the model keeps no tokenizer to ask")
        return None
    report.reading = TableReading(entry.embedder.model, reading.limit)
    return reading


def _measure(reading: ModelReading, texts: list[str]) -> list[ReadExtent]:
    return reading.extents(texts, count_tokens=False)


def _names(repeats: IdRepeats, batch: Any, id_column: str | None, texts: list[str], read: int) -> list[Any]:
    """The page's rows as the report lists them: ids (row numbers without an id column; a missing id as
    it is), or ``content·3f2a9c1e`` where an id is shared."""
    import pyarrow as pa

    if id_column is None:
        return [str(read + number) for number in range(batch.num_rows)]
    ids: list[Any] = batch.column(id_column).cast(pa.string()).to_pylist()
    if not repeats:
        return ids
    return [
        repeats.label(entry_id, content_sha256(text))
        if entry_id is not None and repeats.is_shared(entry_id)
        else entry_id
        for entry_id, text in zip(ids, texts, strict=True)
    ]


async def _statistics(table: Any, report: HealthReport) -> None:
    """Rows, fragments, versions and indexes, as LanceDB's own statistics give them."""
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


def _check_vectors(report: HealthReport, ids: list[str], vectors: Any, width: int) -> None:
    """List the page's missing, not finite and zero vectors, and those too short or too long for float32."""
    import numpy as np
    import pyarrow.compute as pc

    present = np.asarray(vectors.is_valid())
    report.missing.extend(ids[number] for number in np.flatnonzero(~present))
    flat = pc.list_flatten(vectors).to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    matrix = flat.reshape(-1, width)
    positions = np.flatnonzero(present)
    finite = np.isfinite(matrix).all(axis=1)
    zero = finite & ~np.any(matrix != 0, axis=1)
    report.not_finite.extend(ids[positions[n]] for n in np.flatnonzero(~finite))
    report.zero_norm.extend(ids[positions[n]] for n in np.flatnonzero(zero))
    squares = np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64)  # exact enough: float32 rows
    limits = np.finfo(np.float32)
    short = finite & ~zero & (squares < limits.tiny)
    report.too_short.extend(ids[positions[n]] for n in np.flatnonzero(short))
    report.too_long.extend(ids[positions[n]] for n in np.flatnonzero(finite & (squares > limits.max)))


def _digest_contents(
    report: HealthReport, ids: list[str], texts: list[Any]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """List the page's empty contents; each other content's digest."""
    import numpy as np

    digests = np.zeros(len(texts), np.uint64)
    has_text = np.ones(len(texts), np.bool_)
    for number, text in enumerate(texts):
        if text is None or not str(text).strip():
            report.empty.append(ids[number])
            has_text[number] = False
            continue
        digest = hashlib.blake2b(str(text).encode("utf-8", "surrogatepass"), digest_size=8).digest()
        digests[number] = int.from_bytes(digest, "little")
    return digests, has_text


async def _same_content(
    table: Any,
    digests: list[npt.NDArray[np.uint64]],
    has_text: list[npt.NDArray[np.bool_]],
    id_column: str | None,
    content_column: str,
    *,
    repeats: IdRepeats,
) -> list[list[str]]:
    """Groups of ids with exactly the same content, in the order each group's first row comes: only the
    pages holding rows whose digest repeats are read again (id and content), and grouped by the text."""
    import numpy as np

    if not digests:
        return []
    every = np.concatenate(digests)
    with_text = np.concatenate(has_text)
    values, counts = np.unique(every[with_text], return_counts=True)
    candidates = np.flatnonzero(with_text & np.isin(every, values[counts > 1]))
    groups: dict[str, list[str]] = {}
    wanted = [name for name in (id_column, content_column) if name is not None]
    for page in np.unique(candidates // SCAN_BATCH_ROWS):
        start = int(page) * SCAN_BATCH_ROWS
        read = table.query().select(wanted).offset(start).limit(SCAN_BATCH_ROWS).to_arrow()
        batch = await bounded(read, "reading the rows whose contents look the same")
        texts = batch.column(content_column)
        ids = batch.column(id_column) if id_column is not None else None
        for position in candidates[(candidates >= start) & (candidates < start + SCAN_BATCH_ROWS)]:
            row = int(position) - start
            entry_id = str(ids[row].as_py()) if ids is not None else str(int(position))
            text = str(texts[row].as_py())
            if repeats.is_shared(entry_id):
                entry_id = repeats.label(entry_id, content_sha256(text))
            groups.setdefault(text, []).append(entry_id)
    return [group for group in groups.values() if len(group) > 1]


#: What vectors too short or too long for float32 do to searches, and what to do about them.
_TOO = {
    "short": "too short for float32: they come first or last in every search, whatever the query; embed "
    "their contents again, or delete those rows (the sum of their squared components is below 1.2e-38, so "
    "LanceDB's cosine distances to them are infinite or far off)",
    "long": "too long for float32: they come last (or first) in every search, whatever the query; embed "
    "their contents again, or delete those rows (the sum of their squared components is above 3.4e38, so "
    "LanceDB's distances to them are infinite or all alike)",
}


def _warn(report: HealthReport, entry: DatabaseEntry, searching: list[str]) -> None:
    for ids, extreme in ((report.too_short, "short"), (report.too_long, "long")):
        if ids:
            report.warnings.append(
                f"{plural(len(ids), 'vector')} {'is' if len(ids) == 1 else 'are'} {_TOO[extreme]}"
            )
    advice: list[str] = []
    for index in report.indices:
        if index.unindexed_rows:
            advice.append(
                f'{index.unindexed_rows} rows are not in the index "{index.name}" (added after it was '
                "built): searches scan them one by one; re-index the table to cover them"
            )
    if report.small_fragments > SMALL_FRAGMENTS_WARNED:
        advice.append(
            f"{report.small_fragments} of {report.fragments} fragments are small: searches read many files; "
            "an optimize is recommended (table.optimize() in LanceDB; this app never runs it)"
        )
    target = entry.target
    legacy = legacy_fts_folder(target.uri, target.table_name)
    if legacy is not None:
        advice.append(
            f"the table has a legacy (Tantivy) full-text index, {legacy}: LanceDB 0.40 refuses full-text "
            "search through table.search() while that folder exists, even beside a native index; delete "
            'that folder, then build a native index (table.create_index("content", config=FTS())) if there '
            "is none"
        )
    report.warnings.extend(advice)
    report.advice.extend(advice)
    report.warnings.extend(searching)
    report.search_problems.extend(searching)
