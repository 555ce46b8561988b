"""A review under way: one database's table, its review file, who marks, and what they marked — the one
object the Review page and ``recall-gui review`` hold. A verdict is written to the file first, then shown;
Undo writes an undo record (the file is only ever appended to). Nothing is written to the knowledge base.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_gui.core.base.captions import plural
from recall_gui.core.base.credentials import masked
from recall_gui.core.base.errors import ConnectError, InvalidInputError
from recall_gui.core.base.own_thread import on_own_thread
from recall_gui.core.registry.registry_types import DatabaseEntry
from recall_gui.core.review.ledger import Ledger
from recall_gui.core.review.records import (
    UNDO,
    VERDICT,
    VERDICTS,
    Kind,
    ReviewRecord,
    new_record_id,
    now_utc,
)
from recall_gui.core.review.review_file import (
    MAX_NOTE_CHARS,
    DamagedLine,
    FileContents,
    ReviewFile,
    default_review_path,
    reviewer,
)
from recall_gui.core.review.review_state import ChangedEntry, ReviewState
from recall_gui.core.review.snapshot import TableSnapshot, read_snapshot
from recall_gui.core.session.session import Session
from recall_gui.core.storage.content_identity import content_sha256
from recall_gui.core.storage.lance_calls import read_query
from recall_gui.core.storage.open_table import OpenTable
from recall_gui.core.storage.target import TableTarget
from recall_gui.core.tables.browse import fetch_row


@dataclass(frozen=True)
class ReviewPlace:
    """What a record says of where its entry lives: the database's name, its URI (credentials masked) and
    its table."""

    db_name: str
    uri: str
    table: str

    @staticmethod
    def of(entry: DatabaseEntry) -> ReviewPlace:
        return ReviewPlace(entry.name, masked(entry.uri), entry.table_name)


@dataclass(frozen=True)
class AgentShare:
    """Of the entries agents were given in a period, how many have a verdict (see :mod:`.agent_join`)."""

    served: int
    reviewed: int
    #: "this month", "this week", "since 2025-06-01".
    period: str
    calls: int

    @property
    def share(self) -> float | None:
        return self.reviewed / self.served if self.served else None


@dataclass(frozen=True)
class Progress:
    """How far a review has come, in numbers and in one line."""

    rows: int
    reviewed: int
    counts: dict[str, int]
    not_reviewed: int
    agents: AgentShare | None = None

    def text(self) -> str:
        """``reviewed 412 of 2,000 · 18 wrong · 7 outdated · covers 63% of what agents were given this
        month``."""
        parts = [f"reviewed {self.reviewed:,} of {self.rows:,}"]
        parts += [
            f"{self.counts[verdict]:,} {verdict}" for verdict in ("wrong", "outdated") if self.counts[verdict]
        ]
        if self.agents is not None:
            share = self.agents.share
            if share is None:
                parts.append(f"no agent calls {self.agents.period}")
            else:
                parts.append(f"covers {share:.0%} of what agents were given {self.agents.period}")
        return " · ".join(parts)


class Review:
    """One database's review: its snapshot joined to the review file, marked one verdict at a time."""

    def __init__(
        self,
        place: ReviewPlace,
        target: TableTarget,
        *,
        file: ReviewFile,
        contents: FileContents,
        snapshot: TableSnapshot,
        who: str,
    ) -> None:
        self.place = place
        self.target = target
        self.file = file
        self.who = who
        self.damaged: tuple[DamagedLine, ...] = contents.damaged
        self._read = (contents.end, contents.lines)
        self.state = ReviewState(snapshot, Ledger(contents.table))
        #: The verdicts marked here, newest last, that Undo takes back in turn.
        self._marked: list[ReviewRecord] = []

    @property
    def snapshot(self) -> TableSnapshot:
        return self.state.snapshot

    def progress(self, agents: AgentShare | None = None) -> Progress:
        state = self.state
        return Progress(len(state), state.reviewed, state.counts(), state.not_reviewed, agents)

    # --- marking -----------------------------------------------------------------------------------------

    def mark(self, position: int, verdict: str, note: str = "") -> ReviewRecord:
        """Write a verdict on the row at ``position`` (its content), then show it."""
        if verdict not in VERDICTS:
            raise InvalidInputError(f"{verdict!r} is not a verdict", hint=f"Verdicts: {', '.join(VERDICTS)}.")
        if len(note) > MAX_NOTE_CHARS:
            raise InvalidInputError(
                f"the note is {len(note):,} characters long; a note takes at most {MAX_NOTE_CHARS:,}"
            )
        snapshot = self.snapshot
        record = self._record(VERDICT, snapshot.sha_at(position), snapshot.id_at(position), verdict, note)
        self.file.append(record)
        self.state.apply(record)
        self._marked.append(record)
        return record

    @property
    def can_undo(self) -> bool:
        return any(not self.state.ledger.is_retracted(record) for record in self._marked)

    def undo(self) -> ReviewRecord | None:
        """Take back the newest verdict marked here that still stands (an undo record is written);
        returns the verdict taken back, ``None`` when there is none."""
        while self._marked:
            last = self._marked.pop()
            if self.state.ledger.is_retracted(last):
                continue
            undo = self._record(UNDO, last.content_sha256, last.entry_id, None, "", undoes=last.record)
            self.file.append(undo)
            self.state.apply(undo)
            return last
        return None

    def _record(
        self,
        kind: Kind,
        sha: str,
        entry_id: str,
        verdict: str | None,
        note: str,
        *,
        undoes: str | None = None,
    ) -> ReviewRecord:
        return ReviewRecord(
            record=new_record_id(),
            kind=kind,
            content_sha256=sha,
            entry_id=entry_id,
            verdict=verdict,
            note=note,
            who=self.who,
            when=now_utc(),
            db=self.place.db_name,
            uri=self.place.uri,
            table=self.place.table,
            table_version=self.snapshot.version,
            undoes=undoes,
        )

    # --- following others ----------------------------------------------------------------------------------

    def follow_file(self) -> int:
        """Take the records other processes appended since the last read (all of them again when the file
        was replaced); returns how many rows' verdicts may have changed."""
        end, lines = self._read
        contents = self.file.read(end, lines)
        if contents.from_start and end:
            self.state = ReviewState(self.snapshot, Ledger(contents.table))
            self.damaged = contents.damaged
            self._read = (contents.end, contents.lines)
            return len(self.state)
        changed = sum(len(self.state.apply(record)) for record in contents.records)  # a few new ones
        known = {(line.path, line.number) for line in self.damaged}
        self.damaged += tuple(line for line in contents.damaged if (line.path, line.number) not in known)
        self._read = (contents.end, contents.lines)
        return changed

    async def follow_table(self, session: Session) -> bool:
        """Join the verdicts to the table's latest version when another program wrote a new one; returns
        whether it had."""
        snapshot = await read_snapshot(session, self.target.at(None))
        if snapshot.version == self.snapshot.version:
            return False
        self.state = ReviewState(snapshot, self.state.ledger)
        return True

    # --- texts -------------------------------------------------------------------------------------------

    async def text_at(self, session: Session, position: int) -> str:
        """The text of the row at ``position``, read at the review's version."""
        row_id = int(self.snapshot.row_ids[position])
        hit = await fetch_row(session, self.target.at(self.snapshot.version), row_id)
        return hit.content if hit is not None else ""

    async def old_text(self, session: Session, changed: ChangedEntry) -> str | None:
        """The text a changed entry held when it was reviewed, read from the version it was reviewed in
        (LanceDB's checkout, read-only); ``None`` when the table no longer keeps that version or that text."""
        version = changed.reviewed.table_version
        if version is None:
            return None
        try:
            opened = await session.tables.open(self.target.at(version))
        except ConnectError:
            return None
        try:
            rows = await rows_with_id(opened, changed.entry_id)
        finally:
            session.forget_version(self.target.at(version))
        return next((text for text in rows if content_sha256(text) == changed.reviewed.content_sha256), None)

    def damaged_text(self) -> str | None:
        """What the window says of the file's damaged lines (``None`` when it has none)."""
        count = len(self.damaged)
        if not count:
            return None
        are = "is not a review record" if count == 1 else "are not review records"
        return f"{plural(count, 'line')} of {self.file.path} {are} (kept, not read)"


