"""Atomic file replacement: a reader (or a crash) sees the old file or the new one, never a mix. And a file
that must make way is moved aside under a free name, never overwritten."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO


def write_text_atomic(path: Path, text: str, *, precondition: Callable[[], bool] | None = None) -> bool:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    ``precondition`` is checked just before the rename; when it returns False nothing is replaced and the
    function returns False (the caller re-reads and retries). A crash at any point leaves ``path`` whole:
    the old content before the rename, the new content after it.

    A ``path`` that is a symlink (a file kept in a dotfiles repository) keeps being one: its target is
    replaced, not the link.
    """
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            with contextlib.suppress(OSError):
                os.chmod(tmp_name, path.stat().st_mode & 0o777)
        if precondition is not None and not precondition():
            os.unlink(tmp_name)
            return False
        os.replace(tmp_name, path)
        _sync_directory(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    return True


class AtomicTextFile:
    """A new file written piece by piece that appears under its name only once it is whole.

    The text goes to a temporary file beside ``path``; :meth:`commit` flushes it to disk and renames it
    over ``path``, :meth:`discard` removes it. Until the commit, ``path`` is as it was (absent, or the old
    file), whatever happens meanwhile.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # Not mkstemp: its file is private to the user, while an export gets a new file's usual rights.
        self.temporary = str(path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp"))
        fd = os.open(self.temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            # newline="": the writers choose the line ends (CSV's are CRLF, JSON's LF).
            self.stream: TextIO = os.fdopen(fd, "w", encoding="utf-8", newline="")
        except BaseException:
            os.close(fd)
            os.unlink(self.temporary)
            raise

    def commit(self) -> None:
        """Make the written text ``path``'s content."""
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            os.replace(self.temporary, self.path)
        except BaseException:
            self.discard()
            raise
        _sync_directory(self.path.parent)

    def discard(self) -> None:
        """Leave ``path`` as it was and nothing else behind."""
        with contextlib.suppress(OSError, ValueError):
            self.stream.close()
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def set_aside(path: Path, tag: str) -> Path:
    """Rename ``path`` to ``path.tag`` (``path.tag.2``, ``.3`` … when taken: an earlier copy is never
    replaced); returns the new name. Raises ``OSError`` when it cannot be renamed."""
    target = path.with_name(f"{path.name}.{tag}")
    number = 2
    while target.exists() or target.is_symlink():
        target = path.with_name(f"{path.name}.{tag}.{number}")
        number += 1
    os.replace(path, target)
    return target
