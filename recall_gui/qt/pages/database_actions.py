"""Activate, Deactivate and Unregister a registered database from the window, each undone from the banner.

The change is the core's (:func:`~recall_gui.core.registry.registry_changes.change_active`,
:func:`~recall_gui.core.registry.registry_changes.unregister_database`): one name or entry, under the
registry's lock, on a worker thread. The banner then says what was done and offers Undo, which puts back
exactly what was there (an unregistered entry, unknown fields and all, in its place). The knowledge base
is never touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from recall_gui.core.base import RecallError
from recall_gui.core.messages import UserMessage
from recall_gui.core.registry import RemovedEntry, change_active, restore_database, unregister_database
from recall_gui.qt.services import WindowServices

#: The task key of registry edits: one at a time, in the order asked.
EDIT = "registry-edit"


class DatabaseActions(QObject):
    """The three actions for "the current database" (``subject``), and context menus for any one."""

    def __init__(self, services: WindowServices, subject: Callable[[], str | None], parent: QWidget) -> None:
        super().__init__(parent)
        self.services = services
        self.subject = subject
        self.activate_action = self._action("&Activate", "Let agents search this database", parent)
        self.deactivate_action = self._action("&Deactivate", "Stop agents searching this database", parent)
        self.unregister_action = self._action(
            "&Unregister", "Remove it from the registry (its files stay; Undo puts it back)", parent
        )
        self.activate_action.triggered.connect(lambda: self._on_subject(self.activate))
        self.deactivate_action.triggered.connect(lambda: self._on_subject(self.deactivate))
        self.unregister_action.triggered.connect(lambda: self._on_subject(self.unregister))
        self.update()

    @staticmethod
    def _action(text: str, tip: str, parent: QWidget) -> QAction:
        action = QAction(text, parent)
        action.setStatusTip(tip)
        action.setToolTip(tip)
        return action

    @property
    def actions(self) -> list[QAction]:
        return [self.activate_action, self.deactivate_action, self.unregister_action]

    def update(self) -> None:
        """Enable what applies to the current database (none for an opened, unregistered table)."""
        name = self.subject()
        entry = self.services.registry.get(name) if name is not None else None
        self.activate_action.setEnabled(entry is not None and not entry.active)
        self.deactivate_action.setEnabled(entry is not None and entry.active)
        self.unregister_action.setEnabled(entry is not None)

    def menu_for(self, name: str, parent: QWidget) -> QMenu:
        """A context menu of the three for database ``name``."""
        entry = self.services.registry.get(name)
        menu = QMenu(parent)
        menu.setObjectName("databaseContextMenu")
        for text, work, enabled in (
            ("&Activate", self.activate, entry is not None and not entry.active),
            ("&Deactivate", self.deactivate, entry is not None and entry.active),
            ("&Unregister", self.unregister, entry is not None),
        ):
            action = menu.addAction(text)
            action.setEnabled(enabled)
            action.triggered.connect(lambda _checked=False, w=work: self._start(w(name)))
        return menu

    def _on_subject(self, work: Callable[[str], Coroutine[Any, Any, bool]]) -> None:
        name = self.subject()
        if name is not None:
            self._start(work(name))

    def _start(self, work: Coroutine[Any, Any, Any]) -> None:
        self.services.tasks.start(work)

    # --- the changes --------------------------------------------------------------------------------------

    async def activate(self, name: str) -> bool:
        return await self._set_active(name, True)

    async def deactivate(self, name: str) -> bool:
        return await self._set_active(name, False)

    async def _set_active(self, name: str, active: bool) -> bool:
        before = await self._edit(change_active, self.services.location.directory, name, active)
        if before is _REFUSED:
            return False
        if (before is None) != active:  # another program had made it so already: nothing to undo
            state = "active" if active else "inactive"
            self.services.show_message(UserMessage(f"{name} was already {state}.", None, "info", "registry"))
            return True
        done = (
            f"Activated {name}: agents can search it."
            if active
            else f"Deactivated {name}: agents no longer search it."
        )
        # Undo puts the name back where it was in rag_active.json.
        self._done(done, lambda: self._start(self._undo_active(name, not active, before)))
        return True

    async def _undo_active(self, name: str, active: bool, position: int | None) -> None:
        done = await self._edit(change_active, self.services.location.directory, name, active, position)
        if done is not _REFUSED:
            state = "active again" if active else "inactive again"
            self.services.show_message(UserMessage(f"Undone: {name} is {state}.", None, "info", "registry"))

    async def unregister(self, name: str) -> bool:
        removed = await self._edit(unregister_database, self.services.location.directory, name)
        if not isinstance(removed, RemovedEntry):
            return False
        self._done(
            f"Unregistered {name}: agents no longer see it. Its files were not touched.",
            lambda: self._start(self._restore(removed)),
        )
        return True

    async def _restore(self, removed: RemovedEntry) -> None:
        done = await self._edit(restore_database, self.services.location.directory, removed)
        if done is not _REFUSED:
            message = f"Undone: {removed.name} is registered again, as it was."
            self.services.show_message(UserMessage(message, None, "info", "registry"))

    async def _edit(self, change: Callable[..., Any], *args: Any) -> Any:
        """Run ``change`` on a worker (file writes never hold the GUI thread), then show the registry as
        it is now; a refusal goes to the banner and returns :data:`_REFUSED`."""
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self.services.chores, change, *args)
        except RecallError as error:
            self.services.show_error(error, "registry")
            return _REFUSED
        await self.services.reload_registry()
        return result

    def _done(self, text: str, undo: Callable[[], None]) -> None:
        self.services.set_activity(text)
        self.services.show_message(UserMessage(text, None, "info", "registry"), ("&Undo", undo))


#: What :meth:`DatabaseActions._edit` returns for a change the core refused.
_REFUSED: Any = object()
