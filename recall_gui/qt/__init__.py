"""The window: everything that imports PySide6 or qasync lives here.

``create_window`` is the entry point for tests and scripts: it builds the main window in-process, while
the caller owns the ``QApplication`` and the qasync event loop (``recall_gui.qt.app.run_app`` does both
for the ``recall-gui`` command).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from recall_gui.core.base import app_config_dir, resolve_registry_dir

if TYPE_CHECKING:
    from recall_gui.qt.main_window import MainWindow


def create_window(
    registry_dir: str | os.PathLike[str] | None = None,
    config_dir: str | os.PathLike[str] | None = None,
    open_path: tuple[str, Mapping[str, str]] | None = None,
    *,
    complete: bool = True,
) -> MainWindow:
    """The main window for ``registry_dir`` (default: ``--registry`` rules: $RECALL_REGISTRY_DIR, cosh's,
    else the app's own) keeping its settings in ``config_dir`` (default: the app's config dir); with
    ``open_path`` (a folder or URI and its storage options), start on that folder's table instead. With
    ``complete=False``, its frame only, until ``window.complete()`` (as ``recall-gui`` shows it).

    Nothing runs until the caller starts it: ``window.begin()`` (or ``await window.start()``) loads the
    libraries, checks the databases and opens one; with the app's own empty registry it builds the demo.
    """
    from recall_gui.qt.main_window import MainWindow

    location = resolve_registry_dir(registry_dir)
    config = Path(config_dir).expanduser() if config_dir is not None else app_config_dir()
    return MainWindow(location, config, open_path, complete=complete)
