"""The agent log: what agents asked ``recall-gui mcp`` and what they got, one JSON line per ``tools/call``.

Files (in :func:`~recall_gui.core.base.paths.agent_log_dir`): ``agent-log.jsonl`` takes new calls; when it
would
grow past half the bound it becomes ``agent-log.1.jsonl`` (replacing the older one), so the two together
hold the newest calls within the bound. Several servers may append at once (an agent can start several):
every record is one ``write`` of a whole line to a file opened with ``O_APPEND``, so lines never interleave
and a crash leaves at most one partial last line, which the reader skips and reports. Rotation happens
under a lock file, checked again once held, so two servers never rotate the same file twice.

Recording is on unless the window's setting (``settings.json``) or ``RECALL_GUI_AGENT_LOG=off`` turns it
off. The server hands each record to :class:`CallLog`, whose thread writes it after the reply went out;
a record that cannot be written is reported on the server's stderr, never to the agent.
"""

from __future__ import annotations

import collections
import errno
import json
import logging
import os
import queue
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from recall_gui.core.base.app_settings import AppSettings, AppSettingsError, SettingsStore
from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.json_bounds import MAX_NESTING, too_deep
from recall_gui.core.base.json_output import json_text
from recall_gui.core.base.paths import agent_log_dir

LOG_FILE = "agent-log.jsonl"
OLDER_FILE = "agent-log.1.jsonl"
LOCK_FILE = "agent-log.lock"
SWITCH_ENV = "RECALL_GUI_AGENT_LOG"

_OFF = frozenset({"off", "0", "false", "no"})
_ON = frozenset({"on", "1", "true", "yes", ""})
#: How long a writer or reader waits for another process's rotation; it takes milliseconds.
LOCK_TIMEOUT_S = 10.0
#: How much of a query (and of an error) a record longer than half the bound keeps.
SHORTENED_TEXT_CHARS = 2000
SHORTENED_IDS = 200
#: The longest line written or read: a record with a query of the longest searched fits (``MAX_QUERY_CHARS``
#: in UTF-8); a longer one is shortened like one longer than half the bound.
MAX_RECORD_BYTES = 1 << 20
#: How much of the log the window holds: the newest calls whose lines take this much (tens of thousands).
SHOWN_LOG_BYTES = 64 << 20

#: A record holds the call's arguments one level down, and those are recorded within ``MAX_NESTING``.
RECORD_NESTING = MAX_NESTING + 1

logger = logging.getLogger(__name__)

