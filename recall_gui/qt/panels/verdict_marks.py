"""Verdicts beside results: the mark of a result whose entry was reviewed (wrong and outdated are flagged
wherever they appear), and the lookup that finds them in the database's review off the GUI thread.

Only shown: what an agent is given never changes with a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtGui import QColor

from recall_gui.core.base import RecallError, one_line
from recall_gui.core.review import FLAGGED
from recall_gui.core.storage import content_sha256, entry_label
from recall_gui.qt.models.roles import VerdictMark
from recall_gui.qt.operations import Lane
from recall_gui.qt.review_book import ReviewBook

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import ReviewRecord

#: The flag's colour per verdict (the status notes' accents); the others are not flagged.
FLAG_COLOURS = {"wrong": QColor("#d2453a"), "outdated": QColor("#d08a10")}
#: The mark beside a result, per verdict (a word in the tooltip for those who cannot tell them apart).
SYMBOLS = {"wrong": "✗", "outdated": "⚑", "correct": "✓"}
NOT_FILTERED = "Agents are still given it: a verdict is shown, it never filters what they get."

Show = Callable[[list["ReviewRecord | None"]], None]


def mark_symbol(record: ReviewRecord | None) -> str:
    return SYMBOLS.get(record.verdict or "", "") if record is not None else ""


def mark_colour(record: ReviewRecord | None) -> QColor | None:
    return FLAG_COLOURS.get(record.verdict or "") if record is not None else None


def mark_tip(record: ReviewRecord) -> str:
    """``Marked wrong by alice on 2025-06-01 10:00 UTC: “its figure is old”.`` and, when flagged, that
    agents still get it."""
    when = record.when[:16].replace("T", " ")
    note = f": “{one_line(record.note, 200)}”" if record.note else ""
    tip = f"Marked {record.verdict} by {record.who} on {when} UTC{note}."
    return f"{tip} {NOT_FILTERED}" if record.verdict in FLAGGED else tip


def marks_of(records: Sequence[ReviewRecord | None]) -> list[VerdictMark | None]:
    """Each record as a results table marks it (``None``: no verdict)."""
    return [
        None if record is None else (mark_symbol(record), mark_colour(record), mark_tip(record))
        for record in records
    ]


def flagged_count(records: Sequence[ReviewRecord | None]) -> int:
    return sum(1 for record in records if record is not None and record.verdict in FLAGGED)


def given_text(given: Sequence[tuple[str, str]], records: Sequence[ReviewRecord | None]) -> str:
    """What an answer's verdicts say (``given``: each result's id and content, in order): ``2 of the 5
    results the agent got have a verdict in the review, 1 marked wrong or outdated: …``; "" for none."""
    marked = [
        (rank, entry_label(entry_id, content_sha256(content)), record)
        for rank, ((entry_id, content), record) in enumerate(zip(given, records, strict=False), start=1)
        if record is not None
    ]
    if not marked:
        return ""
    flagged = flagged_count([record for _rank, _label, record in marked])
    has = "has" if len(marked) == 1 else "have"
    head = f"{len(marked)} of the {len(given)} results the agent got {has} a verdict in the review"
    if flagged:
        head += f", {flagged} marked wrong or outdated"
    listed = "; ".join(f"{rank}. {label} {record.verdict} ({record.who})" for rank, label, record in marked)
    return f"{head}: {listed}. The agent got them all the same: a verdict never changes its answer."


class VerdictLookup:
    """The verdicts on rows a page shows (by their texts), read from their database's review when its file
    exists, handed to ``show``; looked up again when that database's verdicts change."""

    def __init__(self, book: ReviewBook, lane: Lane, show: Show) -> None:
        self.book = book
        self.lane = lane
        self._show = show
        self._entry: DatabaseEntry | None = None
        self._texts: list[str] = []
        book.changed.connect(self._on_changed)

    def follow(self, entry: DatabaseEntry | None, texts: Sequence[str]) -> None:
        """Show the verdicts on ``texts`` of ``entry``'s table (none at once; found ones when read)."""
        self._entry, self._texts = entry, list(texts)
        self._show([None] * len(self._texts))
        if entry is not None and self._texts:
            self.lane.run(lambda: self._look_up(entry, list(self._texts)), busy="", success=self._show)
        else:
            self.lane.supersede()

    async def _look_up(self, entry: DatabaseEntry, texts: list[str]) -> list[ReviewRecord | None]:
        try:
            review = await self.book.review_if_kept(entry)
            if review is None:
                return [None] * len(texts)
            return await self.book.call(review.state.verdicts_of_texts, texts)
        except RecallError:  # the Review page says what is wrong with the review file
            return [None] * len(texts)

    def _on_changed(self, db_name: str) -> None:
        if self._entry is not None and self._entry.name == db_name:
            self.follow(self._entry, self._texts)
