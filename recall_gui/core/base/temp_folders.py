"""Temporary folders this program makes, named after the process that owns them.

A folder in the system's temporary folder is removed when its work ends, also when it fails or is
interrupted; a process ended where no code of its runs (killed, a power cut) leaves it behind. Its name
(``recall-gui-KIND-PID-RANDOM``) says whose it is, so a later start removes the folders of processes that
are gone (:func:`sweep_stale_temp_folders`): only this program's folders, only this user's, never a live
process's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "recall-gui-"
_OWNED = re.compile(r"recall-gui-[a-z]+(?:-[a-z]+)*-(?P<pid>[0-9]+)-[A-Za-z0-9_]+")


def owned_temp_folder(kind: str) -> tempfile.TemporaryDirectory[str]:
    """A new temporary folder for ``kind`` of work (lowercase words joined by ``-``), removed when the
    context ends; its name holds this process's id."""
    if not re.fullmatch(r"[a-z]+(?:-[a-z]+)*", kind):
        raise ValueError(f"a kind of temporary folder is lowercase words joined by '-', not {kind!r}")
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{kind}-{os.getpid()}-")


def sweep_stale_temp_folders() -> list[Path]:
    """Remove the temporary folders of this program whose process is gone (this user's only); returns
    them. Never raises: a folder that cannot be removed stays for the next start."""
    removed = []
    for folder, pid in _owned_folders():
        if pid != os.getpid() and not _alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(folder)
    return removed


def _owned_folders() -> list[tuple[Path, int]]:
    """This program's temporary folders that this user owns, with the id of the process that made each."""
    found = []
    uid = getattr(os, "getuid", lambda: None)()
    try:
        with os.scandir(tempfile.gettempdir()) as entries:
            for entry in entries:
                match = _OWNED.fullmatch(entry.name) if entry.name.startswith(PREFIX) else None
                if match is None or not entry.is_dir(follow_symlinks=False):
                    continue
                if uid is not None and entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                found.append((Path(entry.path), int(match["pid"])))
    except OSError:
        return found
    return found


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs (of any user); where that cannot be told, it is taken to run."""
    if os.name != "posix":
        return True  # os.kill(pid, 0) would not ask but act there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process, or an id no process can have
        return True
    return True
