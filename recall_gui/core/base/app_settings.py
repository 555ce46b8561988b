"""The app's own settings that more than one process reads, as a small JSON file in the config dir.

The window writes it; ``recall-gui mcp``, started by an MCP client as a process of its own, reads it (Qt's
``window.ini`` is the window's alone). Today it holds the agent log's switch and size bound.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from recall_gui.core.base.atomic import write_text_atomic
from recall_gui.core.base.errors import RecallError
from recall_gui.core.base.paths import app_config_dir
from recall_gui.core.base.regular_files import read_regular_text

SETTINGS_FILE = "settings.json"
#: The most of ``settings.json`` read: it holds a few keys.
SETTINGS_MAX_BYTES = 1 << 20

MB = 1024 * 1024
#: The log's bound unless the user sets one: about 20,000 calls of five results.
DEFAULT_LOG_MAX_BYTES = 10 * MB
#: A bound below this could not hold a handful of records; above the top one the log stops being small.
MIN_LOG_MAX_BYTES = 4096
MAX_LOG_MAX_BYTES = 1024 * MB


class AppSettingsError(RecallError):
    """The settings file cannot be read or holds a value out of range."""


@dataclass(frozen=True)
class AppSettings:
    #: Whether ``recall-gui mcp`` records each ``tools/call`` in the agent log.
    agent_log: bool = True
    #: The most the agent log keeps on disk; the oldest calls go first.
    agent_log_max_bytes: int = DEFAULT_LOG_MAX_BYTES

    def with_changes(self, **changes: Any) -> AppSettings:
        return replace(self, **changes)


def _checked(data: Any, path: Path) -> AppSettings:
    if not isinstance(data, dict):
        raise AppSettingsError(f"{path} does not hold a JSON object")
    settings = AppSettings()
    enabled = data.get("agent_log", settings.agent_log)
    if not isinstance(enabled, bool):
        raise AppSettingsError(f'{path}: "agent_log" must be true or false, not {json.dumps(enabled)}')
    bound = data.get("agent_log_max_bytes", settings.agent_log_max_bytes)
    if (
        not isinstance(bound, int)
        or isinstance(bound, bool)
        or not MIN_LOG_MAX_BYTES <= bound <= MAX_LOG_MAX_BYTES
    ):
        raise AppSettingsError(
            f'{path}: "agent_log_max_bytes" must be a whole number of bytes from {MIN_LOG_MAX_BYTES} '
            f"to {MAX_LOG_MAX_BYTES}, not {json.dumps(bound)}"
        )
    return AppSettings(enabled, bound)


class SettingsStore:
    """``settings.json`` in the app's config dir (``RECALL_GUI_CONFIG_DIR`` moves it)."""

    def __init__(self, config_dir: Path | None = None) -> None:
        self.directory = Path(config_dir) if config_dir is not None else app_config_dir()

    @property
    def path(self) -> Path:
        return self.directory / SETTINGS_FILE

    def load(self) -> AppSettings:
        """The saved settings, the defaults when nothing was saved; raises :class:`AppSettingsError` for a
        file that cannot be read or holds a bad value (keys this version does not know are ignored)."""
        try:
            text = read_regular_text(self.path, SETTINGS_MAX_BYTES)
        except FileNotFoundError:
            return AppSettings()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            raise AppSettingsError(f"cannot read {self.path}: {reason}", hint=self._hint) from None
        try:
            data = json.loads(text)
        except ValueError as error:
            raise AppSettingsError(f"{self.path} is not valid JSON: {error}", hint=self._hint) from None
        try:
            return _checked(data, self.path)
        except AppSettingsError as error:
            raise AppSettingsError(error.message, hint=self._hint) from None

    @property
    def _hint(self) -> str:
        return f"Fix or delete {self.path}, or change the setting in the window's Agent log page."

    def save(self, settings: AppSettings) -> None:
        """Write ``settings`` atomically, keeping keys of the file this version does not know."""
        kept: dict[str, Any] = {}
        try:
            loaded = json.loads(read_regular_text(self.path, SETTINGS_MAX_BYTES))
            if isinstance(loaded, dict):
                kept = loaded
        except (OSError, ValueError):
            pass  # a missing or broken file is replaced by the settings the user just chose
        kept.update(asdict(settings))
        write_text_atomic(self.path, json.dumps(kept, indent=2) + "\n")
