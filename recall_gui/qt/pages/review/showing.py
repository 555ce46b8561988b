"""One entry of a review on the page: its name and place, its standing verdict (or what it held when it
was reviewed, side by side with what it holds now), its vector's health and other columns at once; then,
in the background, how much of its text the model reads and its near-copies."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from recall_gui.core.base import RecallError, one_line
from recall_gui.core.storage import entry_label
from recall_gui.qt.pages.review.loading import (
    LoadedEntry,
    NearCopies,
    model_reading,
    near_copies,
    tokens_read,
)
from recall_gui.qt.panels.review_entry import ReviewEntryView
from recall_gui.qt.panels.review_facts import ReviewFacts
from recall_gui.qt.panels.verdict_marks import mark_tip
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.review import Review


def changed_text(loaded: LoadedEntry) -> str:
    """What the page says of an entry whose text changed since a verdict on the text its id held."""
    assert loaded.changed is not None
    was = loaded.changed.reviewed
    when = was.when[:16].replace("T", " ")
    note = f" (“{one_line(was.note, 200)}”)" if was.note else ""
    said = (
        f"Changed since reviewed: {loaded.entry_id} held another text "
        f"({entry_label(loaded.entry_id, was.content_sha256)}), marked {was.verdict}{note} by {was.who} on "
        f"{when} UTC in version {was.table_version}. This text has no verdict yet."
    )
    if loaded.old_text is None:
        said += f" Version {was.table_version} is no longer kept: the old text cannot be shown."
    return said


class EntryShowing(QObject):
    """Shows entries on the page's entry view and facts."""

    #: The shown entry's token count and near-copies are shown.
    extrasShown = Signal()

    def __init__(self, services: WindowServices, view: ReviewEntryView, facts: ReviewFacts) -> None:
        super().__init__(view)
        self.services, self.view, self.facts = services, view, facts
        #: Counting the shown entry's tokens and looking for its near-copies (a newer entry cancels it).
        self.extras = services.operations.lane("review-extras")

    def clear(self, text: str) -> None:
        self.extras.supersede()
        self.view.clear(text)
        self.facts.clear()

    def show(self, entry: DatabaseEntry, review: Review, loaded: LoadedEntry) -> None:
        snapshot = review.snapshot
        copies = len(snapshot.positions_of_sha(loaded.sha))
        place = (
            f"row {loaded.position + 1:,} of {len(snapshot):,} · version {snapshot.version} · "
            f"row id {loaded.row_id}" + (f" · the same text is in {copies:,} rows" if copies > 1 else "")
        )
        self.view.show_entry(loaded.label, place, loaded.content)
        self.show_standing(review, loaded)
        self.facts.show_vector(*loaded.vector)
        self.facts.show_columns(loaded.hit.extra if loaded.hit is not None else {})
        self.facts.show_tokens("Counting its tokens…")
        self.facts.show_near("looking…", [])
        self._start_extras(entry, review, loaded)

    def show_standing(self, review: Review, loaded: LoadedEntry) -> None:
        """Its verdict now; for an entry changed since reviewed without one, the old and the new text."""
        if loaded.changed is None or review.state.verdict_at(loaded.position) is not None:
            record = review.state.record_at(loaded.position)
            if record is None:
                self.view.show_standing("Not reviewed yet.", None)
            else:
                self.view.show_standing(mark_tip(record), record.verdict)
            return
        was = loaded.changed.reviewed
        if loaded.old_text is not None:
            self.view.show_changed(
                f"Reviewed (version {was.table_version}, marked {was.verdict}):",
                f"Now (version {review.snapshot.version}):",
                loaded.diff,
            )
        self.view.show_standing(changed_text(loaded), "outdated")

    def _start_extras(self, entry: DatabaseEntry, review: Review, loaded: LoadedEntry) -> None:
        """How much of the text the model reads (its model loads the first time), then the near-copies."""
        services = self.services

        async def extras(tokens_counted: Callable[[str, int | None], None]) -> NearCopies:
            try:
                # Asked each time (the model keeps its reading): the registry may give the database another.
                reading = await model_reading(services, entry)
                tokens_counted(*await tokens_read(services, reading, loaded.content))
            except RecallError as error:
                tokens_counted(f"What the model reads is not known: {error.message}", None)
            try:
                return await near_copies(services, entry, review, loaded)
            except RecallError as error:
                return NearCopies(f"Not looked for: {error.message}", ())

        def tokens_shown(text: str, cut: int | None) -> None:
            self.facts.show_tokens(text)
            if cut is not None and not self.view.showing_changed:
                self.view.show_cut(cut)

        def near_shown(found: NearCopies) -> None:
            self.facts.show_near(found.note, found.rows)
            self.extrasShown.emit()

        self.extras.run(extras, busy="", success=near_shown, progress=tokens_shown)
