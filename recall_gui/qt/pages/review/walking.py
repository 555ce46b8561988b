"""Walking a review: its queue in the order chosen, the entry shown (the next one read ahead, so it is on
screen the moment a verdict is given), verdicts and Undo written on the review book's thread, the progress,
and the place the page remembers for the next start.

Every core call runs in a lane (``qt/operations.py``); what is blocking runs on the review book's thread,
so the GUI thread only shows. A verdict moves on at once and is written behind; one that cannot be written
is said in the banner and its entry shown again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.core.review import ORDER_LABELS, Order
from recall_gui.core.storage import entry_label
from recall_gui.qt.pages.review.loading import LoadedEntry, load_entry
from recall_gui.qt.pages.review.ordering import AgentsGiven, agents_given, make_queue, progress_text
from recall_gui.qt.pages.review.showing import EntryShowing
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.panels.verdict_bar import VerdictBar
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import Review, ReviewQueue

END = "The end of this order: every entry in it has been walked. K goes back; another order walks on."


@dataclass(frozen=True)
class Opened:
    """A review opened in an order, and where to start."""

    entry: DatabaseEntry
    review: Review
    queue: ReviewQueue
    index: int
    note: str


def asked_entry(
    review: Review, queue: ReviewQueue, at_row: int | None, at_sha: str | None
) -> tuple[int | None, int | None]:
    """The entry asked for: the row ``at_row`` when it still holds the text ``at_sha``, else the first row
    holding that text; its place in the queue (``None``: not in it) and its row (``None``: not found)."""
    snapshot, position = review.snapshot, None
    if at_row is not None:
        found = snapshot.positions_of_row_ids([at_row])
        if len(found) and (at_sha is None or snapshot.sha_at(int(found[0])) == at_sha):
            position = int(found[0])
    if position is None and at_sha:
        found = snapshot.positions_of_sha(at_sha)
        position = int(found[0]) if len(found) else None
    return (queue.index_of(position) if position is not None else None), position


def first_index(review: Review, queue: ReviewQueue, skip_reviewed: bool) -> int:
    """The queue's first entry (without a verdict, with ``skip_reviewed``; ``len(queue)``: none)."""
    first = queue.next_index(-1, review.state, not_reviewed_only=skip_reviewed)
    return len(queue) if first is None else first


