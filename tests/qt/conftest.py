"""Fixtures for window tests: a qasync loop per test, windows built with ``create_window``, signal waits.

pytest-qt knows nothing of asyncio, so each test gets its own ``qasync.QEventLoop`` on the shared
QApplication; tests drive the window's operations with ``loop.run_until_complete`` and wait for its
signals through an ``asyncio.Event``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import qasync
import shiboken6
from PySide6.QtCore import QEvent, QProcess, SignalInstance
from PySide6.QtWidgets import QApplication

from recall_gui.qt import create_window
from recall_gui.qt.main_window import MainWindow
from tests.conftest import NO_PROCESSES_ENV
from tests.foldertools import write_langchain_table
from tests.kbtools import PASSAGES, KnowledgeBase, snapshot_tree, write_lance_table

TIMEOUT_S = 60.0


@pytest.fixture(autouse=True)
def no_unmarked_qprocesses(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `make test-fast`, a QProcess started by a test not marked ``process`` fails it (the Python
    ways of starting one are refused in tests/conftest.py)."""
    if os.environ.get(NO_PROCESSES_ENV) != "1" or request.node.get_closest_marker("process"):
        return

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"{request.node.nodeid} starts a QProcess: mark it `process`")

    monkeypatch.setattr(QProcess, "start", refused)


class TestEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's loop, minus one step: after ``run_until_complete`` qasync processes Qt events once more,
    with the loop already stopped; a task stepped then finds no running loop and fails. Tests leave tasks
    in flight between two ``run_until_complete`` calls on purpose (a held search, a model loading), so
    the test loop stops cleanly instead."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        #: Held while a worker thread hands the loop a callback, and while the loop's signaller is deleted.
        self.handing = threading.Lock()
        self.signaller_deleted = False

    def call_soon_threadsafe(self, callback: Any, *args: Any, context: Any = None) -> Any:
        """A worker thread still finishing a job after the test (its future done) hands its callback to a
        loop that is gone: dropped, as asyncio's own loop refuses it, rather than emitted on a deleted
        signaller (a crash)."""
        with self.handing:
            if self.signaller_deleted:
                return None
            return super().call_soon_threadsafe(callback, *args, context=context)

    def _add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        """qasync runs a callback whenever Qt processes events, between two ``run_until_complete`` calls
        too (pytest-qt processes them after each test): there a task stepped found no running loop and
        failed, and an MCP client's task group broke. Every callback runs with this loop running."""
        self._timer.add_callback(_InThisLoop(handle, self), delay)
        return handle

    def delete_qt_objects(self) -> None:
        """The loop's timer object and call-soon signaller, once it is closed (see the ``loop`` fixture)."""
        shiboken6.delete(self._timer)
        with self.handing:
            self.signaller_deleted = True
            shiboken6.delete(self._QEventLoop__call_soon_signaller)

    def run_until_complete(self, future: Any) -> Any:
        task = asyncio.ensure_future(future, loop=self)

        def stop(_done: Any) -> None:
            self.stop()

        task.add_done_callback(stop)
        try:
            self.run_forever()
        finally:
            task.remove_done_callback(stop)
        if not task.done():
            raise RuntimeError("the event loop stopped before the operation finished")
        return task.result()


class _InThisLoop:
    """A callback for qasync's timer that runs with its loop as the running loop."""

    def __init__(self, handle: asyncio.Handle, loop: asyncio.AbstractEventLoop) -> None:
        self.handle = handle
        self.loop = loop

    @property
    def _cancelled(self) -> bool:
        return self.handle.cancelled()

    def _run(self) -> None:
        if asyncio._get_running_loop() is not None:
            self.handle._run()
            return
        asyncio._set_running_loop(self.loop)
        try:
            self.handle._run()
        finally:
            asyncio._set_running_loop(None)


