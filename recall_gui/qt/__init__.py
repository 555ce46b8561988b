"""The window: everything that imports PySide6 or qasync lives here.

``create_window`` is the entry point for tests and scripts: it builds the main window in-process, while
the caller owns the ``QApplication`` and the qasync event loop (``recall_gui.qt.app.run_app`` does both
for the ``recall-gui`` command).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recall_gui.qt.main_window import MainWindow

#: Qt paints on the GUI thread alone, unless the user chose otherwise: with the raster engine's helper
#: threads a repaint waits for the scheduler on a busy machine, for fills that gain nothing from them
#: (docs/PERFORMANCE.md#qt-qt_no_gui_threadpool). Read when Qt first paints, so setting it here is in time.
os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def create_window(
    registry_dir: str | os.PathLike[str] | None = None, config_dir: str | os.PathLike[str] | None = None
) -> MainWindow:
    """The main window for ``registry_dir`` (default: ``--registry`` rules: $RECALL_REGISTRY_DIR, cosh's,
    else the app's own) keeping its settings in ``config_dir`` (default: the app's config dir).

    Nothing runs until the caller starts it: ``window.begin()`` (or ``await window.start()``) loads the
    libraries, checks the databases and opens one; with the app's own empty registry it builds the demo.
    """
    from recall_gui.core.paths import app_config_dir, resolve_registry_dir
    from recall_gui.qt.main_window import MainWindow

    location = resolve_registry_dir(registry_dir)
    config = Path(config_dir).expanduser() if config_dir is not None else app_config_dir()
    return MainWindow(location, config)
