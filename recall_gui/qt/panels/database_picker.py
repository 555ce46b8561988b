"""A dropdown of the registered databases (the health, duplicates and agent log pages), for any number."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QListView, QWidget

from recall_gui.core.drafts import Drafts
from recall_gui.core.registry import Registry
from recall_gui.qt.models.database_list import DatabaseListModel


class DatabasePicker(QComboBox):
    """Lists a registry snapshot through :class:`DatabaseListModel`; keeps the chosen database while it
    is listed. ``currentData()`` is the chosen database's name."""

    def __init__(self, *, by_activity: bool = True, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.databases = DatabaseListModel(by_activity=by_activity, parent=self)
        self.setModel(self.databases)
        # Its width from a typical name, not from measuring every name of a large registry.
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(16)
        view = self.view()
        if isinstance(view, QListView):
            view.setUniformItemSizes(True)

    def show_registry(self, registry: Registry) -> None:
        """List ``registry``'s databases without emitting a change of choice; the chosen one stays
        chosen while it is listed, else the first is."""
        chosen = self.chosen()
        self.blockSignals(True)
        self.databases.show(registry)
        self.setCurrentIndex(max(self.databases.row_of(chosen), 0) if self.count() else -1)
        self.blockSignals(False)

    def chosen(self) -> str | None:
        name = self.currentData()
        return name if isinstance(name, str) else None

    def choose(self, name: str) -> None:
        self.setCurrentIndex(max(self.databases.row_of(name), 0))

    def follow(self, drafts: Drafts) -> None:
        """Choose each registered database the knowledge page goes to (``drafts``' search), when it goes
        to another one, unless the picker is disabled (its page is busy with the one chosen)."""
        followed: list[str | None] = [None]

        def on_search_changed() -> None:
            entry = drafts.search.database
            name = entry.name if entry is not None and entry.origin == "registry" else None
            if name is None or name == followed[0]:
                return
            followed[0] = name
            if self.isEnabled() and self.databases.row_of(name) >= 0:
                self.choose(name)

        drafts.search_changed.add(on_search_changed)