#: What a file looked like: ``(inode, size, mtime_ns)``, ``None`` when absent.
Stamp = tuple[int, int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def now_iso() -> str:
    """The local time with its UTC offset, to the millisecond (``2025-06-01T14:03:22.123+02:00``)."""
    return datetime.now().astimezone().isoformat(timespec="milliseconds")


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


#: The client name the window's Agent view gives its MCP client: its calls are the window's, not an
#: agent's (records written before this constant existed carry the same name, so they are known too).
WINDOW_CLIENT = "recall-gui agent view"


@dataclass(frozen=True)
class CallRecord:
    """One ``tools/call``: who asked, what they sent, which ids came back (in order) or which error."""

    time: str
    client: str | None
    client_version: str | None
    tool: str
    #: The call's arguments exactly as received (``None`` when the call had none).
    arguments: Any
    result_ids: tuple[str, ...] = ()
    error: str | None = None
    embed_ms: float | None = None
    search_ms: float | None = None
    #: The version of the table the search read.
    table_version: int | None = None
    #: The query, ids or error were cut to keep the record within the log's bound.
    shortened: bool = False

    def __post_init__(self) -> None:
        # Microseconds are all a log needs; rounded here, a record reads back equal to the one written.
        for name in ("embed_ms", "search_ms"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, round(value, 3))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "time": self.time,
            "client": self.client,
            "client_version": self.client_version,
            "tool": self.tool,
            "arguments": self.arguments,
            "result_ids": list(self.result_ids),
            "error": self.error,
            "embed_ms": self.embed_ms,
            "search_ms": self.search_ms,
            "table_version": self.table_version,
        }
        if self.shortened:
            data["shortened"] = True
        return data

    def to_line(self) -> bytes:
        """The record as one line of UTF-8 JSON, newline included."""
        data = self.to_dict()
        try:
            text = json_text(data, ensure_ascii=False, separators=(",", ":"))
            return text.encode("utf-8") + b"\n"
        except UnicodeEncodeError:  # a lone surrogate in a query the harness refused: keep it escaped
            return json_text(data, separators=(",", ":")).encode("ascii") + b"\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CallRecord:
        """A record read back; raises ``ValueError`` for an object that is not one."""
        time, tool = data.get("time"), data.get("tool")
        if not isinstance(time, str) or not isinstance(tool, str):
            raise ValueError("not a call record")
        parse_time(time)
        ids = data.get("result_ids") or []
        if not isinstance(ids, list):
            raise ValueError("result_ids is not a list")
        version = data.get("table_version")
        return cls(
            time=time,
            client=_text_or_none(data.get("client")),
            client_version=_text_or_none(data.get("client_version")),
            tool=tool,
            arguments=data.get("arguments"),
            result_ids=tuple(str(item) for item in ids),
            error=_text_or_none(data.get("error")),
            embed_ms=_number_or_none(data.get("embed_ms")),
            search_ms=_number_or_none(data.get("search_ms")),
            table_version=version if isinstance(version, int) and not isinstance(version, bool) else None,
            shortened=data.get("shortened") is True,
        )

    # --- what the window and the command line show -----------------------------------------------------

    @property
    def when(self) -> datetime:
        return parse_time(self.time)

    def _argument(self, name: str) -> Any:
        return self.arguments.get(name) if isinstance(self.arguments, dict) else None

    @property
    def db_name(self) -> str | None:
        return _text_or_none(self._argument("db_name"))

    @property
    def query(self) -> str | None:
        return _text_or_none(self._argument("query"))

    @property
    def total_ms(self) -> float | None:
        if self.embed_ms is None or self.search_ms is None:
            return None
        return self.embed_ms + self.search_ms

    @property
    def from_window(self) -> bool:
        """Whether the window's Agent view made this call (not an agent): coverage and hubs leave it out."""
        return self.client == WINDOW_CLIENT

    @property
    def client_label(self) -> str:
        if not self.client:
            return "unnamed client"
        return f"{self.client} {self.client_version}" if self.client_version else self.client

    def shortened_to(self, max_bytes: int) -> CallRecord | None:
        """This record, or one with its query, error and ids cut so that its line fits ``max_bytes``;
        ``None`` when even that does not fit."""
        if len(self.to_line()) <= max_bytes:
            return self
        arguments = self.arguments
        if isinstance(arguments, dict):
            arguments = {
                key: value[:SHORTENED_TEXT_CHARS] if isinstance(value, str) else value
                for key, value in arguments.items()
            }
        elif isinstance(arguments, str | list):
            arguments = None  # not the tool's arguments anyway
        error = self.error[:SHORTENED_TEXT_CHARS] if self.error else self.error
        cut = CallRecord(
            self.time,
            (self.client or "")[:200] or None,
            (self.client_version or "")[:200] or None,
            self.tool[:200],
            arguments,
            self.result_ids[:SHORTENED_IDS],
            error,
            self.embed_ms,
            self.search_ms,
            self.table_version,
            shortened=True,
        )
        return cut if len(cut.to_line()) <= max_bytes else None


def parse_time(text: str) -> datetime:
    """An ISO 8601 date or time; one without a UTC offset is taken as local time."""
    moment = datetime.fromisoformat(text.strip())
    return moment if moment.tzinfo is not None else moment.astimezone()


def parse_since(text: str) -> datetime:
    """``--since`` as the user typed it; refused with the reason when it is not an ISO 8601 date or time."""
    try:
        return parse_time(text)
    except ValueError:
        raise InvalidInputError(
            f"--since {text!r} is not an ISO 8601 date or time",
            hint="Write it like 2025-06-01, 2025-06-01T14:30 or 2025-06-01T14:30:00+02:00 "
            "(without an offset it is your local time).",
        ) from None


