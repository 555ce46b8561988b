"""Atomic file replacement: a reader (or a crash) sees the old file or the new one, never a mix. And a file
that must make way is moved aside under a free name, never overwritten."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def write_text_atomic(path: Path, text: str, *, precondition: Callable[[], bool] | None = None) -> bool:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    ``precondition`` is checked just before the rename; when it returns False nothing is replaced and the
    function returns False (the caller re-reads and retries). A crash at any point leaves ``path`` whole:
    the old content before the rename, the new content after it.
    """
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
