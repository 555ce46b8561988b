"""``recall-gui`` without arguments: the window, shown at once, with the slow libraries loading behind it.

Start-up order matters for how fast the window is usable: only PySide6 and the light part of the core are
imported before the window's frame is shown (``qt/window/first_frame.py``); asyncio, qasync and the pages
once it is on screen; LanceDB, PyArrow, NumPy, httpx and fastembed on a worker thread afterwards
(:mod:`recall_gui.core.base.warmup`), while the user can already type.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from recall_gui.core.base import faster_pyside_module_check
from recall_gui.qt.system_libraries import libraries_problem

if TYPE_CHECKING:
    import asyncio

    from PySide6.QtWidgets import QApplication

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
    shown = _show_first_frame(registry_dir, open_path)
    if shown is None:  # closed while it came up
        return 0
    app, window = shown
    import asyncio

    import qasync
    from PySide6.QtCore import QTimer

    window.complete()
    outcome = 0

    async def main() -> None:
        nonlocal outcome
        closed = asyncio.Event()
        app.lastWindowClosed.connect(closed.set)
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


def _show_first_frame(
    registry_dir: str | None, open_path: tuple[str, Mapping[str, str]] | None
) -> tuple[QApplication, MainWindow] | None:
    """The app, and its window shown as its frame and on screen; ``None`` if it was closed meanwhile."""
    from PySide6.QtWidgets import QApplication

    faster_pyside_module_check()  # before the window's modules (and qasync's) are imported
    from recall_gui.qt import create_window
    from recall_gui.qt.icons import app_icon
    from recall_gui.qt.window.first_frame import show_until_on_screen

    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("recall-gui")
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # run_app's loop ends the app, after cleaning up
    window = create_window(registry_dir, open_path=open_path, complete=False)
    window.focus_query()
    show_until_on_screen(app, window)
    return (app, window) if window.isVisible() else None


async def _smoke(window: MainWindow, start: asyncio.Task[Any]) -> int:
    from recall_gui.qt.smoke import SMOKE_TIMEOUT, SmokeFailure, smoke_check

    try:
        report = await smoke_check(window, start, SMOKE_TIMEOUT)
    except SmokeFailure as failure:
        print(f"smoke: failed: {failure}", file=sys.stderr)
        return 1
    print(f"smoke: ok: {report.summary()}", file=sys.stderr)
    return 0