# --- the files ---------------------------------------------------------------------------------------


class LogFiles:
    """The log's files in one directory (the app's data dir unless ``RECALL_GUI_AGENT_LOG_DIR`` is set)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else agent_log_dir()

    @property
    def current(self) -> Path:
        return self.directory / LOG_FILE

    @property
    def older(self) -> Path:
        return self.directory / OLDER_FILE

    @property
    def lock_path(self) -> Path:
        return self.directory / LOCK_FILE

    def stamps(self) -> tuple[Stamp, Stamp]:
        """Cheap to compare: a change means calls were added or the files rotated."""
        return (_stamp(self.older), _stamp(self.current))

    def _lock(self) -> Any:
        from filelock import FileLock

        if self.lock_path.is_symlink():  # filelock refuses it too, but says only "too many levels"
            raise _link_refused(self.lock_path)
        return FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S)

    def append(self, line: bytes, max_bytes: int) -> None:
        """Append one line (a whole record, newline included) with a single write, rotating first when
        the line would take the current file past half of ``max_bytes``. Raises ``OSError``."""
        self.directory.mkdir(parents=True, exist_ok=True)
        half = max_bytes // 2
        fd = _open_for_append(self.current)
        try:
            if os.fstat(fd).st_size + len(line) <= half:
                _write_line(fd, line)
                return
        finally:
            os.close(fd)
        with self._lock():
            # Another server may have rotated meanwhile: decide again on what the file holds now.
            size = self.current.stat().st_size if self.current.exists() else 0
            if size > 0 and size + len(line) > half:
                os.replace(self.current, self.older)
            fd = _open_for_append(self.current)
            try:
                _write_line(fd, line)
            finally:
                os.close(fd)

    def read(self) -> LogContents:
        """Every record, oldest first, with a note for each line that is not a whole record (all in
        memory: :meth:`records` streams them)."""
        notes: list[str] = []
        records = tuple(self.records(notes))
        return LogContents(records, tuple(notes))

    def newest(self, max_bytes: int = SHOWN_LOG_BYTES) -> LogContents:
        """The newest records whose lines take at most ``max_bytes`` together, oldest first, read as a
        stream (what a window can hold of a log of any size); ``dropped`` counts the older ones left
        out."""
        notes: list[str] = []
        kept: collections.deque[tuple[CallRecord, int]] = collections.deque()
        held = dropped = 0
        for record, size in self._sized_records(notes):
            kept.append((record, size))
            held += size
            while held > max_bytes and len(kept) > 1:
                held -= kept.popleft()[1]
                dropped += 1
        return LogContents(tuple(record for record, _size in kept), tuple(notes), dropped)

    def records(self, notes: list[str]) -> Iterator[CallRecord]:
        """Every record, oldest first, read a line at a time as the iteration goes (a log of a gigabyte
        takes no more memory than its longest line); each line that is not a whole record is skipped and
        a note about it appended to ``notes``. Reading creates nothing: without a log there is nothing to
        lock. Both files are opened under the lock, so a rotation meanwhile is not seen."""
        for record, _size in self._sized_records(notes):
            yield record

    def _sized_records(self, notes: list[str]) -> Iterator[tuple[CallRecord, int]]:
        """Each record with the length of its line (see :meth:`records`)."""
        if not (os.path.lexists(self.current) or os.path.lexists(self.older)):
            return
        try:
            lock = self._lock()
            lock.acquire()
        except (OSError, TimeoutError):
            lock = None  # a folder we may not write to, or a stuck writer: read without the lock
        opened: list[tuple[Path, BinaryIO]] = []
        try:
            try:
                for path in (self.older, self.current):
                    try:
                        opened.append((path, _open_to_read(path)))
                    except FileNotFoundError:
                        continue
                    except OSError as error:
                        if error.errno != errno.ELOOP:
                            raise
                        notes.append(f"{error.strerror}: not read")
            finally:
                if lock is not None:
                    lock.release()
            for path, file in opened:
                yield from _read_records(path, file, notes)
        finally:
            for _path, file in opened:
                file.close()


#: Never through a link: the log holds text agents chose, and must not land in whatever a link names.
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _link_refused(path: Path) -> OSError:
    return OSError(
        errno.ELOOP,
        f"{path} is a symbolic link; the agent log never writes or reads through one "
        "(delete the link: the log starts a new file there)",
    )


def _open_nofollow(path: Path, flags: int, mode: int = 0o600) -> int:
    try:
        return os.open(path, flags | _NO_FOLLOW | getattr(os, "O_BINARY", 0), mode)
    except OSError as error:
        if error.errno == errno.ELOOP or (error.errno == errno.EMLINK and path.is_symlink()):
            raise _link_refused(path) from None
        raise


def _open_for_append(path: Path) -> int:
    # Only the user may read what their agents asked.
    return _open_nofollow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)


def _write_line(fd: int, line: bytes) -> None:
    """One ``write`` of the whole line; a newline first when the file ends in a line cut short by a crash
    (an empty line between two records is harmless, a record glued to a broken one would be lost)."""
    size = os.fstat(fd).st_size
    if size > 0 and _byte_at(fd, size - 1) != b"\n":
        line = b"\n" + line
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(f"only {written} of {len(line)} bytes could be written (disk full?)")


def _byte_at(fd: int, offset: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows; the write that follows still goes to the end (O_APPEND)
    return os.read(fd, 1)


def _open_to_read(path: Path) -> BinaryIO:
    return os.fdopen(_open_nofollow(path, os.O_RDONLY), "rb")


def _read_records(path: Path, file: BinaryIO, notes: list[str]) -> Iterator[tuple[CallRecord, int]]:
    number = 0
    while line := file.readline(MAX_RECORD_BYTES + 1):
        number += 1
        if len(line) > MAX_RECORD_BYTES:
            while (rest := file.readline(MAX_RECORD_BYTES)) and not rest.endswith(b"\n"):
                pass  # the rest of a line too long to keep: never held whole
            notes.append(f"{path.name}: line {number} is longer than {MAX_RECORD_BYTES:,} bytes: skipped")
            continue
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            deep = too_deep(value, RECORD_NESTING) is not None
        except RecursionError:  # deeper than Python's reader goes
            deep = True
        except ValueError:
            value, deep = None, False
        if deep:  # nothing could write or show it back: skipped like any other line that is no record
            notes.append(
                f"{path.name}: line {number} is nested too deeply to read "
                f"(more than {MAX_NESTING} levels in its arguments): skipped"
            )
            continue
        try:
            if not isinstance(value, dict):
                raise ValueError("not an object")
            yield CallRecord.from_dict(value), len(line)
        except ValueError:
            notes.append(
                f"{path.name}: the last line is incomplete (a write cut short): skipped"
                if not line.endswith(b"\n")
                else f"{path.name}: line {number} is not a call record: skipped"
            )


@dataclass(frozen=True)
class LogContents:
    """The records read, oldest first, and what was skipped."""

    records: tuple[CallRecord, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Older records left out to stay within a bound (:meth:`LogFiles.newest`).
    dropped: int = 0


def select(
    records: Iterable[CallRecord], *, db_name: str | None = None, since: datetime | None = None
) -> Iterator[CallRecord]:
    """The records of one database (by the ``db_name`` the agent sent) and/or from a time on, as
    ``records`` yields them."""
    for record in records:
        if db_name is not None and record.db_name != db_name:
            continue
        if since is not None and record.when < since:
            continue
        yield record


# --- whether to record ----------------------------------------------------------------------------------


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
        stamp = _stamp(self.store.path)
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


def records_json(records: Iterable[CallRecord]) -> str:
    """One JSON object per line, as the log stores them (for ``recall-gui log --json``)."""
    return "".join(record.to_line().decode("utf-8") for record in records)
