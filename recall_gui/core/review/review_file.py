"""A review file: the verdicts on one database's entries, one JSON line each, only ever appended to.

By default ``<data>/reviews/<database>.jsonl`` in the app's data folder (``RECALL_GUI_DATA_DIR``); a
team may keep one beside its corpus instead and name it. Several processes may mark at once: each record
is one ``write`` of a whole line to a descriptor opened with ``O_APPEND``, under a lock file beside the
review file, so nothing is lost or interleaved. A line that is not a record is reported (file and line
number) and left where it is: the file is never rewritten.
"""

from __future__ import annotations

import errno
import getpass
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from recall_gui.core.base.errors import InvalidInputError
from recall_gui.core.base.output_paths import output_problem
from recall_gui.core.base.paths import app_data_dir
from recall_gui.core.base.regular_files import FileRefused, open_regular
from recall_gui.core.review.records import ReviewRecord

if TYPE_CHECKING:  # NumPy and Arrow load when a file is read, not when the command line starts
    from recall_gui.core.review.record_table import RecordTable

#: Who marks, when ``--who`` does not say (else the operating system's user name).
WHO_ENV = "RECALL_GUI_REVIEWER"
REVIEWS_FOLDER = "reviews"
SUFFIX = ".jsonl"
LOCK_SUFFIX = ".lock"
#: How long a writer waits for another process's write (each takes microseconds).
LOCK_TIMEOUT_S = 10.0
#: The longest line read as a record (a note is bounded far below it).
MAX_LINE_BYTES = 1 << 20
#: The largest review file read (a million verdicts take about 300 MB).
MAX_FILE_BYTES = 4 << 30
#: The longest note a verdict takes.
MAX_NOTE_CHARS = 10_000

_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name_for(db_name: str) -> str:
    """The review file's name for a database: its name when that is a plain lowercase file name, else
    the name with every other character made ``_`` and 8 hex digits of its sha256 (so two names never
    share a file, on a file system that ignores case too)."""
    if _PLAIN_NAME.fullmatch(db_name) and not db_name.endswith("."):
        return db_name + SUFFIX
    safe = _UNSAFE.sub("_", db_name).strip("._")[:80] or "database"
    return f"{safe}-{hashlib.sha256(db_name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}{SUFFIX}"


def default_review_path(db_name: str) -> Path:
    """Where the verdicts on ``db_name`` are kept unless the user names a file."""
    return app_data_dir() / REVIEWS_FOLDER / file_name_for(db_name)


def reviewer(explicit: str | None = None) -> str:
    """Who marks: ``explicit`` (``--who``), else ``$RECALL_GUI_REVIEWER``, else the user name."""
    if explicit is not None:
        if not explicit.strip():
            raise InvalidInputError(
                "--who was given an empty name", hint="Name the reviewer, or leave it out."
            )
        return explicit.strip()
    from_env = os.environ.get(WHO_ENV, "").strip()
    if from_env:
        return from_env
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name known to the system (a bare container)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


@dataclass(frozen=True)
class DamagedLine:
    """A line of a review file that is not a record: where, and why (it is left in the file)."""

    path: Path
    number: int
    reason: str

    def text(self) -> str:
        return f"{self.path}: line {self.number} is not a review record ({self.reason}): kept, not read"


@dataclass(frozen=True)
class FileContents:
    """The records of a review file in file order, its damaged lines, and how far it was read: ``end``
    bytes, ``lines`` whole lines (a last line without its newline is reported but read again next time,
    when a writer may have finished it)."""

    table: RecordTable
    damaged: tuple[DamagedLine, ...] = ()
    end: int = 0
    lines: int = 0
    #: Read from the first byte (the file was new, or shorter than where the last read ended: replaced).
    from_start: bool = True

    @property
    def records(self) -> tuple[ReviewRecord, ...]:
        """Every record as an object (for a few records: a large file's are worked with as columns,
        :attr:`table`)."""
        return tuple(self.table.record(row) for row in range(len(self.table)))


