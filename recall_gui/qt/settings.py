"""What the window remembers between runs, stored as an INI file in the app's config dir.

Keeping it beside the saved tool suffix (not in Qt's per-platform default location) means one directory
holds all of the app's state, and tests or a second profile (``RECALL_GUI_CONFIG_DIR``) never share it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

SETTINGS_FILE = "window.ini"


def open_settings(config_dir: Path) -> QSettings:
    config_dir.mkdir(parents=True, exist_ok=True)
    return QSettings(str(config_dir / SETTINGS_FILE), QSettings.Format.IniFormat)


class WindowMemory:
    """Typed access to the remembered values."""

    GEOMETRY = "window/geometry"
    STATE = "window/state"
    SPLITTER = "window/splitter"
    DESCRIPTION_SPLITTER = "window/description_splitter"
    PAGE = "window/page"
    DATABASE = "search/database"
    LIMIT = "search/limit"

    def __init__(self, settings: QSettings) -> None:
        self.settings = settings

    def bytes(self, key: str) -> QByteArray | None:
        value = self.settings.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def text(self, key: str) -> str | None:
        value = self.settings.value(key)
        return value if isinstance(value, str) and value else None

    def integer(self, key: str, default: int) -> int:
        value = self.settings.value(key)
        try:
            return int(value) if value is not None else default
        except (TypeError, ValueError):
            return default

    def set(self, key: str, value: object) -> None:
        self.settings.setValue(key, value)

    def sync(self) -> None:
        self.settings.sync()
