"""The agent's tool description: which databases are active, each one's description, the suffix the tool
description ends with — the database list generated live from the registry, then the user's notes, or
their own text instead — and what the agent gets in the end.

The page only shows :class:`~recall_gui.core.drafts.Drafts` (the services' shared drafts) and hands what
the user does to it: the rules (when a draft ends, what conflicts, what agents would get) live in the
core. Registry edits go through the core, which rewrites one field atomically and refuses a file that
does not parse; the suffix is saved in the app's config dir. The page composes its three boxes (this
package's ``__init__`` lists them).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QMenu, QSplitter, QVBoxLayout, QWidget

from recall_gui.core.registry import Registry
from recall_gui.qt.pages.description.databases import DatabaseList
from recall_gui.qt.pages.description.preview import Preview
from recall_gui.qt.pages.description.suffix import SuffixEditor
from recall_gui.qt.services import WindowServices


class DescriptionPage(QWidget):
    """``activeTable``, ``dbDescriptionEdit``; the suffix: ``suffixNotesMode``/``suffixOverrideMode``,
    ``suffixState``, ``suffixDrift``, ``generatedSuffixView``, ``suffixEdit``; ``descriptionPreview`` and
    ``toolJsonView``."""

    #: This page changed the registry files; the window reloads them.
    registryEdited = Signal()

    def __init__(self, services: WindowServices, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("descriptionPage")
        self.services = services
        self.drafts = services.drafts
        #: Whether the long texts (the generated list, the preview) wait for the page to be shown.
        self._long_texts_due = False
        self.databases = DatabaseList(services, self, self.registryEdited)
        self.suffix = SuffixEditor(services)
        self.preview = Preview()
        self.active_table = self.databases.active_table
        self.suffix_state, self.suffix_drift = self.suffix.suffix_state, self.suffix.suffix_drift
        self.suffix_edit, self.generated_view = self.suffix.suffix_edit, self.suffix.generated_view
        self.save_suffix_button = self.suffix.save_suffix_button
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("descriptionSplitter")
        self.splitter.setChildrenCollapsible(False)
        for part in (self.databases, self.suffix, self.preview):
            self.splitter.addWidget(part.box)
        self.splitter.setSizes([380, 440, 460])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 6)
        layout.addWidget(self.splitter)
        self.suffix.apply_palette(self.palette())
        self.drafts.suffix.changed.add(self._show_suffix)
        self._show_suffix()

    # --- the databases ----------------------------------------------------------------------------------

    def set_registry(self, registry: Registry) -> None:
        """Show ``registry``'s databases (the drafts follow it through the services)."""
        self.databases.set_registry(registry)

    def follow_registry(self) -> None:
        """A new registry snapshot: what the banner says of a database changed here is withdrawn once the
        registry no longer bears it out."""
        self.databases.database_actions.follow_registry()

    def context_menu_at(self, row: int) -> QMenu | None:
        """The Activate / Deactivate / Unregister menu of the database in ``row``."""
        return self.databases.context_menu_at(row)

    def set_database_active(self, name: str, active: bool) -> bool:
        """Activate or deactivate ``name`` in the registry; ``False`` (and a message) if it was refused."""
        return self.databases.set_database_active(name, active)

    def save_description(self) -> bool:
        """Write the edited description of the selected database to the registry (see the part)."""
        return self.databases.save_description()

    def revert_description(self) -> None:
        self.databases.revert_description()

    # --- the suffix and what the agent gets ---------------------------------------------------------------

    def _show_suffix(self) -> None:
        """Everything about the suffix, as the draft says: mode, state, drift, the two parts, the preview."""
        self.suffix.show()
        self._show_long_texts()
        self.suffix.announce_served()

    def _show_long_texts(self) -> None:
        """The generated list and the preview, as the draft says. They are long for a large registry
        (megabytes at 50,000 databases, a long stall to lay out), so they are laid out only while the page
        is shown (when it is shown next, otherwise) and only when they changed."""
        if not self.isVisible():
            self._long_texts_due = True
            return
        self._long_texts_due = False
        self.suffix.show_generated()
        self.preview.show(self.drafts.suffix, self.palette())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.databases.fit_columns()
        if self._long_texts_due:
            self._show_long_texts()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the system switched between light and dark
            self.suffix.apply_palette(self.palette())
            self._show_long_texts()

    def revert_suffix(self) -> None:
        self.suffix.revert_suffix()

    def save_suffix(self) -> bool:
        return self.suffix.save_suffix()
