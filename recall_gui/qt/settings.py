"""What the window remembers between runs, stored as an INI file in the app's config dir.

Keeping it beside the saved tool suffix (not in Qt's per-platform default location) means one directory
holds all of the app's state, and tests or a second profile (``RECALL_GUI_CONFIG_DIR``) never share it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from recall_gui.core.base import FileRefused, SettingsError, read_regular, set_aside

SETTINGS_FILE = "window.ini"
#: The most of ``window.ini`` read: sizes, choices and recent folders take a few kilobytes.
SETTINGS_MAX_BYTES = 4 << 20
#: What is appended to the name of a settings file Qt could not read, when it is moved aside.
DAMAGED_TAG = "damaged"


def open_settings(config_dir: Path) -> tuple[QSettings, SettingsError | None]:
    """The window's remembered settings, and what was wrong with them (``None`` when nothing was).

    Qt reads a damaged INI file as best it can and rewrites it on exit, losing what it did not
    understand; so a file that is not UTF-8 text, or that Qt reports as malformed, is moved aside first
    (``window.ini.damaged``) and the window starts with its defaults. A settings folder that cannot be
    made leaves the window without memory for this run; either way the window opens.
    """
    path = config_dir / SETTINGS_FILE
    try:
        config_dir.mkdir(parents=True, exist_ok=True)
        reason = _damage(path)
    except OSError as error:
        problem = SettingsError(
            f"the window's settings cannot be kept in {config_dir}: {error.strerror or error}",
            path=path,
            hint="The window opens with its default size and choices and will not remember them. Make that "
            "folder writable, or move the settings with RECALL_GUI_CONFIG_DIR.",
        )
        return QSettings(str(path), QSettings.Format.IniFormat), problem
    if reason is None:  # Qt reads it only once it is known to be a file of text
        settings = QSettings(str(path), QSettings.Format.IniFormat)
        if settings.status() is not QSettings.Status.FormatError:
            return settings, None
        reason = "Qt cannot read it as settings"
    try:
        kept = f"it is kept as {set_aside(path, DAMAGED_TAG).name}"
    except OSError as error:
        kept = f"it could not be moved aside ({error.strerror or error}) and will be replaced"
    problem = SettingsError(
        f"the window's settings file {path} was damaged ({reason}): {kept}",
        path=path,
        hint="The window opens with its default size and choices, and remembers them afresh.",
    )
    return QSettings(str(path), QSettings.Format.IniFormat), problem


def _damage(path: Path) -> str | None:
    """Why ``path`` cannot be a settings file, or ``None`` (also when it does not exist)."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = read_regular(path, SETTINGS_MAX_BYTES)
    except FileRefused as error:
        return error.strerror
    except FileNotFoundError:
        return "it is a symbolic link to nothing"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"it is not UTF-8 text: byte 0x{data[error.start]:02x} at position {error.start}"
    return None


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
