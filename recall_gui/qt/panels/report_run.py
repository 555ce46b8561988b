"""What the pages that report on a whole knowledge base share (Health, Duplicates, Reach): a database
picker, a run and a Cancel button, a progress bar and a note, and one report at a time in a lane.

A report runs through :meth:`~recall_gui.qt.operations.Lane.run`: while it runs, the controls are off, Cancel
is on and the progress shows; its failure goes to the window's error function and the note says it in
full; a cancel (Cancel, Esc, or a newer report) says in the note how far it got; and ``finished`` is
emitted however it ended, so a test or another page can wait for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QProgressBar, QPushButton, QWidget

from recall_gui.core.base import RecallError
from recall_gui.core.registry import Registry
from recall_gui.qt.operations import Operations
from recall_gui.qt.panels.database_picker import DatabasePicker
from recall_gui.qt.panels.status_note import StatusNote
from recall_gui.qt.widgets import push_button

T = TypeVar("T")
P = ParamSpec("P")


def _nothing() -> None:
    """Nothing more to forget on a failure."""


class ReportRun(QObject):
    """The controls of a report page and the report running; the lane's ``key`` names the widgets
    (``{key}Database``, ``{key}CancelButton``, ``{key}Progress``, ``{key}Note``)."""

    #: A report finished (or was cancelled, or failed): the note says how.
    finished = Signal()
    #: A report began (``True``) or ended (``False``).
    runningChanged = Signal(bool)

    def __init__(
        self,
        operations: Operations,
        key: str,
        *,
        run: tuple[str, str, str],
        cancel_tip: str,
        set_activity: Callable[[str], None],
        parent: QWidget,
    ) -> None:
        """``run``: the run button's text, object name and tooltip; ``set_activity``: the status bar."""
        super().__init__(parent)
        self._set_activity = set_activity
        self.lane = operations.lane(key, show_busy=self._show_busy)
        self.database_combo = DatabasePicker()
        self.database_combo.setObjectName(f"{key}Database")
        text, name, tip = run
        self.run_button = push_button(text, name, tip)
        self.run_button.setDefault(True)
        self.cancel_button = push_button("Cancel", f"{key}CancelButton", cancel_tip)
        self.progress = QProgressBar()
        self.progress.setObjectName(f"{key}Progress")
        self.note = StatusNote(f"{key}Note")
        #: The controls that set up a report: off while one runs.
        self.inputs: list[QWidget] = [self.database_combo]
        self.cancel_button.clicked.connect(self.cancel)

    def widgets(self) -> tuple[DatabasePicker, QPushButton, QPushButton, QProgressBar, StatusNote]:
        """The database picker, the run and Cancel buttons, the progress bar and the note, for the page to
        lay out."""
        return self.database_combo, self.run_button, self.cancel_button, self.progress, self.note

    @property
    def running(self) -> bool:
        """Whether a report runs (``False`` already while its task ends)."""
        return self.lane.busy

    def follow_registry(self, registry: Registry) -> None:
        """List the registry's databases (active ones first), keeping the one chosen while it is listed."""
        self.database_combo.show_registry(registry)
        self.set_running(self.running)

    def set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.run_button.setEnabled(not running and self.database_combo.count() > 0)
        for widget in self.inputs:
            widget.setEnabled(not running)
        self.runningChanged.emit(running)

    def _show_busy(self, text: str | None) -> None:
        self.set_running(text is not None)
        if text is not None:
            self.note.show_note(text, "neutral")

    def run(
        self,
        op: Callable[[Callable[P, None]], Awaitable[T]],
        *,
        progress: Callable[P, None],
        busy: str,
        show: Callable[[T], str | None],
        cancelled: Callable[[], str],
        activity: tuple[str, str] | None = None,
        failed: Callable[[], None] = _nothing,
    ) -> asyncio.Task[bool]:
        """Run ``op`` (handed the page's ``progress``) with ``busy`` in the note; ``show`` shows what it
        found and returns what the status bar says of it (``None``: nothing). ``cancelled()``: what the
        note says when it was stopped; ``activity``: what the status bar says while it runs and after a
        cancel (``None``: nothing); ``failed``: forget what a failed report leaves on screen."""
        set_activity = self._set_activity if activity is not None else None

        def shown(report: T) -> None:
            said = show(report)
            if said is not None and set_activity is not None:
                set_activity(said)
            self.finished.emit()

        def failure(error: RecallError) -> None:
            failed()
            self.note.show_note(error.full_text(), "bad")
            if set_activity is not None:
                set_activity("Ready")
            self.finished.emit()

        def stopped() -> None:
            self.note.show_note(cancelled(), "warning")
            if set_activity is not None and activity is not None:
                set_activity(activity[1])
            self.finished.emit()

        async def reported(on_progress: Callable[P, None]) -> T:
            try:
                return await op(on_progress)
            except (RecallError, asyncio.CancelledError):
                raise
            except Exception:  # the window's error function shows it; the note points there
                failed()
                self.note.show_note("The report failed: the message above says why.", "bad")
                self.finished.emit()
                raise

        if set_activity is not None and activity is not None:
            set_activity(activity[0])
        return self.lane.run(
            reported, progress=progress, busy=busy, success=shown, failure=failure, cancelled=stopped
        )

    def cancel(self) -> bool:
        """Stop the running report (Cancel, Esc); ``False`` if none was running."""
        return self.lane.cancel()
