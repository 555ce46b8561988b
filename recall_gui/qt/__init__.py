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

#: Qt paints on the GUI thread alone, unless the user chose otherwise. Qt's raster engine hands large fills
#: to a pool of helper threads and waits for them; on a busy 2-core machine the GUI thread then sleeps until
#: the scheduler gets round to a helper (4-6 ms stalls in the middle of a repaint were traced to it), while
#: the fills of a table and its scroll bar gain nothing from a second thread. Paging through a 1M-row table
#: went 10-15% faster without the pool, and its worst waits shrank. Read when Qt first paints, so setting it
#: here (before any window exists) is in time.
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
