"""Before Qt aborts for want of a system library its X11 plugin links to, the app names every missing one
and the command that installs them, in one line (qt/system_libraries.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QLibraryInfo

from recall_gui.qt.system_libraries import (
    PACKAGES,
    install_line,
    missing_libraries,
    needed,
    package_manager,
    system_libraries,
    xcb_expected,
)

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms" / "libqxcb.so"
#: Two libraries of the plugin that Qt's own message does not name (it names only xcb-cursor).
UNNAMED_BY_QT = ("libxcb-icccm.so.4", "libxcb-keysyms.so.1")

linux_only = pytest.mark.skipif(not PLUGIN.is_file(), reason="Qt's xcb plugin is Linux's")


@linux_only
def test_the_plugin_s_own_needs_are_read_from_its_dynamic_section() -> None:
    assert {"libQt6XcbQpa.so.6", "libxcb-cursor.so.0", *UNNAMED_BY_QT} <= set(needed(PLUGIN))
    assert needed(ROOT / "README.md") == []


@linux_only
def test_every_system_library_the_plugin_needs_has_its_packages_named() -> None:
    """The walk reaches the Qt libraries the plugin loads (libEGL and libfontconfig are QtGui's, libdbus
    QtDBus's), and each system library on the way has a package for both systems."""
    found = system_libraries(PLUGIN)
    assert {"libEGL.so.1", "libfontconfig.so.1", "libdbus-1.so.3", *UNNAMED_BY_QT} <= set(found)
    assert not any(name.startswith("libQt6") or name.startswith("libc.so") for name in found)
    assert [name for name in found if name not in PACKAGES] == []


@linux_only
def test_the_missing_ones_are_those_the_loader_cannot_load() -> None:
    assert missing_libraries(PLUGIN, lambda name: name not in UNNAMED_BY_QT) == list(UNNAMED_BY_QT)
    assert missing_libraries(PLUGIN, lambda name: True) == []


def test_one_line_names_the_libraries_and_the_command_for_the_system() -> None:
    missing = list(UNNAMED_BY_QT)
    assert install_line(missing, "apt") == (
        "error: the window cannot open: libxcb-icccm.so.4 and libxcb-keysyms.so.1, needed by Qt's X11 "
        "plugin, are not installed; install them with: sudo apt install libxcb-icccm4 libxcb-keysyms1"
    )
    assert install_line(missing, "dnf").endswith("sudo dnf install xcb-util-wm xcb-util-keysyms")
    both = install_line(missing, None)
    assert "sudo apt install libxcb-icccm4 libxcb-keysyms1 (Debian, Ubuntu)" in both
    assert "sudo dnf install xcb-util-wm xcb-util-keysyms (Fedora)" in both
    # Libraries of one package are installed by naming it once; one without a known package is named.
    shared = install_line(["libxcb-shm.so.0", "libxcb-sync.so.1", "libodd.so.2"], "dnf")
    assert shared.endswith("sudo dnf install libxcb, and what provides libodd.so.2")
    assert "\n" not in both + shared


@pytest.mark.parametrize(
    ("os_release", "manager"),
    [
        ('ID=debian\nVERSION_ID="12"\n', "apt"),
        ('ID=linuxmint\nID_LIKE="ubuntu debian"\n', "apt"),
        ("ID=fedora\n", "dnf"),
        ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', "dnf"),
        ("ID=arch\n", None),
        ("", None),
    ],
)
def test_the_package_manager_follows_the_system_s_family(os_release: str, manager: str | None) -> None:
    assert package_manager(os_release) == manager


@pytest.mark.parametrize(
    ("environ", "platform", "expected"),
    [
        ({"DISPLAY": ":0"}, "linux", True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, "linux", True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux", False),
        ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux", False),
        ({"DISPLAY": ""}, "linux", False),
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "darwin", False),
    ],
)
def test_the_check_runs_only_where_qt_will_load_its_x11_plugin(
    environ: dict[str, str], platform: str, expected: bool
) -> None:
    assert xcb_expected(environ, platform) is expected


def shell_words(line: str) -> set[str]:
    """The words a shell makes of ``line``, with its braces expanded (``libxcb{1,-util1}``)."""
    words: set[str] = set()
    for word in line.split():
        match = re.fullmatch(r"(.*)\{([^{}]*)\}(.*)", word)  # the innermost braces first
        if match is None:
            words.add(word)
        else:
            words |= shell_words(" ".join(match[1] + part + match[3] for part in match[2].split(",")))
    return words


def test_the_readme_names_every_package_the_window_needs_on_both_systems() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    apt = next(shell_words(line) for line in lines if line.startswith("sudo apt install "))
    dnf = next(shell_words(line) for line in lines if line.startswith("sudo dnf install "))
    assert {debian for debian, _ in PACKAGES.values()} <= apt
    assert {fedora for _, fedora in PACKAGES.values()} <= dnf
    assert shell_words("a{1,-b{2,3}}c") == {"a1c", "a-b2c", "a-b3c"}


@pytest.mark.process
@linux_only
def test_a_missing_library_ends_the_start_with_the_line_not_a_core_dump(tmp_path: Path) -> None:
    """Two of the plugin's libraries made unloadable (an empty file of each name comes first on the
    loader's path); the X display named is never reached."""
    shadows = tmp_path / "lib"
    shadows.mkdir()
    for name in UNNAMED_BY_QT:
        (shadows / name).write_bytes(b"")
    environment = {
        key: value for key, value in os.environ.items() if key not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")
    }
    environment |= {
        "DISPLAY": ":97",
        "LD_LIBRARY_PATH": str(shadows),
        "RECALL_GUI_CONFIG_DIR": str(tmp_path / "config"),
        "RECALL_GUI_DATA_DIR": str(tmp_path / "data"),
        "RECALL_GUI_CACHE_DIR": str(tmp_path / "cache"),
        "RECALL_REGISTRY_DIR": str(tmp_path / "registry"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "recall_gui"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the window cannot open: ")
    assert all(name in lines[0] for name in UNNAMED_BY_QT)
    assert "install" in lines[0]
    assert done.stdout == ""
