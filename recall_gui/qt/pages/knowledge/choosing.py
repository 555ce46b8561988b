"""Choosing the database the page shows: a registered one or an opened table, its health checked and
its model loaded in the background, then its rows searched or browsed; and opening one entry of a
database at another page's request."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel

from recall_gui import core
from recall_gui.core.base import RecallError
from recall_gui.core.messages import UserMessage, sentence
from recall_gui.core.registry import DatabaseEntry, Registry, empty_registry_hint, location_problem
from recall_gui.core.storage import content_sha256
from recall_gui.qt.panels.database_bar import DatabaseBar
from recall_gui.qt.panels.opened_bar import OpenedBar
from recall_gui.qt.panels.query_bar import QueryBar
from recall_gui.qt.panels.results_panel import ResultsPanel
from recall_gui.qt.scope.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.services import WindowServices
from recall_gui.qt.settings import WindowMemory

if TYPE_CHECKING:
    from recall_gui.core.search import DatabaseHealth
    from recall_gui.qt.dialogs.exact_model import ExactModelDialog
    from recall_gui.qt.pages.knowledge.browsing import Browser
    from recall_gui.qt.pages.knowledge.entry_detail import EntryDetail
    from recall_gui.qt.pages.knowledge.looking_at import LookingAt
    from recall_gui.qt.pages.knowledge.scope_controls import ScopeControls
    from recall_gui.qt.pages.knowledge.searching import Searching


class Chooser:
    """The database bar's choice, and what follows from it."""

    def __init__(
        self,
        services: WindowServices,
        looking_at: LookingAt,
        *,
        parts: tuple[Searching, Browser, ScopeControls, EntryDetail],
        bars: tuple[DatabaseBar, OpenedBar, QueryBar, ResultsPanel],
        read_inputs: Callable[[], Inputs],
        publish_search: Callable[[], None],
    ) -> None:
        self.services = services
        self.looking_at = looking_at
        self.searching, self.browser, self.scope_controls, self.entry_detail = parts
        self.database_bar, self.opened_bar, self.query_bar, self.results = bars
        self._read_inputs = read_inputs
        self._publish_search = publish_search
        lane = services.operations.lane
        #: Choosing a database (a newer choice cancels the older); Esc cancels it with the search.
        self.lane = lane("choose")
        #: What a choice starts beside it: reading the vectors ahead, the versions and columns, and
        #: loading the model (side by side, so no database's model load is cut short).
        self.preparing, self.reading_facts, self.loading_model = lane("prepare"), lane("table-facts"), lane()

    # --- the registry -----------------------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        """Show a new registry snapshot; the current database stays chosen while it is listed."""
        looking_at = self.looking_at
        self.database_bar.set_registry(registry)
        if looking_at.current is not None and looking_at.current.origin == "registry":
            looking_at.current = registry.get(looking_at.current.name)
            self.database_bar.select(looking_at.current.name if looking_at.current else None)
        self._publish_search()

    def show_health(self, healths: Mapping[str, DatabaseHealth]) -> None:
        self.database_bar.set_health(healths)

    # --- choosing ---------------------------------------------------------------------------------------

    async def choose_database(self, name: str | None, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Make ``name`` the current database: show its facts and health, then search it for
        ``inputs.query`` (or browse it when the query is empty), unless a newer request came meanwhile."""
        await self.open_database(self.switch_to(name), inputs)

    async def choose_opened(self, key: str, entry: DatabaseEntry, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Make the opened table ``entry`` (listed under ``key`` in the "Opened" group) the current
        database, as :meth:`choose_database` does for a registered one."""
        self.looking_at.opened_key = key
        await self.open_database(self.switch_to(None, entry), inputs)

    def show_opened(self, key: str, entry: DatabaseEntry) -> None:
        """:meth:`choose_opened` from a slot: the switch happens now, the opening as a kept task."""
        inputs = self._read_inputs()
        self.looking_at.opened_key = key
        self.lane.start(self.open_database(self.switch_to(None, entry), inputs))

    def _show_entry_health(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        opened_key = self.looking_at.opened_key
        if entry.origin == "opened" and opened_key is not None:
            self.database_bar.set_opened_health(opened_key, health)
        else:
            self.database_bar.set_health({entry.name: health})
        if entry.origin == "opened":
            self.opened_bar.show_entry(entry, health.info.columns.vector_dim if health.info else None)

    def switch_to(self, name: str | None, opened: DatabaseEntry | None = None) -> int:
        """Choosing, the part that takes no time: from now on requests go to ``name``, and every earlier
        one is void. Done at once when the user chooses, so that a search entered right after it (even one
        whose key press was queued behind the choice) is newer than the choice. Returns its generation."""
        services, looking_at = self.services, self.looking_at
        entry = opened if opened is not None else services.registry.get(name) if name else None
        self.searching.lane.cancel()  # a search in the previous database must not land here
        generation = self.searching.lane.supersede()
        looking_at.current = entry
        looking_at.forget_table()
        self._publish_search()
        self.searching.searched = None
        self.scope_controls.reset(entry)
        if opened is not None and looking_at.opened_key is not None:
            self.database_bar.select_opened(looking_at.opened_key)
        else:
            looking_at.opened_key = None
            self.database_bar.select(name)
        self.database_bar.show_newer(None)
        self.database_bar.show_reading(None)
        self.opened_bar.show_entry(entry, None)
        self.entry_detail.select(None)
        if entry is None:
            self.browser.clear()
            self.results.show_result(None, "", self._no_database_hint())
        else:
            if entry.origin == "registry":
                services.memory.set(WindowMemory.DATABASE, entry.name)
            services.dismiss("database", "search")  # about the previous database, or a search in it
        return generation

    async def open_database(self, generation: int, inputs: Inputs) -> None:
        """Check the database just chosen, show its health, then show its rows for ``inputs``; the filter
        of the previous table is never applied to it (the box was emptied when it was chosen)."""
        inputs = inputs._replace(where="")
        looking_at, services, searching = self.looking_at, self.services, self.searching
        entry = looking_at.current
        if entry is None:
            return
        session = await services.session()

        health = await core.search.check_health(session, entry)
        if not looking_at.is_current(entry):
            return  # another database was chosen meanwhile
        self._show_entry_health(entry, health)
        looking_at.info = health.info
        if health.problems:
            problem = health.problems[0]
            services.show_message(
                UserMessage(f"{entry.name}: {problem.message}", problem.hint, "warning", "database")
            )
        else:
            self.loading_model.start(self._preload_model(entry, health))
            self.preparing.start(self._prepare_table(entry))
            self.reading_facts.start(self.scope_controls.load_table_facts(entry))
        if not searching.lane.is_newest(generation):
            return  # a newer request (a search entered while the database was checked) shows its outcome
        if health.info is None:  # the table cannot be read
            searching.lane.supersede()
            self.browser.clear()
            searching.show_status(None)
            searching.lane.set_busy(None)
            why = health.problems[0].message if health.problems else "the table cannot be read"
            # The caption says why in its own words: the banner may be dismissed, or replaced.
            self.results.show_browse(f"{entry.name} cannot be read: {why}", "No rows to show.")
            return
        if inputs.query.strip():
            await searching.search_within(inputs)
        else:
            await self.browser.browse(inputs)

    def _no_database_hint(self) -> str:
        registry, location = self.services.registry, self.services.location
        if registry.databases:
            return "Choose a database above."
        if location.is_app_registry:
            return (
                "No knowledge base is registered yet. Build the demo with File ▸ Build Demo Knowledge Base, "
                "or add one with cosh."
            )
        wrong_folder = location_problem(location)
        if wrong_folder is not None:
            return f"{sentence(wrong_folder.message)}. {wrong_folder.hint}"
        advice = empty_registry_hint(location.directory)
        return f"The registry in {location.directory} lists no database. {advice}"

    async def _preload_model(self, entry: DatabaseEntry, health: DatabaseHealth) -> None:
        """Load the database's model in the background, so the first search does not wait for it; a model
        that fails to load is reported now (and marked in the dropdown), not only at the first search."""
        if health.info is None:
            return
        session = await self.services.session()
        try:
            await session.models.get(entry.embedder, health.info.columns.vector_dim)
            if self.looking_at.is_current(entry):
                self.database_bar.show_model()
                self._offer_exact_model(entry)
        except RecallError as error:
            if not self.looking_at.is_current(entry):
                return  # another database was chosen meanwhile; a search in this one will say it

            problem = core.search.HealthProblem("model", error.message, error.hint)
            self._show_entry_health(entry, replace(health, problems=(*health.problems, problem)))
            self.services.show_message(
                UserMessage(f"{entry.name}: {problem.message}", problem.hint, "warning", "database")
            )

    def _offer_exact_model(self, entry: DatabaseEntry) -> None:
        """Say once per model and window that a stand-in embeds here, and offer to bring the exact one."""
        model = self.services.model_of(entry)
        if model is None or model.exact or model.name in self.services.stand_ins_told:
            return
        self.services.stand_ins_told.add(model.name)
        message = UserMessage(
            f"{entry.name} is searched with a stand-in for {model.name} here: results may differ from the "
            "agent's.",
            f"The stand-in is {model.source}; the agent runs {model.stands_in_for}.",
            "warning",
            "database",
        )
        self.services.show_message(
            message, ("Get the Exact Model…", lambda: self.get_exact_model(model.name))
        )

    def get_exact_model(self, name: str) -> None:
        """Open the dialog that brings cosh's exact model ``name`` here."""
        from recall_gui.qt.dialogs.exact_model import ExactModelDialog

        dialog = ExactModelDialog(name, self.results.window())
        dialog.finished.connect(lambda _code: self._after_model_dialog(dialog))
        dialog.open()

    def _after_model_dialog(self, dialog: ExactModelDialog) -> None:
        dialog.deleteLater()  # each offer opens a dialog of its own
        if not dialog.brought:
            return
        entry = self.looking_at.current
        self.services.forget_model(dialog.model_name)
        self.services.set_activity(f"{dialog.model_name} was brought: searches use it")
        if entry is not None and entry.embedder.model == dialog.model_name:
            self.loading_model.start(self._load_model_again(entry))

    async def _load_model_again(self, entry: DatabaseEntry) -> None:
        session = await self.services.session()
        await session.models.get(entry.embedder)
        if self.looking_at.is_current(entry):
            self.database_bar.show_model()

    async def _prepare_table(self, entry: DatabaseEntry) -> None:
        """Read the table's vectors into memory now, so the first search is already the fast one."""
        with contextlib.suppress(RecallError):  # a search on it will say what is wrong
            await core.search.prepare(await self.services.session(), entry.target)

    # --- one entry, at another page's request -------------------------------------------------------------

    async def open_entry(self, name: str, entry_id: str) -> bool:
        """Show entry ``entry_id`` of database ``name``: its rows browsed with the id as filter, the row
        with exactly that id selected and open in the detail. ``False`` when it cannot be shown (the
        banner says why)."""
        services, browse_model = self.services, self.browser.browse_model
        if services.registry.get(name) is None:
            services.show_message(
                UserMessage(
                    f"{name} is not in the registry the window shows ({services.location.directory}).",
                    "The call may have gone to a server of another registry.",
                    "warning",
                    "database",
                )
            )
            return False
        self.query_bar.query_edit.clear()
        # An entry named by its content (content·3f2a9c1e, where ids repeat): its rows are its id's.
        labelled = core.search.split_label(entry_id)
        self.results.filter_edit.setText(labelled[0] if labelled is not None else entry_id)
        inputs = self._read_inputs()
        current = self.looking_at.current
        if current is not None and current.name == name:
            await self.browser.browse(inputs)
        else:
            await self.open_database(self.switch_to(name), inputs)
        if browse_model.total is None:
            return False  # the table could not be read (the banner says why), or a newer request came
        page = browse_model.cache.locate(0)
        rows = page[0].ids if page is not None else ()
        if page is not None and labelled is not None and entry_id not in rows:
            # The row of that id whose content's sha256 starts with the digits the name gives.
            rows = tuple(
                entry_id
                if found == labelled[0] and content_sha256(content).startswith(labelled[1])
                else found
                for found, content in zip(page[0].ids, page[0].contents, strict=True)
            )
        if entry_id not in rows:
            services.show_message(
                UserMessage(f"{name} holds no entry with the id {entry_id!r} now.", None, "info", "database")
            )
            return False
        index = browse_model.index(rows.index(entry_id), 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.results.browse_table.selectionModel().setCurrentIndex(index, flags)
        self.results.browse_table.scrollTo(index)
        return True
