"""``recall-gui`` without arguments: the window, shown at once, with the slow libraries loading behind it.

Start-up order matters for how fast the window is usable: only PySide6, qasync and the light part of the
core are imported before the window is shown; LanceDB, PyArrow, NumPy, httpx and fastembed load on a
worker thread afterwards (:mod:`recall_gui.core.base.warmup`), while the user can already type.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from recall_gui.core.base import faster_pyside_module_check
from recall_gui.qt.system_libraries import libraries_problem

if TYPE_CHECKING:
    from recall_gui.qt.main_window import MainWindow

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
#: The menu entry's name without ``.desktop`` (packaging/linux/): Wayland compositors and docks match the
#: running window to its entry, and so to its name and icon, through it.
DESKTOP_FILE_NAME = "recall-gui"


def display_problem(environ: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why no window can be opened here (Qt would abort with a core dump instead), or ``None``."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or any(environ.get(name) for name in DISPLAY_VARIABLES):
        return None
    return (
        "error: no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set).\n"
        "hint: run recall-gui inside a desktop session (or ssh -X), or use the command line without a "
        "window: `recall-gui search`, `recall-gui list`, `recall-gui tool` (see `recall-gui --help`)."
    )


def configure_qt_process() -> None:
    """Before the first window: the process's settings (:func:`recall_gui.runtime.configure_process`), and
    Qt paints on the GUI thread alone unless the user chose otherwise: its raster engine's helper threads
    made a repaint wait for the scheduler on small machines
    (docs/PERFORMANCE_LOG.md#qt-qt_no_gui_threadpool)."""
    from recall_gui.runtime import configure_process

    configure_process()
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def run_app(
    registry_dir: str | None = None,
    *,
    smoke: bool = False,
    open_path: tuple[str, Mapping[str, str]] | None = None,
) -> int:
    """Open the window on ``registry_dir`` (or the default registry) and run until it is closed; with
    ``open_path``, on that LanceDB folder or URI (with its storage options) instead of a registered database.

    With ``smoke``, check that the window works (:mod:`recall_gui.qt.smoke`) and quit: 0 if it does.
    """
    problem = display_problem() or libraries_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    configure_qt_process()

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    faster_pyside_module_check()  # before the window's modules (and qasync's) are imported
    import qasync

    from recall_gui.qt import create_window
    from recall_gui.qt.icons import app_icon

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("recall-gui")
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # the loop below ends the app, after cleaning up
    window = create_window(registry_dir, open_path=open_path)
    outcome = 0

    async def main() -> None:
        nonlocal outcome
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
        window.show()
        # A window manager activates a new window; without one (a bare X server, a kiosk session) the
        # window would stay inactive and none of its keyboard shortcuts would fire.
        window.raise_()
        window.activateWindow()
        window.focus_query()
        start = window.begin()
        if smoke:
            outcome = await _smoke(window, start)
            window.close()
        await closed.wait()
        window.operations.cancel_all()
        await window.operations.wait_idle()
        await window.aclose()

    # Ctrl+C in the terminal closes the window; the timer lets Python see the signal while Qt runs.
    signal.signal(signal.SIGINT, lambda *_: window.close())
    tick = QTimer()
    tick.start(250)
    tick.timeout.connect(lambda: None)
    # The loop is driven by hand rather than by asyncio.run: its clean-up (a thread that shuts down the
    # default executor) is foreign to qasync and makes Qt complain at exit.
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main())
    except RuntimeError as error:  # Qt left its loop on its own (the display went away)
        print(f"error: the window closed unexpectedly: {error}", file=sys.stderr)
        return 1
    finally:
        tick.stop()
        loop.close()
    return outcome


async def _smoke(window: MainWindow, start: asyncio.Task[Any]) -> int:
    from recall_gui.qt.smoke import SMOKE_TIMEOUT, SmokeFailure, smoke_check

    try:
        report = await smoke_check(window, start, SMOKE_TIMEOUT)
    except SmokeFailure as failure:
        print(f"smoke: failed: {failure}", file=sys.stderr)
        return 1
    print(f"smoke: ok: {report.summary()}", file=sys.stderr)
    return 0