async def rows_with_id(opened: OpenTable, entry_id: str) -> list[str]:
    """The texts of the rows of ``opened`` (at its version) whose id is ``entry_id``."""
    columns = opened.columns
    what = f'reading version {opened.version} of "{opened.name}"'
    query: Any
    if columns.id is None:  # the row id serves as id
        if not entry_id.isdigit():
            return []
        query = opened.table.take_row_ids([int(entry_id)]).select([columns.content])
    else:
        name = "`" + columns.id.replace("`", "``") + "`"
        kind = str(opened.schema.field(columns.id).type)
        column = name if kind in ("string", "large_string", "utf8") else f"CAST({name} AS string)"
        literal = "'" + entry_id.replace("'", "''") + "'"
        query = opened.table.query().where(f"{column} = {literal}").select([columns.id, columns.content])
    rows = await read_query(query.with_row_id(), what)
    return ["" if text is None else str(text) for text in rows.column(columns.content).to_pylist()]


async def open_review(
    session: Session, entry: DatabaseEntry, *, path: Path | None = None, who: str | None = None
) -> Review:
    """The review of ``entry``'s table at its latest version, from ``path`` (default: the database's review
    file in the app's data folder); ``who`` marks (default: ``$RECALL_GUI_REVIEWER``, else the user)."""
    file = ReviewFile(path if path is not None else default_review_path(entry.name))
    file.check_writable()
    marker = reviewer(who)
    target = entry.target.at(None)
    # The file is decoded on a thread of its own while the table's snapshot is read.
    reading = on_own_thread("recall-review-file", file.read)
    try:
        snapshot = await read_snapshot(session, target)
    except BaseException:
        await asyncio.wait([reading])  # the thread's work ends before the error goes on
        raise
    contents = await reading
    await session.tables.open(target.at(snapshot.version))  # what each entry is read from, opened once
    return Review(ReviewPlace.of(entry), target, file=file, contents=contents, snapshot=snapshot, who=marker)
