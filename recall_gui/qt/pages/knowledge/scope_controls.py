"""What part of the table is looked at: the version list and the bar marking an older version, the
columns tab, the metadata filter's columns, and the rows chosen on the map."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.panels.filter_bar import FilterBar
from recall_gui.qt.panels.schema_panel import SchemaPanel
from recall_gui.qt.panels.version_bar import VersionBar, pinned_text
from recall_gui.qt.scope.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.qt.pages.knowledge.browsing import Browser
    from recall_gui.qt.pages.knowledge.entry_detail import EntryDetail
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.searching import Searching


class ScopeControls:
    """The version, the metadata filter and the columns of the current table, and the map's selection."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        searching: Searching,
        browser: Browser,
        entry_detail: EntryDetail,
        bars: tuple[FilterBar, VersionBar, SchemaPanel],
        changed: SignalInstance,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching = searching
        self.browser = browser
        self.entry_detail = entry_detail
        self.filter_bar, self.version_bar, self.schema_panel = bars
        self._changed = changed
        #: Starting the process that checks filters first, while the user types one.
        self.warming = services.operations.lane("warm-filters")
        #: The search (database, query, limit) the map's choice replaced: Clear Choice searches it again.
        self._searched_before_choice: tuple[str, str, int] | None = None

    def reset(self, entry: DatabaseEntry | None) -> None:
        """Another database (``entry``) was chosen: the latest version, no filter, its columns unread."""
        self.filter_bar.clear_where()  # a filter names one table's columns
        self.filter_bar.set_versions(())
        self.version_bar.show_latest()
        self.schema_panel.clear("Reading the columns…" if entry else "Choose a database to see its columns.")
        self._changed.emit()

    def on_where_typed(self, text: str) -> None:
        """The user types a filter: start the process that checks filters first, so it is ready by Enter."""
        if text.strip():
            self.warming.start(self._warm_filters())

    async def _warm_filters(self) -> None:
        (await self.services.session()).filters.warm()

    async def load_table_facts(self, entry: DatabaseEntry) -> None:
        """The table's versions and the columns of the version shown, for the version list and the
        schema view."""
        looking_at = self.looking_at
        session = await self.services.session()
        try:
            versions = await core.tables.list_versions(session, entry.target)
            facts = await core.tables.describe_schema(session, entry.target.at(looking_at.version))
        except RecallError as error:
            if looking_at.current is not None and looking_at.current.name == entry.name:
                self.schema_panel.clear(f"The columns could not be read: {error.message}")
            return
        if looking_at.current is None or looking_at.current.name != entry.name:
            return  # another database was chosen meanwhile
        looking_at.versions = versions
        self.filter_bar.set_versions(versions, looking_at.version)
        self._show_version_bar()
        self.schema_panel.show_facts(facts)

    async def reload_versions(self, entry: DatabaseEntry) -> None:
        """List the table's versions again (another program wrote a new one), keeping the version shown."""
        looking_at = self.looking_at
        try:
            versions = await core.tables.list_versions(await self.services.session(), entry.target)
        except RecallError:
            return  # the list keeps what it showed; the next search or browse says what is wrong
        if not looking_at.is_current(entry):
            return
        looking_at.versions = versions
        self.filter_bar.set_versions(versions, looking_at.version)
        self._show_version_bar()

    def _show_version_bar(self) -> None:
        looking_at = self.looking_at
        if looking_at.current is None or looking_at.version is None:
            self.version_bar.show_latest()
            return
        version = next((v for v in looking_at.versions if v.version == looking_at.version), None)
        self.version_bar.show_pinned(
            pinned_text(looking_at.current.name, version, looking_at.version, looking_at.latest_number())
        )

    async def open_version(self, version: int | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show ``version`` of the current table, read-only (``None``: the latest), then search or browse
        it as ``inputs`` say."""
        looking_at = self.looking_at
        entry = looking_at.current
        if entry is None:
            return
        if version is not None and version == looking_at.latest_number():
            version = None  # the latest version is the table as it is: it follows new writes
        looking_at.version = version
        looking_at.selection = None  # rows chosen on a map of another version
        self.filter_bar.select_version(version)
        self._show_version_bar()
        self.entry_detail.select(None)
        self._changed.emit()
        await self.load_table_facts(entry)
        if looking_at.current is not entry:
            return
        if inputs.query.strip():
            await self.searching.search_within(inputs)
        else:
            await self.browser.browse(inputs)

    async def show_selection(self, row_ids: npt.NDArray[np.uint64], label: str, inputs: Inputs) -> None:
        """Browse only the rows ``row_ids`` of the table shown (chosen on the map)."""
        if self.looking_at.selection is None:
            searching = self.searching
            shown = searching.last_report is not None and searching.like is None
            self._searched_before_choice = searching.searched if shown else None
        self.looking_at.selection = (row_ids, label)
        await self.browser.browse(inputs._replace(query=""))

    async def clear_selection(self, inputs: Inputs) -> None:
        """Show what was shown before the map's choice: the search it replaced, searched again, or every
        row."""
        self.looking_at.selection = None
        before, self._searched_before_choice = self._searched_before_choice, None
        current = self.looking_at.current
        if before is not None and current is not None and before[0] == current.name:
            await self.searching.search_within(inputs._replace(query=before[1], limit=before[2]))
        else:
            await self.browser.browse(inputs._replace(query=""))
