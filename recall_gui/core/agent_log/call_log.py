"""Recording agents' calls: whether to record (the window's setting, ``RECALL_GUI_AGENT_LOG``) and the
server's recorder, whose thread writes each record after the reply went out; a record that cannot be
written is reported on the server's stderr, never to the agent."""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Mapping
from pathlib import Path

from recall_gui.core.agent_log.agent_log import LogFiles, Stamp, file_stamp
from recall_gui.core.agent_log.call_record import MAX_RECORD_BYTES, CallRecord
from recall_gui.core.base.app_settings import AppSettings, AppSettingsError, SettingsStore

SWITCH_ENV = "RECALL_GUI_AGENT_LOG"

_OFF = frozenset({"off", "0", "false", "no"})
_ON = frozenset({"on", "1", "true", "yes", ""})

logger = logging.getLogger(__name__)


def switch_from_env(value: str | None) -> bool:
    """``RECALL_GUI_AGENT_LOG``: ``off`` (or 0, false, no) turns recording off; unset, ``on`` (1, true,
    yes) leave it to the window's setting. Raises :class:`AppSettingsError` for anything else."""
    if value is None or value.strip().lower() in _ON:
        return True
    if value.strip().lower() in _OFF:
        return False
    raise AppSettingsError(
        f"{SWITCH_ENV}={value!r} is neither on nor off",
        hint=f"Set {SWITCH_ENV}=off to stop recording agents' calls, or leave it unset.",
    )


class LogSwitch:
    """Whether to record now, and within which bound: the environment (read once) and the settings file
    (read again whenever it changes, so the window's switch reaches running servers)."""

    def __init__(self, store: SettingsStore, env_on: bool = True) -> None:
        self.store = store
        self.env_on = env_on
        self._stamp: Stamp = None
        self._loaded: AppSettings | None = None
        self._reported: str | None = None

    @classmethod
    def from_environment(cls, store: SettingsStore, environ: Mapping[str, str] | None = None) -> LogSwitch:
        """The switch of a server started with ``environ`` (this process's by default); a value of
        ``RECALL_GUI_AGENT_LOG`` that means neither on nor off is reported and taken as off."""
        value = (os.environ if environ is None else environ).get(SWITCH_ENV)
        try:
            env_on = switch_from_env(value)
        except AppSettingsError as error:
            logger.warning("%s; not recording calls. %s", error.message, error.hint)
            env_on = False
        return cls(store, env_on)

    def recording(self) -> AppSettings | None:
        """The settings to record with, or ``None`` when recording is off (a settings file that cannot be
        read switches it off too, and is reported once)."""
        if not self.env_on:
            return None
        stamp = file_stamp(self.store.path)
        if stamp != self._stamp or self._loaded is None:
            self._stamp = stamp
            try:
                self._loaded = self.store.load()
                self._reported = None
            except AppSettingsError as error:
                self._loaded = AppSettings(agent_log=False)
                if error.message != self._reported:
                    self._reported = error.message
                    logger.warning("%s; not recording calls. %s", error.message, error.hint)
        return self._loaded if self._loaded.agent_log else None


class CallLog:
    """The server's recorder: records handed to :meth:`submit` are written by a thread of their own, so a
    reply never waits for the disk, and :meth:`close` writes what is still queued."""

    def __init__(self, files: LogFiles, switch: LogSwitch) -> None:
        self.files = files
        self.switch = switch
        self._queue: queue.SimpleQueue[CallRecord | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def for_server(cls, config_dir: Path | None = None, log_dir: Path | None = None) -> CallLog:
        return cls(LogFiles(log_dir), LogSwitch.from_environment(SettingsStore(config_dir)))

    def describe(self) -> str:
        """Whether and where calls are recorded, for the server's log at start."""
        if not self.switch.env_on:
            return f"not recording agents' calls ({SWITCH_ENV} is off)"
        if self.switch.recording() is None:
            return f"not recording agents' calls (switched off in {self.switch.store.path})"
        return (
            f"recording agents' calls in {self.files.current} "
            f"(switch it off in the window's Agent log page, or with {SWITCH_ENV}=off)"
        )

    def submit(self, record: CallRecord) -> None:
        """Queue ``record``; never raises, never blocks."""
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="recall-gui-agent-log", daemon=True)
                self._thread.start()
        self._queue.put(record)

    def _run(self) -> None:
        while (record := self._queue.get()) is not None:
            self.write(record)

    def write(self, record: CallRecord) -> bool:
        """Write one record now if recording is on; ``True`` if it was written. Failures are logged."""
        try:
            settings = self.switch.recording()
            if settings is None:
                return False
            fitted = record.shortened_to(min(settings.agent_log_max_bytes // 2, MAX_RECORD_BYTES))
            if fitted is None:
                logger.warning("a call record is too long for the agent log's bound: not recorded")
                return False
            self.files.append(fitted.to_line(), settings.agent_log_max_bytes)
        except Exception as error:  # the log must never take the server down
            logger.warning("cannot record the call in %s: %s", self.files.current, error)
            return False
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (waiting at most ``timeout`` seconds) and stop the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is None:
            return
        self._queue.put(None)
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("the agent log was still writing after %.0f s; some calls may be missing", timeout)
