"""What a review file's records say now: the standing verdict on each content.

A content's verdict is its latest verdict record (by ``when``; records of one moment by their order in the
file) that no undo record has retracted; undoing the latest brings back the one before. A record id read
twice counts once. Who said what is kept per person too, so that two reviewers who disagree are seen
(:meth:`Ledger.conflicts`).

The records loaded are columns (:class:`~recall_gui.core.review.record_table.RecordTable`) and the
standing verdicts are found on them at once; records added later (a verdict just marked, another
process's) are objects, and settle their content's verdict one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from recall_gui.core.review.record_table import RecordTable, instant
from recall_gui.core.review.records import CODES, JUDGED, JUDGED_CODES, UNDO, ReviewRecord
from recall_gui.core.review.snapshot import digests_of

Rows = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Conflict:
    """One content on which reviewers' latest verdicts differ: each person's latest record, oldest first."""

    content_sha256: str
    entry_id: str
    verdicts: tuple[ReviewRecord, ...]


class Standing(Mapping[str, ReviewRecord]):
    """The standing verdict record per content sha256 (made an object when asked for)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def __getitem__(self, sha: str) -> ReviewRecord:
        return self._ledger.row(self._ledger.standing_row[sha])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ledger.standing_row)

    def __len__(self) -> int:
        return len(self._ledger.standing_row)

    def __contains__(self, sha: object) -> bool:
        return sha in self._ledger.standing_row


class Ledger:
    """The standing verdicts of a set of records, kept up to date as records are added."""

    def __init__(self, table: RecordTable | None = None) -> None:
        self.table = table if table is not None else RecordTable.of([])
        self._extra: list[ReviewRecord] = []
        self._extra_instants: list[int] = []
        first = self._first = _first_of_each_id(self.table)
        undoing = np.flatnonzero(self.table.undo & first)
        self._retracted: set[str] = set(self.table.texts("undoes", undoing)) if len(undoing) else set()
        live = ~self.table.undo & first
        if self._retracted:
            live &= ~_among(self.table, sorted(self._retracted))
        #: The standing verdict's row per content sha256.
        self.standing_row: dict[str, int] = _latest_per_content(self.table, np.flatnonzero(live))
        self.standing = Standing(self)
        #: The rows of the records added since loading, by record id.
        self._extra_rows: dict[str, int] = {}

    @property
    def records(self) -> int:
        """Verdict and undo records taken."""
        return len(self.table) + len(self._extra)

    def row(self, row: int) -> ReviewRecord:
        loaded = len(self.table)
        return self.table.record(row) if row < loaded else self._extra[row - loaded]

    def _instant(self, row: int) -> int:
        loaded = len(self.table)
        return int(self.table.instants[row]) if row < loaded else self._extra_instants[row - loaded]

    # --- adding ------------------------------------------------------------------------------------------

    def _row_of_record(self, record_id: str) -> int | None:
        """The row of the first record with this id (a search of the loaded column, no index kept)."""
        import pyarrow.compute as pc

        row = self._extra_rows.get(record_id)
        if row is not None or not len(self.table):
            return row
        found = pc.index(self.table.table.column("record"), record_id).as_py()
        return None if found < 0 else int(found)

    def has(self, record_id: str) -> bool:
        return self._row_of_record(record_id) is not None

    def add(self, record: ReviewRecord) -> str | None:
        """Take a record just written or read; returns the content whose verdict it may have changed
        (``None`` for a record taken before)."""
        if self.has(record.record):
            return None
        row = self.records
        self._extra_rows[record.record] = row
        self._extra.append(record)
        self._extra_instants.append(instant(record.moment))
        sha = record.content_sha256
        if record.kind == UNDO:
            assert record.undoes is not None
            self._retracted.add(record.undoes)
            undone = self.verdict_record(record.undoes)
            sha = undone.content_sha256 if undone is not None else sha
        self._settle(sha)
        return sha

    def _settle(self, sha: str) -> None:
        rows = self._rows_of(sha)
        live = [row for row in rows if self.row(row).kind != UNDO and not self.is_retracted(self.row(row))]
        if live:
            self.standing_row[sha] = max(live, key=lambda row: (self._instant(row), row))
        else:
            self.standing_row.pop(sha, None)

    def _rows_of(self, sha: str) -> list[int]:
        wanted = np.frombuffer(bytes.fromhex(sha), np.uint8)
        same = np.all(self.table.digests == wanted, axis=1) & self._first if len(self.table) else []
        loaded = np.flatnonzero(same).tolist()
        offset = len(self.table)
        return loaded + [offset + n for n, record in enumerate(self._extra) if record.content_sha256 == sha]

    def verdict_record(self, record_id: str) -> ReviewRecord | None:
        """The record with this id, when it is a verdict (retracted or not)."""
        row = self._row_of_record(record_id)
        if row is None:
            return None
        record = self.row(row)
        return record if record.kind != UNDO else None

    def is_retracted(self, record: ReviewRecord) -> bool:
        return record.record in self._retracted

    # --- reading -----------------------------------------------------------------------------------------

    def verdict(self, sha: str) -> str | None:
        row = self.standing_row.get(sha)
        return None if row is None else self.row(row).verdict

    def standing_rows(self) -> Rows:
        return np.fromiter(self.standing_row.values(), np.intp, len(self.standing_row))

    def standing_digests_and_codes(self) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int8]]:
        """The digest and verdict code of each standing verdict, in the order of ``standing_row``."""
        rows = self.standing_rows()
        loaded = rows < len(self.table)
        digests = np.empty((len(rows), self.table.digests.shape[1]), np.uint8)
        codes = np.empty(len(rows), np.int8)
        digests[loaded] = self.table.digests[rows[loaded]]
        codes[loaded] = self.table.codes[rows[loaded]]
        extra = np.flatnonzero(~loaded)
        if len(extra):
            records = [self.row(int(rows[n])) for n in extra]
            digests[extra] = digests_of([record.content_sha256 for record in records])
            codes[extra] = [CODES[record.verdict or ""] for record in records]
        return digests, codes

    def standing_records(self) -> list[ReviewRecord]:
        """Every standing verdict, oldest first (made objects in one conversion)."""
        rows = self.standing_rows()
        rows = rows[np.argsort([self._instant(row) for row in rows.tolist()], kind="stable")]
        loaded = rows[rows < len(self.table)]
        made = dict(zip(loaded.tolist(), self.table.records(loaded), strict=True))
        return [made[row] if row in made else self.row(row) for row in rows.tolist()]

    def history(self, sha: str) -> tuple[ReviewRecord, ...]:
        """Every verdict record on a content, oldest first, retracted ones included."""
        rows = sorted(self._rows_of(sha), key=lambda row: (self._instant(row), row))
        return tuple(record for record in map(self.row, rows) if record.kind != UNDO)

    def judged_by_id(self) -> dict[str, int]:
        """For each entry id, the row of the latest standing verdict other than *skip* on any content it
        held (:meth:`row` makes it a record)."""
        rows = self.standing_rows()
        loaded = rows[rows < len(self.table)]
        judged = loaded[np.isin(self.table.codes[loaded], JUDGED_CODES)]
        judged = judged[np.lexsort((judged, self.table.instants[judged]))]
        found = dict(zip(self.table.texts("id", judged), judged.tolist(), strict=True))
        for row in rows[rows >= len(self.table)].tolist():
            record = self.row(row)
            held = found.get(record.entry_id)
            if record.verdict in JUDGED and (
                held is None or (self._instant(held), held) < (self._instant(row), row)
            ):
                found[record.entry_id] = row
        return found

    def by_person(self, sha: str) -> dict[str, ReviewRecord]:
        """Each reviewer's latest standing verdict on a content."""
        latest: dict[str, tuple[tuple[int, int], ReviewRecord]] = {}
        for row in self._rows_of(sha):
            record = self.row(row)
            if record.kind == UNDO or self.is_retracted(record):
                continue
            place = (self._instant(row), row)
            held = latest.get(record.who)
            if held is None or held[0] < place:
                latest[record.who] = (place, record)
        return {who: record for who, (_place, record) in latest.items()}

    def conflicts(self) -> tuple[Conflict, ...]:
        """Contents whose reviewers' latest verdicts differ, in the order the contents were first marked."""
        marked: dict[str, set[str]] = {}
        every = np.arange(len(self.table))
        shas, reviewers = self.table.texts("content_sha256", every), self.table.texts("who", every)
        loaded = zip(shas, reviewers, self.table.undo.tolist(), strict=True)
        added = ((record.content_sha256, record.who, record.kind == UNDO) for record in self._extra)
        for sha, who, undo in (*loaded, *added):
            if not undo:
                marked.setdefault(sha, set()).add(who)
        found: list[Conflict] = []
        for sha, people in marked.items():
            if len(people) < 2:
                continue
            latest = self.by_person(sha)
            if len({record.verdict for record in latest.values()}) > 1:
                ordered = sorted(latest.values(), key=lambda record: (record.moment, record.who))
                found.append(Conflict(sha, ordered[-1].entry_id, tuple(ordered)))
        return tuple(found)


