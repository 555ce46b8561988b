"""Keeping the header and the version list true while another program writes the table shown.

Every search and browse reports the version of the table it read. The header (the database bar's facts)
states the facts of exactly that version: the rows on screen come from it. The version list marks the
table's latest version, whichever version the user opened. A re-check of the databases (F5) that finds a
newer version updates the list and says so in the header, without replacing the rows shown.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.registry import DatabaseEntry
    from recall_gui.core.search import DatabaseHealth, SearchReport
    from recall_gui.core.tables import TableInfo
    from recall_gui.qt.models.browse_model import BrowseModel
    from recall_gui.qt.pages.knowledge.browsing import Browsing
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.scope_controls import ScopeControls
    from recall_gui.qt.panels.database_bar import DatabaseBar


class WriteFollower:
    """Brings the header's facts to the version of the rows shown, and the version list to the latest."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        database_bar: DatabaseBar,
        scope_controls: ScopeControls,
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.database_bar = database_bar
        self.scope_controls = scope_controls
        lane = services.operations.lane
        #: Bringing the header and the list up to the rows shown; listing the versions again after a
        #: re-check of the databases found a newer one (a newer request of each replaces the older).
        self.following, self.listing_latest = lane("table-writes"), lane("table-latest")

    def shown(self, entry: DatabaseEntry, version: int | None) -> None:
        """Rows of ``entry`` read at ``version`` are now shown: follow them in a kept task."""
        if version is None:
            return
        info = self.looking_at.info
        if info is not None and self.looking_at.is_current(entry):
            # Never the facts of another version meanwhile.
            self.database_bar.show_reading(version if info.version != version else None)
        self.following.start(self.follow(entry, version))

    def search_shown(self, report: SearchReport | None) -> None:
        """A search's results are shown: follow the version it read (another program may have written)."""
        if report is not None:
            self.shown(report.database, report.result.table_version)

    def rows_shown(self, browsing: Browsing | None, rows: BrowseModel) -> None:
        """A page of browsed rows is shown: follow the version they were read from."""
        if browsing is not None:
            self.shown(browsing.entry, rows.table_version)

    async def follow(self, entry: DatabaseEntry, version: int) -> None:
        """Make the header state the facts of ``version`` (the rows shown come from it) and the list mark
        the table's latest version."""
        looking_at = self.looking_at
        if not looking_at.is_current(entry) or looking_at.info is None:
            return  # another database, or one whose table could not be read (its health says why)

        session = await self.services.session()
        try:
            if looking_at.info.version != version:
                # At that very version (read-only): the latest may have moved on since the rows were read.
                info = await core.tables.describe_table(session, entry.target.at(version))
                if not looking_at.is_current(entry):
                    return
                looking_at.info = info
                self.database_bar.show_reading(None)
                self._show_facts(entry, info)
            latest = (
                version
                if looking_at.version is None
                else await core.tables.latest_version(session, entry.target)
            )
        except RecallError as error:  # the header keeps naming the version shown, not another one's facts
            if looking_at.is_current(entry):
                self.services.set_activity(
                    f"The facts of version {version} could not be read: {error.message}"
                )
            return
        await self.latest_seen(entry, latest)

    async def latest_seen(self, entry: DatabaseEntry, latest: int) -> None:
        """The table of ``entry`` was found at version ``latest``: list its versions again when the list
        does not know it, and say in the header when the rows shown are of an earlier one."""
        looking_at = self.looking_at
        if not looking_at.is_current(entry):
            return
        if latest > (looking_at.latest_number() or 0):
            await self.scope_controls.reload_versions(entry)
        self.show_newer()

    def show_newer(self) -> None:
        """The header names a later version than the rows shown while the latest is followed (an older
        version opened says so in its own bar)."""
        looking_at = self.looking_at
        info, latest = looking_at.info, looking_at.latest_number()
        newer = None
        if looking_at.version is None and info is not None and latest is not None and latest > info.version:
            newer = latest
        self.database_bar.show_newer(newer)

    def health_checked(self, health: DatabaseHealth) -> DatabaseHealth:
        """A re-check of the current database, as the header shows it: with the facts of the rows shown
        (the list learns of a newer version in a kept task)."""
        looking_at, info = self.looking_at, health.info
        shown = looking_at.info
        if not looking_at.is_current(health.entry) or shown is None or info is None:
            return health
        if info.version != shown.version:
            self.listing_latest.start(self.latest_seen(health.entry, info.version))
            return replace(health, info=shown)
        return health

    def _show_facts(self, entry: DatabaseEntry, info: TableInfo) -> None:
        bar, key = self.database_bar, self.looking_at.opened_key
        if entry.origin == "opened" and key is not None:
            health = bar.choices.opened_health(key)
        else:
            health = bar.health(entry.name)
        if health is None:
            return  # not checked yet: the check under way shows its facts
        checked = replace(health, info=info)
        if entry.origin == "opened" and key is not None:
            bar.set_opened_health(key, checked)
        else:
            bar.set_health({entry.name: checked})
