"""Activate, Deactivate and Unregister a registered database from the window, each undone from the banner.

The change is the core's (:func:`~recall_gui.core.registry.registry_changes.change_active`,
:func:`~recall_gui.core.registry.registry_changes.unregister_database`): one name or entry, under the
registry's lock, on a worker thread. The banner then says what was done and offers Undo, which puts back
exactly what was there (an unregistered entry, unknown fields and all, in its place), and shows the
database again where it was shown. What the banner and the status bar say of a database is withdrawn as
soon as the registry no longer bears it out (Undo, another program's change). The knowledge base is never
touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from recall_gui.core.base import RecallError
from recall_gui.core.messages import UserMessage
from recall_gui.core.registry import RemovedEntry, change_active, restore_database, unregister_database
from recall_gui.qt.services import WindowServices

#: What a message said of a database, checked against each new registry snapshot.
State = Literal["active", "inactive", "unregistered"]


class DatabaseActions(QObject):
    """The three actions for "the current database" (``subject``), and context menus for any one."""

    def __init__(
        self,
        services: WindowServices,
        subject: Callable[[], str | None],
        parent: QWidget,
        show_again: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        """``subject``: the database the window shows; ``show_again``: shows a database again (after the
        Undo of its removal)."""
        super().__init__(parent)
        self.services = services
        self.subject = subject
        self._show_again = show_again
        #: The last message's database, the state it claimed and its text.
        self._claim: tuple[str, State, str] | None = None
        #: The changes and their Undo, side by side (each its own database's).
        self.changing = services.operations.lane()
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
        self.changing.start(work)

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
        undo = lambda: self._start(self._undo_active(name, not active, before))  # noqa: E731
        self._done(done, (name, "active" if active else "inactive"), undo)
        return True

    async def _undo_active(self, name: str, active: bool, position: int | None) -> None:
        done = await self._edit(change_active, self.services.location.directory, name, active, position)
        if done is not _REFUSED:
            state = "active again" if active else "inactive again"
            self._done(f"Undone: {name} is {state}.", (name, "active" if active else "inactive"))

    async def unregister(self, name: str) -> bool:
        shown = self.subject() == name
        removed = await self._edit(unregister_database, self.services.location.directory, name)
        if not isinstance(removed, RemovedEntry):
            return False
        self._done(
            f"Unregistered {name}: agents no longer see it. Its files were not touched.",
            (name, "unregistered"),
            lambda: self._start(self._restore(removed, shown)),
        )
        return True

    async def _restore(self, removed: RemovedEntry, shown: bool) -> None:
        """Put ``removed`` back; ``shown``: it was the database shown, so it is shown again."""
        done = await self._edit(restore_database, self.services.location.directory, removed)
        if done is _REFUSED:
            return
        name = removed.name
        state: State = "inactive" if removed.active_position is None else "active"
        self._done(f"Undone: {name} is registered again, as it was.", (name, state))
        if shown and self._show_again is not None and self.subject() != name:
            await self._show_again(name)

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

    def _done(self, text: str, claim: tuple[str, State], undo: Callable[[], None] | None = None) -> None:
        """Say ``text`` (in the banner, with Undo when there is one, and the status bar); ``claim``: the
        database and the state it speaks of, for :meth:`follow_registry`."""
        self._claim = (*claim, text)
        self.services.set_activity(text)
        action = ("&Undo", undo) if undo is not None else None
        self.services.show_message(UserMessage(text, None, "info", "registry"), action)

    def follow_registry(self) -> None:
        """A new registry snapshot: a message about a database whose state it no longer bears out is
        withdrawn from the status bar and the banner."""
        if self._claim is None:
            return
        name, state, text = self._claim
        entry = self.services.registry.get(name)
        now: State = "unregistered" if entry is None else "active" if entry.active else "inactive"
        if now == state:
            return
        self._claim = None
        if self.services.activity.text() == text:
            self.services.set_activity("Ready")
        message = self.services.banner.message
        if message is not None and message.text == text:
            self.services.dismiss("registry")


#: What :meth:`DatabaseActions._edit` returns for a change the core refused.
_REFUSED: Any = object()