class Walker(QObject):
    """The review walked on the page, and the entry shown."""

    #: An entry (or the end of the order) is shown.
    entryShown = Signal()
    #: The progress line was computed again.
    progressShown = Signal()
    #: A verdict or an Undo was written (or failed: the banner says why).
    written = Signal()
    #: A review was opened (or could not be: the note says why).
    opened = Signal()
    #: The order walked now (its value): the one chosen, or table order for an entry asked for that is
    #: not in it.
    orderInUse = Signal(str)

    def __init__(
        self,
        services: WindowServices,
        *,
        showing: EntryShowing,
        bar: VerdictBar,
        labels: tuple[QLabel, QLabel],
        note: StatusNote,
        remember: Callable[[str, str], None],
    ) -> None:
        super().__init__(bar)
        self.services = services
        self.showing, self.bar, self.note = showing, bar, note
        self.progress_label, self.counter_label = labels
        self._remember = remember
        lane = services.operations.lane
        self.opening = lane("review-open", show_busy=self._show_busy)
        self.reading, self.reading_ahead = lane("review-entry"), lane("review-ahead")
        self.counting, self.asking_log = lane("review-progress"), lane()
        #: Verdicts and Undo, side by side: the book's thread writes them in the order given.
        self.writing = lane()
        self.entry: DatabaseEntry | None = None
        self.review: Review | None = None
        self.queue: ReviewQueue | None = None
        #: The queue's index shown (``len(queue)``: the end).
        self.index: int | None = None
        self.shown: LoadedEntry | None = None
        self.ahead: dict[int, LoadedEntry] = {}
        self.skip_reviewed = True
        self.agents: AgentsGiven | None = None
        #: Verdicts and undos not yet written.
        self._writes = 0

    # --- opening -----------------------------------------------------------------------------------------

    def open(
        self,
        entry: DatabaseEntry,
        order: Order,
        where: str,
        *,
        at_row: int | None = None,
        at_sha: str | None = None,
        asked: bool = False,
    ) -> None:
        """Open ``entry``'s review in ``order`` at the entry with the row ``at_row`` or the text ``at_sha``
        (where the page was, else the order's first entry). An entry the user ``asked`` for that is not in
        the order is shown in table order (:attr:`orderInUse`)."""
        self.bar.set_enabled(False, can_undo=False)
        services, skip = self.services, self.skip_reviewed

        async def opening() -> Opened:
            review = await services.reviews.review(entry)
            if not self._writes and await review.follow_table(await services.session()):
                self.ahead.clear()
            agents = self.agents if self.review is review else None
            queue = await make_queue(services, review, order, where, agents)
            index, position = await services.reviews.call(asked_entry, review, queue, at_row, at_sha)
            if index is None and position is not None and asked:  # not in this order: the table from it
                queue = await services.reviews.call(core.review.table_order, review.state)
                note = f"That entry is not in the order “{ORDER_LABELS[order]}”: walking in table order."
                return Opened(entry, review, queue, position, note)
            if index is None:
                index = await services.reviews.call(first_index, review, queue, skip)
            return Opened(entry, review, queue, index, queue.note)

        self.opening.run(
            opening,
            busy=f"Opening the review of {entry.name}…",
            success=self._on_opened,
            failure=self._failed,
        )

    def _failed(self, error: RecallError) -> None:
        """The review could not be opened in that order: the note says why; the walk shown goes on (its
        order is the counter's)."""
        self.note.show_note(error.full_text(), "bad")
        self.note.show()
        if self.review is not None and self.shown is not None:
            self.bar.set_enabled(True, can_undo=self.review.can_undo)
        self.opened.emit()

    def _show_busy(self, text: str | None) -> None:
        if text is not None:
            self.note.show_note(text, "neutral")
            self.note.show()

    def _on_opened(self, found: Opened) -> None:
        review = found.review
        if review is not self.review:
            self.agents, self.ahead = None, {}
        self.entry, self.review, self.queue = found.entry, review, found.queue
        self.orderInUse.emit(found.queue.order.value)
        notes = [text for text in (found.note, review.damaged_text()) if text]
        if notes:
            self.note.show_note("\n".join(notes), "warning" if review.damaged_text() else "neutral")
        self.note.setVisible(bool(notes))
        self.show_progress()
        self.show_index(found.index)
        if self.agents is None:
            self.asking_log.run(lambda: agents_given(self.services, review), busy="", success=self._on_agents)
        self.opened.emit()

    def _on_agents(self, agents: AgentsGiven) -> None:
        self.agents = agents
        self.show_progress()

    # --- showing -----------------------------------------------------------------------------------------

    def show_index(self, index: int) -> None:
        """Show the queue's entry ``index`` (``len(queue)``: the end of the order)."""
        review, queue = self.review, self.queue
        if review is None or queue is None:
            return
        self.index = index
        if index >= len(queue):
            self.shown = None
            self.reading.supersede()
            self.showing.clear(END)
            self.counter_label.setText(f"end · {len(queue):,} in {ORDER_LABELS[queue.order]}")
            self.bar.set_enabled(False, can_undo=review.can_undo)
            self.bar.previous_button.setEnabled(len(queue) > 0)
            self.entryShown.emit()
            return
        position = queue.position(index)
        ready = self.ahead.pop(position, None)
        if ready is not None:
            self.reading.supersede()
            self._display(ready)
        else:  # nothing is judged until it is on screen
            self.shown = None
            self.bar.set_enabled(False, can_undo=review.can_undo)
            self.showing.clear("Reading the entry…")
            reading = self.reading
            reading.run(lambda: load_entry(self.services, review, position), busy="", success=self._display)

    def _display(self, loaded: LoadedEntry) -> None:
        entry, review, queue, index = self.entry, self.review, self.queue, self.index
        assert entry is not None and review is not None and queue is not None and index is not None
        self.shown = loaded
        self.showing.show(entry, review, loaded)
        self.counter_label.setText(f"entry {queue.counter(index)} · {ORDER_LABELS[queue.order]}")
        self.bar.set_enabled(True, can_undo=review.can_undo)
        self._remember(review.place.db_name, loaded.sha)
        self._read_ahead()
        self.entryShown.emit()

    def _read_ahead(self) -> None:
        review, queue, index = self.review, self.queue, self.index
        if review is None or queue is None or index is None:
            return
        following = queue.next_index(index, review.state, not_reviewed_only=self.skip_reviewed)
        if following is None or queue.position(following) in self.ahead:
            return
        position = queue.position(following)

        def keep(loaded: LoadedEntry) -> None:
            self.ahead = {loaded.position: loaded}

        self.reading_ahead.run(lambda: load_entry(self.services, review, position), busy="", success=keep)

    def show_progress(self) -> None:
        review, agents = self.review, self.agents
        if review is None:
            return

        def shown(text: str) -> None:
            self.progress_label.setText(text)
            self.progressShown.emit()

        self.counting.run(
            lambda: self.services.reviews.call(progress_text, review, agents), busy="", success=shown
        )

    # --- moving and marking ------------------------------------------------------------------------------

    def step(self, forward: bool) -> None:
        """The next entry (without a verdict, when those are skipped), or the previous one."""
        review, queue, index = self.review, self.queue, self.index
        if review is None or queue is None or index is None:
            return
        if forward:
            found = queue.next_index(index, review.state, not_reviewed_only=self.skip_reviewed)
            self.show_index(len(queue) if found is None else found)
        else:
            found = queue.previous_index(index, review.state)
            if found is not None:
                self.show_index(found)

    def give(self, verdict: str, note: str) -> None:
        """Mark the entry shown and show the next one at once; the verdict is written behind."""
        review, shown, index = self.review, self.shown, self.index
        if review is None or shown is None or index is None:
            return
        self._writes += 1
        self.writing.start(self._write(review, shown, verdict, note, index))
        self.step(forward=True)

    async def _write(self, review: Review, shown: LoadedEntry, verdict: str, note: str, index: int) -> None:
        try:
            await self.services.reviews.mark(review, shown.position, verdict, note)
        except RecallError as error:
            self.services.show_error(error, "general")
            if self.review is review and self.queue is not None and index < len(self.queue):
                self.show_index(index)  # it has no verdict: show it again
            self.written.emit()
            return
        finally:
            self._writes -= 1
        self._after_writing(review, shown.sha)

    def undo(self) -> None:
        review = self.review
        if review is not None:
            self._writes += 1
            self.writing.start(self._undo(review))

    async def _undo(self, review: Review) -> None:
        try:
            record = await self.services.reviews.undo(review)
        finally:
            self._writes -= 1
        if record is None:
            self.services.set_activity("Nothing to undo: no verdict given here stands")
        elif self.review is review and self.queue is not None:
            label = entry_label(record.entry_id, record.content_sha256)
            self.services.set_activity(f"Took back “{record.verdict}” on {label}")
            positions = review.snapshot.positions_of_sha(record.content_sha256).tolist()
            places = [self.queue.index_of(position) for position in positions]
            index = next((place for place in places if place is not None), None)
            if index is not None:
                self.show_index(index)
        self._after_writing(review, record.content_sha256 if record is not None else "")

    def _after_writing(self, review: Review, sha: str) -> None:
        if self.review is not review:
            return
        self.show_progress()
        if self.shown is not None and self.shown.sha == sha:
            self.showing.show_standing(review, self.shown)
        self.bar.undo_button.setEnabled(review.can_undo)
        self.written.emit()