def _among(table: RecordTable, record_ids: list[str]) -> npt.NDArray[np.bool_]:
    """Which rows have one of these record ids."""
    import pyarrow as pa
    import pyarrow.compute as pc

    found = pc.is_in(table.table.column("record"), value_set=pa.array(record_ids, pa.string()))
    return np.asarray(found.to_numpy(zero_copy_only=False), bool)


def _first_of_each_id(table: RecordTable) -> npt.NDArray[np.bool_]:
    """Which rows are the first with their record id (a record read twice counts once)."""
    import pyarrow.compute as pc

    if not len(table):
        return np.zeros(0, bool)
    encoded = pc.dictionary_encode(table.table.column("record").combine_chunks())
    if len(encoded.dictionary) == len(table):
        return np.ones(len(table), bool)
    _ids, first = np.unique(np.asarray(encoded.indices.to_numpy(zero_copy_only=False)), return_index=True)
    mask = np.zeros(len(table), bool)
    mask[first] = True
    return mask


def _latest_per_content(table: RecordTable, rows: Rows) -> dict[str, int]:
    """The latest of ``rows`` (by time, then row) for each content."""
    if not len(rows):
        return {}
    digests = table.digests[rows]
    words = digests.view(">u8")  # four big-endian words: the digest's order
    order = np.lexsort((rows, table.instants[rows], words[:, 0]))
    ordered_words = words[order]
    if np.any(
        (ordered_words[1:, 0] == ordered_words[:-1, 0])
        & np.any(ordered_words[1:] != ordered_words[:-1], axis=1)
    ):
        # Two contents whose digests start alike (never seen): order by the whole digest.
        order = np.lexsort((rows, table.instants[rows], words[:, 3], words[:, 2], words[:, 1], words[:, 0]))
        ordered_words = words[order]
    ordered = rows[order]
    last = np.ones(len(ordered), bool)
    last[:-1] = np.any(ordered_words[1:] != ordered_words[:-1], axis=1)
    chosen = ordered[last]
    return dict(zip(table.texts("content_sha256", chosen), chosen.tolist(), strict=True))