@pytest.fixture
def loop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync event loop for one test; pending tasks are cancelled and the loop closed afterwards."""
    event_loop = TestEventLoop(qapp)
    asyncio.set_event_loop(event_loop)
    yield event_loop
    pending = [task for task in asyncio.all_tasks(event_loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        event_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    event_loop.close()
    # qasync's close() leaves timers of cancelled callbacks (wait_for timeouts) running on its timer
    # object; if Python's garbage collector later frees it on a worker thread, Qt warns. Free it here.
    # Its call-soon signaller's slot holds the loop (and what its last callbacks held): a circle through Qt.
    event_loop.delete_qt_objects()
    asyncio.set_event_loop(None)


def run(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], timeout: float = TIMEOUT_S) -> Any:
    """Run one of the window's operations to its end on the test's loop."""
    return loop.run_until_complete(asyncio.wait_for(coro, timeout))


async def until(condition: Callable[[], bool], what: str, within: float = TIMEOUT_S) -> None:
    """Let the loop (and Qt) run until ``condition()`` holds; fail, naming ``what``, after ``within`` s."""
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.005)


@contextlib.contextmanager
def waiting_for(
    loop: asyncio.AbstractEventLoop, signal: SignalInstance, timeout: float = TIMEOUT_S
) -> Iterator[None]:
    """Run the loop after the ``with`` body until ``signal`` is emitted (connected before the body runs)."""
    event = asyncio.Event()

    def fired(*_args: Any) -> None:
        event.set()

    signal.connect(fired)
    try:
        yield
        loop.run_until_complete(asyncio.wait_for(event.wait(), timeout))
    finally:
        signal.disconnect(fired)


WindowFactory = Callable[..., MainWindow]


@contextlib.contextmanager
def window_of(
    loop: asyncio.AbstractEventLoop,
    registry_dir: Path | None,
    config_dir: Path,
    open_path: tuple[str, dict[str, str]] | None = None,
    *,
    complete: bool = True,
) -> Iterator[MainWindow]:
    """A shown window, not started (with ``complete=False``, its frame), closed afterwards with its tasks
    finished and embedders released."""
    window = create_window(registry_dir, config_dir, open_path=open_path, complete=complete)
    window.show()
    try:
        yield window
    finally:
        window.close()
        if window.completed:
            loop.run_until_complete(window.operations.wait_idle())
            loop.run_until_complete(window.aclose())
            window.services.chores.shutdown(wait=True)  # a chore still running holds the window's services
        window.deleteLater()
        # Now, not at some later test's loop: the window's memory goes with the test that opened it.
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def open_window(
    qapp: QApplication, loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[WindowFactory]:
    """``open_window(registry_dir)``: a shown, started window (``start=False`` to drive start-up yourself;
    ``open_path``: start on that folder's table, as ``recall-gui PATH`` does).

    Windows are closed, their tasks finished and their embedders released after the test.
    """
    with contextlib.ExitStack() as windows:

        def make(
            registry_dir: Path | None,
            *,
            config_dir: Path | None = None,
            start: bool = True,
            open_path: tuple[str, dict[str, str]] | None = None,
        ) -> MainWindow:
            window = windows.enter_context(
                window_of(loop, registry_dir, config_dir or tmp_path / "config", open_path)
            )
            if start:
                run(loop, window.start())
            return window

        yield make


@dataclass(frozen=True)
class FolderWindow:
    """A window with a folder another tool wrote opened by its path, and both folders' files as they were
    before the window opened (for the read-only checks)."""

    window: MainWindow
    folder: Path
    folder_before: dict[str, tuple[int, int, str]]
    registry_before: dict[str, tuple[int, int, str]]


@pytest.fixture
def langchain_folder(tmp_path: Path, passage_vectors: Any) -> Path:
    """A folder LangChain wrote: its table "vectorstore" of the passages (columns text, vector, metadata)."""
    folder = tmp_path / "langchain"
    write_langchain_table(folder, "vectorstore", passage_vectors)
    return folder


@pytest.fixture
def folder_window(
    kb: KnowledgeBase, langchain_folder: Path, open_window: WindowFactory, loop: asyncio.AbstractEventLoop
) -> FolderWindow:
    """The window on ``kb``'s registry with :func:`langchain_folder` opened by its path."""
    folder_before, registry_before = snapshot_tree(langchain_folder), snapshot_tree(kb.registry_dir)
    window = open_window(kb.registry_dir)
    assert run(loop, window.opened.open_place(str(langchain_folder)))
    return FolderWindow(window, langchain_folder, folder_before, registry_before)


@pytest.fixture
def two_table_folder(tmp_path: Path, passage_vectors: Any) -> Path:
    """A folder of two tables: "alpha" (LanceDB's columns, the 12 passages) and "beta" (LangChain's, 5)."""
    folder = tmp_path / "two"
    write_lance_table(folder, "alpha", tuple(PASSAGES), tuple(PASSAGES.values()), passage_vectors)
    write_langchain_table(folder, "beta", passage_vectors[:5])
    return folder
