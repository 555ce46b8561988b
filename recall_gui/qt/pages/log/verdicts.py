"""The Agent log page and the review of entries: how many of this week's agent calls were given an entry
marked wrong or outdated, which ones and when (the core's served report, per database with a review file),
each such call flagged in the table, and the verdict of each result of the selected call. Only shown: a
verdict never changes what an agent is given."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from recall_gui import core
from recall_gui.core.agent_log import CallRecord
from recall_gui.core.base import RecallError, one_line
from recall_gui.core.storage import entry_label
from recall_gui.qt.models.call_results_model import CallResultsModel
from recall_gui.qt.models.calls_model import CallsModel, local_time
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.panels.verdict_marks import marks_of
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.review import GivenEntry, ReviewRecord, ServedReport

#: The flagged calls of the week the note names, per database (the table flags every one).
NAMED_CALLS = 5
STILL_GIVEN = "Agents are still given those entries: a verdict is shown, it never filters what they get."


@dataclass(frozen=True)
class DatabaseVerdicts:
    """One database's calls joined to its review: this week's, and every call the page holds."""

    name: str
    week: ServedReport
    held: ServedReport


def given_text(entries: Sequence[GivenEntry]) -> str:
    """``content·3f2a9c1e (wrong), e7·01ab23cd (outdated)``: the entries of a call that have a verdict."""
    return ", ".join(
        f"{entry_label(entry.entry_id, entry.content_sha256 or '')} ({entry.verdict.verdict})"
        for entry in entries
        if entry.verdict is not None
    )


def report_text(found: Sequence[DatabaseVerdicts]) -> str:
    """Per database: ``notes — this week: 14 of 230 calls were given 3 entries marked wrong``, then the
    newest of those calls: when, what they asked, what they were given."""
    lines = []
    for verdicts in found:
        week = verdicts.week
        lines.append(f"{verdicts.name} — {week.text()}")
        for call in list(reversed(week.flagged_calls))[:NAMED_CALLS]:
            query = one_line(call.record.query or "", 60)
            lines.append(f"   {local_time(call.record)} · “{query}” · given {given_text(call.entries)}")
        more = len(week.flagged_calls) - NAMED_CALLS
        if more > 0:
            lines.append(f"   … and {more:,} more (flagged ⚑ in the table)")
    if any(verdicts.week.flagged_calls for verdicts in found):
        lines.append(STILL_GIVEN)
    return "\n".join(lines)


class CallVerdicts(QObject):
    """Joins the calls the page holds to the verdicts of their databases (``logVerdicts``)."""

    #: The calls were joined to the verdicts (the note and the flags are shown).
    joined = Signal()

    def __init__(
        self,
        services: WindowServices,
        *,
        calls: CallsModel,
        results: CallResultsModel,
        selected: Callable[[], CallRecord | None],
        note: StatusNote,
        shown: Callable[[], bool],
    ) -> None:
        super().__init__(note)
        self.services = services
        self.calls, self.results, self.selected, self.note = calls, results, selected, note
        lane = services.operations.lane
        self.joining, self.marking = lane("log-verdicts"), lane("log-result-verdicts")
        self.found: tuple[DatabaseVerdicts, ...] = ()
        #: Whether the page is shown: verdicts given meanwhile are joined when it is shown again.
        self._shown = shown
        self.stale = False
        services.reviews.changed.connect(self._on_changed)

    def _on_changed(self, _name: str) -> None:
        if self._shown():
            self.request()
        else:
            self.stale = True

    def request(self) -> None:
        """Join the calls held now to the verdicts, off the GUI thread."""
        self.stale = False
        records = self.calls.records
        self.joining.run(lambda: self._join(records), busy="", success=self._show)

    async def _join(self, records: tuple[CallRecord, ...]) -> tuple[DatabaseVerdicts, ...]:
        book, found = self.services.reviews, []
        for name in sorted({record.db_name for record in records if record.db_name}):
            entry = self.services.registry.get(name)
            if entry is None:
                continue
            try:
                review = await book.review_if_kept(entry)
            except RecallError:  # the Review page says what is wrong with its file
                continue
            if review is None:
                continue
            week = await book.call(
                core.review.served_report, records, name, review.state, core.review.this_week()
            )
            held = await book.call(
                core.review.served_report, records, name, review.state, core.review.Period("in the log")
            )
            found.append(DatabaseVerdicts(name, week, held))
        return tuple(found)

    def _show(self, found: tuple[DatabaseVerdicts, ...]) -> None:
        self.found = found
        self.calls.set_flags(
            [
                (call.record, given_text(call.entries))
                for verdicts in found
                for call in verdicts.held.flagged_calls
            ]
        )
        text = report_text(found)
        if text:
            self.note.show_note(text, "bad" if any(v.week.flagged_calls for v in found) else "good")
        self.note.setVisible(bool(text))
        self.show_selected()
        self.joined.emit()

    def show_selected(self) -> None:
        """Mark each result of the selected call with its entry's verdict."""
        record = self.selected()
        entry = self.services.registry.get(record.db_name) if record and record.db_name else None
        if record is None or entry is None or not record.result_ids:
            self.results.set_verdicts([])
            return
        book = self.services.reviews

        async def look_up() -> list[ReviewRecord | None]:
            review = await book.review_if_kept(entry)
            if review is None:
                return []
            state = review.state
            by_id = await book.call(core.review.id_digests, state, record.result_ids)
            given = await book.call(core.review.given_entries, record, state, by_id)
            return [entry.verdict for entry in given]

        def shown(verdicts: list[ReviewRecord | None]) -> None:
            if self.selected() is record and not self.results.replayed:
                self.results.set_verdicts(marks_of(verdicts))

        self.marking.run(look_up, busy="", success=shown)
