"""Tables opened by their folder or URI, beside the registry's databases: opening (a folder, a dropped
folder, a URI, a recent place), choosing a table among several, choosing a model, and adding a table to
the agents' databases.

An opened table is a :class:`~recall_gui.core.registry.registry_types.DatabaseEntry` of origin "opened": the
knowledge
page browses and searches it exactly as a registered database (the same harness), and nothing writes it
to the registry until the user adds it. Operations are plain ``async def`` methods that tests await; the
dialogs are window-modal and start an operation when accepted. What this needs of the page that shows
the tables is :class:`OpenedHost`; the page connects its bars' signals to the slots here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QMimeData, QObject, Qt, Signal
from PySide6.QtWidgets import QWidget

from recall_gui import core
from recall_gui.core.base import RecallError, masked
from recall_gui.core.messages import UserMessage
from recall_gui.core.registry import DatabaseEntry, EmbedderSpec
from recall_gui.qt.dialogs.add_database import AddDatabaseDialog
from recall_gui.qt.dialogs.open_uri import UriDialog
from recall_gui.qt.dialogs.table_picker import TablePicker
from recall_gui.qt.recent import RecentPlace, RecentPlaces
from recall_gui.qt.scope.inputs import EMPTY_INPUTS, Inputs
from recall_gui.qt.services import WindowServices

if TYPE_CHECKING:
    from recall_gui.core.tables import Folder, ModelDetection, Registration, TableInfo
    from recall_gui.qt.operations import Lane


def entry_key(entry: DatabaseEntry) -> str:
    """How the "Opened" group tells opened tables apart: their place."""
    return f"{entry.uri}\n{entry.table_name}"


def folder_of(mime: QMimeData) -> str | None:
    """The first local folder a drag carries, if any."""
    if not mime.hasUrls():
        return None
    from pathlib import Path

    for url in mime.urls():
        if url.isLocalFile() and Path(url.toLocalFile()).is_dir():
            return url.toLocalFile()
    return None


class OpenedHost(Protocol):
    """What the opened tables need of the page that shows them (the knowledge page)."""

    @property
    def current(self) -> DatabaseEntry | None: ...

    @property
    def table_info(self) -> TableInfo | None: ...

    def read_inputs(self) -> Inputs: ...

    @property
    def choose_lane(self) -> Lane:
        """Where choosing a database runs (a newer choice cancels the older one)."""

    def show_opened_entries(self, entries: Mapping[str, DatabaseEntry]) -> None:
        """List ``entries`` (by :func:`entry_key`) as the opened tables to choose from."""

    def show_opened(self, key: str, entry: DatabaseEntry) -> None: ...

    async def choose_opened(self, key: str, entry: DatabaseEntry, inputs: Inputs = ...) -> None: ...

    async def choose_database(self, name: str | None, inputs: Inputs = ...) -> None: ...


class OpenedTables(QObject):
    """The opened tables of one window, its recent places, and the dialogs that open and register them."""

    #: The table picker is shown (tests choose in it).
    pickerShown = Signal()
    #: The table picker was closed without a choice.
    pickerCancelled = Signal()
    #: The "Add to agents' databases" dialog is shown.
    addDialogShown = Signal()

    def __init__(self, services: WindowServices, knowledge: OpenedHost, window: QWidget) -> None:
        super().__init__(window)
        self.services = services
        self.knowledge = knowledge
        #: What the dialogs are shown over.
        self.window = window
        self.recent = RecentPlaces(services.memory)
        #: The opened tables, by :func:`entry_key`, in the order they were opened.
        self.entries: dict[str, DatabaseEntry] = {}
        self.picker: TablePicker | None = None
        self.add_dialog: AddDatabaseDialog | None = None
        self.uri_dialog: UriDialog | None = None
        #: Opening a folder, a URI or a recent place (a newer one cancels the older); adding a table.
        self.opening = services.operations.lane("open")
        self.registering = services.operations.lane("register")

    def request_place(self, where: str, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Open the folder or URI ``where`` (see :meth:`open_place`) in the opening lane."""
        self.opening.start(self.open_place(where, inputs=inputs))

    def _give_back_keys(self) -> None:
        """A dialog over the window closed: the window takes the keyboard again. Where no window manager
        hands it back, no window was active afterwards, and the window's shortcuts reached nothing."""
        self.window.window().activateWindow()

    # --- opening ----------------------------------------------------------------------------------------

    async def open_place(
        self,
        where: str,
        storage_options: Mapping[str, str] | None = None,
        table: str | None = None,
        inputs: Inputs = EMPTY_INPUTS,
    ) -> bool:
        """Open the folder or URI ``where``: its one table (or ``table``, or the one a ``NAME.lance`` path
        names) at once, else the table picker. ``False`` if it cannot be opened (the banner says why)."""
        services = self.services
        services.set_activity(f"Opening {where}…")
        try:
            session = await services.session()

            place = core.tables.place_of(where, storage_options)
            folder = await core.tables.read_folder(session, place)
            wanted = table or place.table
            if wanted is None and len(folder.tables) > 1:
                self._ask_table(folder, inputs)
                services.set_activity(f"{len(folder.tables)} tables in {masked(place.uri)}: choose one")
                return True
            await self.open_table(folder, folder.table(wanted).name, inputs=inputs)
        except RecallError as error:
            services.set_activity("Ready")
            services.show_error(error)  # "general": it stays when another database is opened instead
            return False
        return True

    def _ask_table(self, folder: Folder, inputs: Inputs) -> None:
        picker = TablePicker(folder, self.window)
        picker.setWindowModality(Qt.WindowModality.WindowModal)

        def chosen() -> None:
            name = picker.chosen()
            if name is not None:
                self.opening.start(self.open_table(folder, name, inputs=inputs))

        picker.accepted.connect(chosen)
        picker.rejected.connect(self.pickerCancelled)
        picker.finished.connect(picker.deleteLater)
        picker.finished.connect(self._give_back_keys)
        self.picker = picker
        picker.open()
        self.pickerShown.emit()

    async def open_table(
        self, folder: Folder, name: str, model: ModelDetection | None = None, inputs: Inputs = EMPTY_INPUTS
    ) -> None:
        """Show table ``name`` of ``folder`` in the "Opened" group, remember the place, and open it."""
        entry = core.tables.opened_entry(folder, folder.table(name), model)
        key = entry_key(entry)
        self.entries[key] = entry
        self.knowledge.show_opened_entries(self.entries)
        self.recent.remember(folder.place.uri, name, folder.place.storage_options)
        await self.knowledge.choose_opened(key, entry, inputs)

    async def choose_model(self, spec: EmbedderSpec, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Search the current opened table with ``spec`` from now on (and run the query again)."""
        entry = self.knowledge.current
        if entry is None or entry.origin != "opened":
            return
        changed = replace(entry, embedder=spec, model_reason="chosen by you")
        key = entry_key(changed)
        self.entries[key] = changed
        self.knowledge.show_opened_entries(self.entries)
        await self.knowledge.choose_opened(key, changed, inputs)

    # --- registering ------------------------------------------------------------------------------------

    def ask_register(self) -> None:
        """Show the "Add to agents' databases" dialog for the current opened table."""
        entry, info = self.knowledge.current, self.knowledge.table_info
        if entry is None or entry.origin != "opened":
            self.services.show_message(
                UserMessage(
                    "Open a folder first: only a table opened by its folder can be added.",
                    "File ▸ Open Folder… (Ctrl+O), or drop a LanceDB folder on the window.",
                    "info",
                )
            )
            return
        if info is None:
            self.services.show_message(
                UserMessage(f"{entry.name} cannot be read, so it cannot be added.", None, "warning")
            )
            return

        registry = self.services.registry
        dialog = AddDatabaseDialog(
            entry,
            columns=info.columns,
            taken={db.name for db in registry.databases},
            choices=core.tables.model_choices(info.columns.vector_dim),
            registry=core.registry.registry_readers(self.services.location),
            parent=self.window,
        )
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        inputs = self.knowledge.read_inputs()
        dialog.accepted.connect(
            lambda: self.registering.start(self.register(entry, dialog.request(), inputs))
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.finished.connect(self._give_back_keys)
        self.add_dialog = dialog
        dialog.open()
        self.addDialogShown.emit()

    async def register(
        self, entry: DatabaseEntry, request: Registration, inputs: Inputs = EMPTY_INPUTS
    ) -> bool:
        """Add ``entry`` to the registry as ``request`` says, then show the registered database; ``False``
        (and the reason in the banner) if it was refused."""
        services = self.services
        try:
            session = await services.session()
            done = await core.tables.register_table(session, services.location.directory, entry, request)
        except RecallError as error:
            services.show_error(error, "database")
            return False
        self.entries.pop(entry_key(entry), None)
        self.knowledge.show_opened_entries(self.entries)
        await services.reload_registry()  # the registered database is in the snapshot it chooses from
        await self.knowledge.choose_database(request.name, inputs)
        state = "active"
        if not request.active:
            state = "inactive: tick it on the description page to let agents search it"
        notes = "".join(f" Note: {note}." for note in done.notes)
        services.show_message(
            UserMessage(
                f"Added {request.name} to the agents' databases ({state}).",
                f"{core.registry.offered_by(services.location)}{notes}",
                "info",
            )
        )
        return True

    # --- object storage and recent places ---------------------------------------------------------------

    def ask_uri(self, inputs: Inputs = EMPTY_INPUTS) -> None:
        """Show the Open URI dialog; opening starts when it is accepted."""
        dialog = UriDialog(self.window)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.accepted.connect(
            lambda: self.opening.start(self.open_place(dialog.uri(), dialog.storage_options(), inputs=inputs))
        )
        dialog.finished.connect(dialog.deleteLater)
        dialog.finished.connect(self._give_back_keys)
        self.uri_dialog = dialog
        dialog.open()

    def open_recent(self, place: RecentPlace, inputs: Inputs = EMPTY_INPUTS) -> None:
        self.opening.start(self.open_place(place.uri, place.storage_options, place.table, inputs))

    # --- slots --------------------------------------------------------------------------------------------

    def on_opened_chosen(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is not None:
            self.knowledge.show_opened(key, entry)

    def on_model_chosen(self, spec: object) -> None:
        if isinstance(spec, EmbedderSpec):
            self.knowledge.choose_lane.start(self.choose_model(spec, self.knowledge.read_inputs()))
