"""What a review file's records say now: the standing verdict on each content.

A content's verdict is its latest verdict record (by ``when``; records of one moment by their order in the
file) that no undo record has retracted; undoing the latest brings back the one before. Who said what is
kept per person too, so that two reviewers who disagree are seen (:meth:`Ledger.conflicts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from recall_gui.core.review.records import JUDGED, UNDO, ReviewRecord

#: A record's place in time: its moment, then its order of arrival.
Place = tuple[datetime, int]


@dataclass(frozen=True)
class Conflict:
    """One content on which reviewers' latest verdicts differ: each person's latest record, oldest first."""

    content_sha256: str
    entry_id: str
    verdicts: tuple[ReviewRecord, ...]


class Ledger:
    """The standing verdicts of a set of records, kept up to date as records are added."""

    def __init__(self, records: Iterable[ReviewRecord] = ()) -> None:
        self._sequence = 0
        #: Verdict records per content, as (place, record), in arrival order.
        self._by_content: dict[str, list[tuple[Place, ReviewRecord]]] = {}
        self._retracted: set[str] = set()
        #: Record ids taken: a record read twice (a file merged with a copy of itself) counts once.
        self._seen: set[str] = set()
        self._verdicts: dict[str, ReviewRecord] = {}
        #: The standing verdict per content (none when every verdict on it was undone).
        self.standing: dict[str, ReviewRecord] = {}
        touched: set[str] = set()
        for record in records:
            sha = self._take(record)
            if sha is not None:
                touched.add(sha)
        for sha in touched:
            self._settle(sha)

    @property
    def records(self) -> int:
        """Verdict and undo records taken (each record id once)."""
        return self._sequence

    def has(self, record_id: str) -> bool:
        return record_id in self._seen

    def _take(self, record: ReviewRecord) -> str | None:
        """Take a record; returns the content whose verdict it may change (``None``: taken before)."""
        if record.record in self._seen:
            return None
        self._seen.add(record.record)
        place = (record.moment, self._sequence)
        self._sequence += 1
        if record.kind == UNDO:
            assert record.undoes is not None
            self._retracted.add(record.undoes)
            undone = self._verdicts.get(record.undoes)
            return undone.content_sha256 if undone is not None else record.content_sha256
        self._verdicts[record.record] = record
        self._by_content.setdefault(record.content_sha256, []).append((place, record))
        return record.content_sha256

    def _settle(self, sha: str) -> None:
        kept = [item for item in self._by_content.get(sha, ()) if not self.is_retracted(item[1])]
        if kept:
            self.standing[sha] = max(kept, key=lambda item: item[0])[1]
        else:
            self.standing.pop(sha, None)

    def add(self, record: ReviewRecord) -> str | None:
        """Take a record just written or read; returns the content whose verdict it may have changed
        (``None`` for a record taken before)."""
        sha = self._take(record)
        if sha is not None:
            self._settle(sha)
        return sha

    def verdict_record(self, record_id: str) -> ReviewRecord | None:
        """The verdict record with this id (retracted or not)."""
        return self._verdicts.get(record_id)

    def verdict(self, sha: str) -> str | None:
        found = self.standing.get(sha)
        return found.verdict if found is not None else None

    def history(self, sha: str) -> tuple[ReviewRecord, ...]:
        """Every verdict record on a content, oldest first, retracted ones included."""
        return tuple(
            record for _place, record in sorted(self._by_content.get(sha, ()), key=lambda item: item[0])
        )

    def is_retracted(self, record: ReviewRecord) -> bool:
        return record.record in self._retracted

    def judged_by_id(self) -> dict[str, ReviewRecord]:
        """For each entry id, the latest standing verdict other than *skip* on any content it held."""
        found: dict[str, tuple[Place, ReviewRecord]] = {}
        for sha, record in self.standing.items():
            if record.verdict not in JUDGED:
                continue
            place = self._place_of(sha, record)
            held = found.get(record.entry_id)
            if held is None or held[0] < place:
                found[record.entry_id] = (place, record)
        return {entry_id: record for entry_id, (_place, record) in found.items()}

    def _place_of(self, sha: str, record: ReviewRecord) -> Place:
        return next(place for place, held in self._by_content[sha] if held is record)

    def by_person(self, sha: str) -> dict[str, ReviewRecord]:
        """Each reviewer's latest standing verdict on a content."""
        latest: dict[str, tuple[Place, ReviewRecord]] = {}
        for place, record in self._by_content.get(sha, ()):
            if self.is_retracted(record):
                continue
            held = latest.get(record.who)
            if held is None or held[0] < place:
                latest[record.who] = (place, record)
        return {who: record for who, (_place, record) in latest.items()}

    def conflicts(self) -> tuple[Conflict, ...]:
        """Contents whose reviewers' latest verdicts differ, in the order the contents were first marked."""
        found: list[Conflict] = []
        for sha, marked in self._by_content.items():
            if len({record.who for _place, record in marked}) < 2:
                continue
            latest = self.by_person(sha)
            if len({record.verdict for record in latest.values()}) > 1:
                ordered = sorted(latest.values(), key=lambda record: (record.moment, record.who))
                found.append(Conflict(sha, ordered[-1].entry_id, tuple(ordered)))
        return tuple(found)

    def __iter__(self) -> Iterator[str]:
        return iter(self.standing)
