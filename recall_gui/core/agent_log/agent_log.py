"""The agent log: what agents asked ``recall-gui mcp`` and what they got, one JSON line per ``tools/call``
(a :class:`~recall_gui.core.agent_log.call_record.CallRecord`); its files, written and read.

Files (in :func:`~recall_gui.core.base.paths.agent_log_dir`): ``agent-log.jsonl`` takes new calls; when it
would grow past half the bound it becomes ``agent-log.1.jsonl`` (replacing the older one), so the two
together hold the newest calls within the bound. Several servers may append at once (an agent can start
several): every record is one ``write`` of a whole line to a file opened with ``O_APPEND``, so lines never
interleave and a crash leaves at most one partial last line, which the reader skips and reports. Rotation
happens under a lock file, checked again once held, so two servers never rotate the same file twice.

Whether to record, and the server's recorder: :mod:`.call_log`.
"""

from __future__ import annotations

import collections
import errno
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from recall_gui.core.agent_log.call_record import MAX_RECORD_BYTES, RECORD_NESTING, CallRecord
from recall_gui.core.base.json_bounds import MAX_NESTING, too_deep
from recall_gui.core.base.paths import agent_log_dir
from recall_gui.core.base.regular_files import FileRefused, open_regular

LOG_FILE = "agent-log.jsonl"
OLDER_FILE = "agent-log.1.jsonl"
LOCK_FILE = "agent-log.lock"
#: How long a writer or reader waits for another process's rotation; it takes milliseconds.
LOCK_TIMEOUT_S = 10.0
#: How much of the log the window holds: the newest calls whose lines take this much (tens of thousands).
SHOWN_LOG_BYTES = 64 << 20

#: What a file looked like: ``(inode, size, mtime_ns)``, ``None`` when absent.
Stamp = tuple[int, int, int] | None


def file_stamp(path: Path) -> Stamp:
    """``path``'s :data:`Stamp` now."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


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
        return (file_stamp(self.older), file_stamp(self.current))

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
                    except FileRefused as error:
                        notes.append(str(error))
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
    fd = _open_nofollow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):  # a FIFO would take lines until its buffer fills, then hold the writer
        os.close(fd)
        raise FileRefused(path, "it is not a regular file; the agent log writes only to one")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return fd


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
    try:
        return open_regular(path, follow_links=False)
    except FileRefused:
        raise
    except OSError as error:
        if error.errno == errno.ELOOP or (error.errno == errno.EMLINK and path.is_symlink()):
            raise _link_refused(path) from None
        raise


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
            # Each level opens with a bracket: a line with few brackets needs no walk (most of a read).
            brackets = line.count(b"{") + line.count(b"[")
            deep = brackets > RECORD_NESTING and too_deep(value, RECORD_NESTING) is not None
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
