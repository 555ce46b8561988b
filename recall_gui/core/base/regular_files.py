"""Every file the app reads: a regular file, never more of it than a cap.

A path may name a FIFO (a read waits for a writer that may never come), a device such as ``/dev/zero``
(a read never ends), or a file far larger than anything the app keeps there. So every reader opens its
file here: without blocking (a FIFO opens at once), then looks at what it opened (``fstat`` of the open
file, so what is read is what was looked at); anything but a regular file is refused at once, naming what
it is, and :func:`read_regular` reads at most its cap. A refusal is an ``OSError``, so a reader's usual
"cannot be read (why)" says it in one line.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
#: A FIFO opens at once (no writer is waited for), a terminal is never made the controlling one.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


class FileRefused(OSError):
    """A file that is not read: not a regular file, or larger than its reader's cap."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EINVAL, reason, os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename} was not read: {self.strerror}"


def size_in_words(size: int) -> str:
    """``size`` bytes for a person: "64 MB", "4 KB", "512 bytes"."""
    for unit, name in ((1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")):
        if size >= unit:
            return f"{size / unit:.0f} {name}" if size % unit == 0 else f"{size / unit:.1f} {name}"
    return f"{size} bytes"


def open_regular(
    path: str | os.PathLike[str], *, cap: int | None = None, follow_links: bool = True
) -> BinaryIO:
    """``path`` opened to read, in binary; raises :class:`FileRefused` when it is not a regular file or
    (``cap``) is larger than ``cap`` bytes, ``OSError`` when it cannot be opened. ``follow_links=False``:
    a symbolic link is refused by the system (``ELOOP``)."""
    flags = _OPEN_FLAGS | getattr(os, "O_BINARY", 0) | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0))
    fd = os.open(path, flags)
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            kind = next((name for test, name in _KINDS if test(found.st_mode)), "not a regular file")
            raise FileRefused(path, f"it is {kind}, not a regular file")
        if cap is not None and found.st_size > cap:
            raise FileRefused(path, _too_large(cap))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], cap: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``cap`` of them: a file larger than that (or
    growing past it while read) raises :class:`FileRefused`, as does what is not a regular file."""
    with open_regular(path, cap=cap, follow_links=follow_links) as file:
        data = file.read(cap + 1)
    if len(data) > cap:
        raise FileRefused(path, _too_large(cap))
    return data


def read_regular_text(path: str | os.PathLike[str], cap: int, *, encoding: str = "utf-8") -> str:
    """:func:`read_regular` decoded (``UnicodeDecodeError`` for bytes that are not ``encoding``), line
    ends read as Python's text mode reads them."""
    text = read_regular(path, cap).decode(encoding)
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _too_large(cap: int) -> str:
    return f"it is larger than {size_in_words(cap)}, the most the app reads of such a file"
