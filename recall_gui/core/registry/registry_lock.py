"""One registry change at a time: the registry folder itself is locked while a change reads, checks and
writes its files.

Without it, two processes could both read the file, each add an entry, and the second rename would drop
the first's entry (the stamp check before the rename narrows that window but cannot close it). Programs
that do not take the lock (cosh, an editor) are still caught by that stamp check.

On POSIX the lock is ``flock`` on the folder: nothing is added to the user's registry folder, and a
process that dies releases it. Elsewhere a lock file beside the registry's files does the same.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recall_gui.core.base.errors import RegistryError

#: Long enough for any other change to finish (each is a few file writes); a holder that hangs longer is
#: reported instead of waited for forever.
LOCK_TIMEOUT_S = 30.0
#: How long a waiting change sleeps between tries.
_RETRY_S = 0.005
#: The lock file where folders cannot be locked (Windows).
LOCK_FILE = ".rag_registry.lock"


@contextmanager
def registry_locked(directory: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the registry's lock, waiting for another process's change to finish; raises
    :class:`RegistryError` when it cannot be taken. Not re-entrant: a change takes it once."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _cannot_lock(directory, error) from error
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        with _file_locked(directory, timeout_s):
            yield
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as error:
        raise _cannot_lock(directory, error) from error
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _held(directory, timeout_s) from None
                time.sleep(_RETRY_S)
            except OSError as error:
                raise _cannot_lock(directory, error) from error
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def _file_locked(directory: Path, timeout_s: float) -> Iterator[None]:  # pragma: no cover - Windows
    from filelock import FileLock, Timeout

    lock = FileLock(str(directory / LOCK_FILE), timeout=timeout_s)
    try:
        lock.acquire()
    except Timeout:
        raise _held(directory, timeout_s) from None
    except OSError as error:
        raise _cannot_lock(directory, error) from error
    try:
        yield
    finally:
        lock.release()


def _held(directory: Path, timeout_s: float) -> RegistryError:
    return RegistryError(
        f"not saved: another program has been changing the registry in {directory} for {timeout_s:.0f} s",
        hint="Try again in a moment. Nothing was changed.",
    )


def _cannot_lock(directory: Path, error: OSError) -> RegistryError:
    return RegistryError(
        f"not saved: cannot lock the registry folder {directory}: {error.strerror or error}",
        hint="Check that the registry folder exists and is writable. Nothing was changed.",
    )