def parse_lines(path: Path, raw: bytes, *, start: int = 0, lines_before: int = 0) -> FileContents:
    """The records of ``raw``, a review file's bytes from byte ``start`` on (``path`` names it in reports;
    line numbers count on from ``lines_before``)."""
    from recall_gui.core.review.record_table import RecordTable, read_json_records

    whole = raw.rfind(b"\n") + 1
    end, lines = start + whole, lines_before + raw.count(b"\n")
    if raw.endswith(b"\n") or not raw or raw.isspace():  # a line cut short is reported below, not here
        fast = read_json_records(raw)
        if fast is not None:
            return FileContents(fast, (), end, lines, from_start=start == 0)
    records: list[ReviewRecord] = []
    damaged: list[DamagedLine] = []
    pieces = raw.split(b"\n")
    cut_short = pieces[-1] != b""  # the last line has no newline: a write cut short, or under way
    for index, line in enumerate(pieces):
        if not line.strip():
            continue
        number = lines_before + index + 1
        read = read_line(line)
        if isinstance(read, ReviewRecord):
            records.append(read)
            continue
        if cut_short and index == len(pieces) - 1:
            read = f"the last line is incomplete, a write cut short? ({read})"
        damaged.append(DamagedLine(path, number, read))
    return FileContents(RecordTable.of(records), tuple(damaged), end, lines, from_start=start == 0)


def read_line(line: bytes) -> ReviewRecord | str:
    """One line as a record, or why it is not one."""
    if len(line) > MAX_LINE_BYTES:
        return f"longer than {MAX_LINE_BYTES:,} bytes"
    try:
        value = json.loads(line)
    except RecursionError:
        return "nested too deeply"
    except ValueError:
        return "not JSON"
    if not isinstance(value, dict):
        return "not a JSON object"
    try:
        return ReviewRecord.from_dict(value)
    except ValueError as error:
        return str(error)


class ReviewFile:
    """One review file: read whole, appended to a record at a time."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @property
    def lock_path(self) -> Path:
        return self.path.with_name(self.path.name + LOCK_SUFFIX)

    def check_writable(self) -> None:
        """Refuse a place a review file must not be written (a folder, a FIFO, inside a knowledge base)."""
        problem = output_problem(self.path, review_file=True)
        if problem is not None:
            raise InvalidInputError(
                f"the review file {self.path} cannot be used: {problem}",
                hint="Name a review file outside every knowledge base (or leave --file out).",
            )

    def read(self, start: int = 0, lines_before: int = 0) -> FileContents:
        """The records from byte ``start`` on (a previous read's ``end``), in file order, and the damaged
        lines; a file that does not exist holds none, a file shorter than ``start`` is read whole."""
        try:
            with open_regular(self.path, cap=MAX_FILE_BYTES) as file:
                size = os.fstat(file.fileno()).st_size
                if size < start:  # replaced or cut: read it afresh
                    start, lines_before = 0, 0
                file.seek(start)
                raw = file.read(MAX_FILE_BYTES - start + 1)
        except FileNotFoundError:
            return parse_lines(self.path, b"")
        except FileRefused as refused:
            raise InvalidInputError(
                f"the review file {self.path} cannot be read: {refused.strerror}"
            ) from None
        except OSError as error:
            raise InvalidInputError(
                f"the review file {self.path} cannot be read ({error.strerror or error})"
            ) from None
        return parse_lines(self.path, raw, start=start, lines_before=lines_before)

    def append(self, record: ReviewRecord) -> None:
        """Add one record at the end, as one write, under the lock (raises :class:`InvalidInputError` when
        the file cannot be written)."""
        self.check_writable()
        line = record.to_line()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S):
                fd = os.open(
                    self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644
                )
                try:
                    _write_line(fd, line)
                finally:
                    os.close(fd)
        except Timeout:
            raise InvalidInputError(
                f"the review file {self.path} stayed locked for {LOCK_TIMEOUT_S:g} s: nothing was written",
                hint=f"Another program holds {self.lock_path}; try again.",
            ) from None
        except OSError as error:
            raise InvalidInputError(
                f"the verdict could not be written to {self.path} ({error.strerror or error})",
                hint="Nothing was written; check the folder's permissions and free space.",
            ) from None


def _write_line(fd: int, line: bytes) -> None:
    """One ``write`` of the whole line; a newline first when the file ends in a line cut short (a record
    glued to a broken line would be lost with it)."""
    size = os.fstat(fd).st_size
    if size > 0 and _last_byte(fd, size) != b"\n":
        line = b"\n" + line
    written = os.write(fd, line)
    if written != len(line):
        raise OSError(errno.ENOSPC, f"only {written} of {len(line)} bytes could be written")


def _last_byte(fd: int, size: int) -> bytes:
    if hasattr(os, "pread"):
        return os.pread(fd, 1, size - 1)
    os.lseek(fd, size - 1, os.SEEK_SET)  # Windows; the write that follows still goes to the end (O_APPEND)
    return os.read(fd, 1)
