"""Ways to make a knowledge base impossible to write, for read-only tests (core, CLI and window alike).

- :func:`make_read_only`: remove every write bit (binding for anyone but root).
- :func:`throwaway_user_prefix`: a command prefix that runs a child as a non-root uid that may read
  everything (CAP_DAC_READ_SEARCH, so it reaches an interpreter under /root) and write nothing it does not
  own. ``None`` where it cannot be done, with the reason.
- :func:`read_only_mount_prefix`: a command prefix that runs a child in a private mount namespace where
  the folder is bind-mounted read-only (writes fail with EROFS, even for root).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

THROWAWAY_UID = 54_321


def make_read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def throwaway_user_prefix(probe_dir: Path) -> tuple[list[str] | None, str]:
    """``(prefix, "")`` or ``(None, why not)``; checks that the user really cannot write ``probe_dir``."""
    if os.geteuid() != 0:
        return None, "already not root: a plain run is the non-root run"
    if shutil.which("setpriv") is None:
        return None, "setpriv (util-linux) is needed to run as another user"
    prefix = [
        "setpriv",
        f"--reuid={THROWAWAY_UID}",
        f"--regid={THROWAWAY_UID}",
        "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
    ]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", f"open({str(probe_dir / '.write-probe')!r}, 'w')"],
        check=False,
        capture_output=True,
        text=True,
    )
    if "Permission denied" not in probe.stderr:
        return None, f"cannot run as a user without write access here: {probe.stderr.strip()[-300:]}"
    return prefix, ""


def read_only_mount_prefix(folder: Path) -> tuple[list[str] | None, str]:
    """``(prefix, "")`` or ``(None, why not)``; the prefix ends where the child's argv begins."""
    if shutil.which("unshare") is None:
        return None, "unshare (util-linux) is needed for a private read-only bind mount"
    mount = f"mount --bind '{folder}' '{folder}' && mount -o remount,bind,ro '{folder}'"
    check = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"{mount} && touch '{folder}/.write-probe'"],
        check=False,
        capture_output=True,
        text=True,
    )
    if "Read-only file system" not in check.stderr:
        return None, f"cannot make a read-only bind mount here: {check.stderr.strip()[-300:]}"
    return ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh"], ""
