"""Browsing the current table: every row (at the version shown) that the text filter, the metadata
filter and the rows chosen on the map keep, read a page at a time as the table scrolls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import RecallError, plural, quoted
from recall_gui.qt.models.browse_model import BrowseModel
from recall_gui.qt.panels.results_panel import (
    HINT_NO_FILTERED_ROWS,
    HINT_NO_MATCH,
    HINT_NO_ROWS,
    ResultsPanel,
)
from recall_gui.qt.scope.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PySide6.QtCore import SignalInstance

    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.session import Session
    from recall_gui.core.storage import TableTarget
    from recall_gui.core.tables import Page
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.searching import Searching


@dataclass(frozen=True)
class Browsing:
    """What the browse table shows."""

    entry: DatabaseEntry
    target: TableTarget
    filter_text: str
    where: str | None
    row_ids: npt.NDArray[np.uint64] | None


class Browser:
    """Fills the browse table; a browse supersedes the search shown (and any search still running)."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        searching: Searching,
        results: ResultsPanel,
        browse_model: BrowseModel,
        ready: SignalInstance,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching = searching
        self.results = results
        self.browse_model = browse_model
        self._ready = ready
        #: What the browse table shows (what exporting it writes): the database, its table at the version
        #: shown, the text filter, the metadata filter and the rows chosen on the map.
        self.browsing: Browsing | None = None

    def clear(self) -> None:
        """No table to browse."""
        self.browse_model.reset(None)
        self.browsing = None

    async def browse(self, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show every row of the current database whose id or content contains ``inputs.filter_text``."""
        looking_at, searching = self.looking_at, self.searching
        entry = looking_at.current
        if entry is None:
            return
        searching.lane.supersede()
        searching.last_report = None
        filter_text = inputs.filter_text.strip()
        session = await self.services.session()

        target, where, selection = looking_at.target(), inputs.where or None, looking_at.selection

        async def fetch(offset: int, limit: int) -> Page:
            if selection is not None:
                return await core.tables.fetch_selected_page(
                    session,
                    target,
                    selection[0],
                    offset=offset,
                    limit=limit,
                    filter_text=filter_text,
                    where=where,
                )
            return await core.tables.fetch_page(
                session, target, offset=offset, limit=limit, filter_text=filter_text, where=where
            )

        self.browse_model.reset(fetch, looking_at.metadata_columns())
        self.browsing = Browsing(entry, target, filter_text, where, selection[0] if selection else None)
        looking_at.where = where
        searching.results_caption = None
        generation = self.browse_model.generation
        self.results.show_browse(f"Reading {entry.name}…")
        searching.show_status(None)
        try:
            await self.browse_model.load_first_page()
        except RecallError as error:
            if generation == self.browse_model.generation:
                self.services.show_error(error, "search")
                self.results.set_caption(f"The rows of {entry.name} could not be read: {error.message}")
                self.results.set_browse_placeholder("No rows to show.")
            return
        if generation != self.browse_model.generation:
            return
        await self._name_shared_ids(session, target, generation)
        total = self.browse_model.total or 0
        if selection is not None:
            caption = f"{plural(total, 'row')} {selection[1]} in {entry.name}"
            if filter_text:
                caption += f" that contain {quoted(filter_text)}"
        elif filter_text:
            caption = f"{plural(total, 'row')} of {entry.name} contain {quoted(filter_text)}"
        elif where:
            caption = f"{plural(total, 'row')} of {entry.name}"
        else:
            caption = f"All {plural(total, 'row')} of {entry.name}"
        self.results.set_caption(caption + looking_at.scope(inputs))
        placeholder = HINT_NO_MATCH if filter_text else HINT_NO_ROWS
        if total == 0 and where is not None and not filter_text and selection is None:
            try:
                placeholder = await core.tables.why_empty(session, target, where)
            except RecallError:  # the rows were read: only the account of why none is shown is lost
                placeholder = HINT_NO_FILTERED_ROWS
            if generation != self.browse_model.generation:
                return
        self.results.set_browse_placeholder(placeholder)
        self.services.set_activity(f"Page read in {self.browse_model.last_fetch_ms or 0:.1f} ms")
        self._ready.emit()

    async def _name_shared_ids(self, session: Session, target: TableTarget, generation: int) -> None:
        """Where the table's ids repeat, name its rows by their content and say so once."""
        try:
            repeats = await session.tables.id_repeats(target)
        except RecallError:  # the rows were read: only their names by content are lost
            return
        if generation == self.browse_model.generation:
            self.looking_at.repeats = repeats
            self.browse_model.set_repeats(repeats)
            self.results.show_repeats(repeats)
