"""``recall-gui --smoke``: start the window as a user would, prove it works, and quit.

Packaged builds are checked with it (``make package-smoke``): a build can pass ``--version`` and still
lack a Qt plugin, a lazily imported library or a data file that only the window touches. The check
passes only when the window was shown on screen, its start-up finished without an error message, it
took keyboard input, and (when a database is open) a search typed into it returned rows and the Agent
view got the tool from the window's own MCP server; anything else fails within the time limit with the
reason. Nothing is faked: the keys go through Qt's event delivery to the focused widget, exactly as
typed keys do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QWidget

if TYPE_CHECKING:
    from recall_gui.qt.main_window import MainWindow

#: What the smoke start types into the query field (any text finds the nearest rows of a non-empty table).
SMOKE_QUERY = "smoke test"
#: How long the whole check may take: the first search also loads the embedding model.
SMOKE_TIMEOUT = 120.0
#: How often the conditions are looked at while waiting.
POLL_SECONDS = 0.02


class SmokeFailure(Exception):
    """The window did not reach a working state; the message says which step failed."""


@dataclass
class SmokeReport:
    """What happened, step by step, with the time since the window was asked to show."""

    started_at: float = field(default_factory=time.perf_counter)
    steps: list[str] = field(default_factory=list)

    def note(self, step: str) -> None:
        self.steps.append(f"{step} ({(time.perf_counter() - self.started_at) * 1000:.0f} ms)")

    def summary(self) -> str:
        return "; ".join(self.steps)


async def _until(condition: Callable[[], bool], deadline: float, what: str) -> None:
    while not condition():
        if time.perf_counter() > deadline:
            raise SmokeFailure(f"timed out waiting until {what}")
        await asyncio.sleep(POLL_SECONDS)


async def _within(awaitable: Awaitable[Any], deadline: float, what: str) -> Any:
    try:
        return await asyncio.wait_for(awaitable, max(0.0, deadline - time.perf_counter()))
    except TimeoutError as error:
        raise SmokeFailure(f"timed out waiting until {what}") from error


def _type(widget: QWidget, text: str) -> None:
    """Deliver key presses and releases to ``widget`` as the platform would for typed keys."""
    for char in text:
        key = Qt.Key(ord(char.upper())) if char.isalnum() else Qt.Key.Key_Space
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(widget, QKeyEvent(kind, key, Qt.KeyboardModifier.NoModifier, char))


def _press_enter(widget: QWidget) -> None:
    for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
        QApplication.sendEvent(widget, QKeyEvent(kind, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier))


def _no_error(window: MainWindow, step: str) -> None:
    message = window.banner.message
    if message is not None and message.level == "error":
        hint = f" ({message.hint})" if message.hint else ""
        raise SmokeFailure(f"{step}: the window shows an error: {message.text}{hint}")


async def smoke_check(window: MainWindow, start: asyncio.Task[Any], time_limit: float) -> SmokeReport:
    """Wait for the shown ``window`` (whose start-up task is ``start``) to work; raise :class:`SmokeFailure`.

    ``time_limit`` bounds the whole check, in seconds.
    """
    report = SmokeReport()
    deadline = report.started_at + time_limit

    await _until(window.is_on_screen, deadline, "the window is shown on screen")
    report.note(f"window shown on {QApplication.platformName()}")
    if not window.isActiveWindow():
        window.activateWindow()  # what a window manager does for a new window (a bare X server has none)

    try:
        await _within(asyncio.shield(start), deadline, "start-up finished")
    except SmokeFailure:
        raise
    except Exception as error:
        raise SmokeFailure(f"start-up failed: {type(error).__name__}: {error}") from error
    _no_error(window, "start-up")
    report.note("start-up finished")

    query = window.knowledge.query_bar.query_edit
    await _until(query.hasFocus, deadline, "the query field has the keyboard focus")
    query.clear()
    _type(query, SMOKE_QUERY)
    if query.text() != SMOKE_QUERY:
        raise SmokeFailure(f"typed {SMOKE_QUERY!r} but the query field holds {query.text()!r}")
    report.note("keyboard input reaches the query field")

    if window.knowledge.current is None:
        report.note("no database to search")
        return report
    finished = asyncio.Event()
    window.knowledge.searchFinished.connect(finished.set)
    _press_enter(query)
    await _within(finished.wait(), deadline, "the search typed into the window finished")
    _no_error(window, "search")
    rows = window.knowledge.results.current_table().model().rowCount()
    if rows == 0:
        raise SmokeFailure(f"the search in {window.knowledge.current.name} returned no rows")
    report.note(f"search in {window.knowledge.current.name}: {rows} rows")

    # The Agent view starts the window's own MCP server (this program, as `recall-gui mcp`) and lists
    # the tool through it, as an agent's client would.
    listed = asyncio.Event()
    window.agent.listingFinished.connect(listed.set)
    window.pages.setCurrentWidget(window.agent)
    await _within(listed.wait(), deadline, "the Agent view listed the tool")
    server = window.agent.server
    if not server.running:
        reason = server.error.message if server.error else server.state.value
        raise SmokeFailure(f"the Agent view's MCP server is not running: {reason}")
    if window.knowledge.current.name not in window.agent.description_view.toPlainText():
        raise SmokeFailure("the tool the Agent view lists does not name the open database")
    report.note("Agent view: the MCP server lists the tool")
    return report
