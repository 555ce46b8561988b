"""The benchmark's own folders: every run of ``python -m bench`` has a cache, data, config and registry of
its own, never the user's.

What the app keeps between runs (a map, int8 codes, a staged model, settings) would otherwise land in the
user's folders, and be found again by the next run: a map read from the cache is shown without the first
picture the map benchmark times. Each run starts from empty folders under ``root`` (removed first), so its
figures are a fresh start's, and a user's own settings, models and registry change none of them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

#: Each setting the app, its model libraries or the platform's folders read, and its folder under the home.
FOLDERS = {
    "RECALL_GUI_CACHE_DIR": "cache",
    "RECALL_GUI_DATA_DIR": "data",
    "RECALL_GUI_CONFIG_DIR": "config",
    "RECALL_GUI_AGENT_LOG_DIR": "agent-log",
    "RECALL_REGISTRY_DIR": "registry",
    "XDG_CACHE_HOME": "xdg-cache",
    "XDG_CONFIG_HOME": "xdg-config",
    "XDG_DATA_HOME": "xdg-data",
    "HF_HOME": "hf",
    "HF_HUB_CACHE": "hf/hub",
    "FASTEMBED_CACHE_PATH": "fastembed",
}


@contextlib.contextmanager
def own_folders(root: Path) -> Iterator[Path]:
    """Point every setting of :data:`FOLDERS` into ``root`` (emptied first) for the block, in this process
    and the processes it starts; the settings are as they were afterwards, and ``root`` is removed."""
    shutil.rmtree(root, ignore_errors=True)
    before = {name: os.environ.get(name) for name in FOLDERS}
    for name, folder in FOLDERS.items():
        path = root / folder
        path.mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(path)
    try:
        yield root
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(root, ignore_errors=True)
