"""The system libraries Qt's X11 platform plugin needs, checked before Qt would abort without them.

Qt loads its xcb plugin when the application object is made; a library the plugin links to that is not
installed makes Qt abort with a core dump, and its message names only xcb-cursor. The plugin and the Qt
libraries PySide6 ships beside it name what they link to (their ELF ``DT_NEEDED`` entries); what is not
shipped must come from the system, and each such library is tried as the dynamic loader would load it.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

#: The Debian/Ubuntu and the Fedora package that installs each system library the plugin (or a Qt library
#: it loads) links to. The C and C++ runtimes are left out: nothing runs without them.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libz.so.1": ("zlib1g", "zlib"),
    "libzstd.so.1": ("libzstd1", "libzstd"),
}
RUNTIME = ("libc.so.", "libm.so.", "libstdc++.so.", "libgcc_s.so.", "ld-linux", "libdl.so.", "libpthread.so.")
#: Libraries PySide6 ships, wherever a build (a wheel, the packaged app) put them: never the system's.
SHIPPED = ("libQt6", "libicu")
SHT_DYNAMIC, DT_NULL, DT_NEEDED = 6, 0, 1


def xcb_expected(environ: Mapping[str, str], platform: str) -> bool:
    """Whether Qt will load its xcb plugin: on Linux, with an X display, no Wayland one (Qt prefers it),
    and no other platform chosen in ``QT_QPA_PLATFORM``."""
    chosen = environ.get("QT_QPA_PLATFORM", "")
    return (
        platform.startswith("linux")
        and bool(environ.get("DISPLAY"))
        and not environ.get("WAYLAND_DISPLAY")
        and (not chosen or chosen.startswith("xcb"))
    )


def needed(path: Path) -> list[str]:
    """The libraries an ELF shared object names as needed (its ``DT_NEEDED`` entries), read from its
    dynamic section; none if the file cannot be read as one."""
    try:
        with path.open("rb") as file:
            return _needed(file)
    except (OSError, struct.error, ValueError, IndexError):
        return []


def _needed(file: BinaryIO) -> list[str]:
    # The ELF header, the section table and the dynamic section (System V ABI), read by hand: pyelftools
    # would be a dependency for one list of names.
    def read(offset: int, size: int) -> bytes:
        file.seek(offset)
        return file.read(size)

    ident = read(0, 16)
    if ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
        return []
    wide, order = ident[4] == 2, "<" if ident[5] == 1 else ">"
    address = order + ("Q" if wide else "I")
    (sections_at,) = struct.unpack(address, read(0x28 if wide else 0x20, struct.calcsize(address)))
    entry_size, count = struct.unpack(order + "HH", read(0x3A if wide else 0x2E, 4))
    entry = order + ("IIQQQQIIQQ" if wide else "IIIIIIIIII")
    table = read(sections_at, entry_size * count)
    sections = [struct.unpack_from(entry, table, i * entry_size) for i in range(count)]
    names: list[str] = []
    for _, kind, _, _, offset, size, link, *_ in sections:
        if kind != SHT_DYNAMIC:
            continue
        strings = read(sections[link][4], sections[link][5])
        for tag, value in struct.iter_unpack(order + ("qQ" if wide else "iI"), read(offset, size)):
            if tag == DT_NULL:
                break
            if tag == DT_NEEDED:
                names.append(strings[value : strings.index(b"\0", value)].decode())
    return names


def system_libraries(plugin: Path) -> list[str]:
    """The system libraries ``plugin`` needs, itself or through the Qt libraries shipped beside it (its
    ``$ORIGIN/../../lib``), in the order first named; the C and C++ runtimes left out."""
    shipped = plugin.parents[2] / "lib"
    found: dict[str, None] = {}
    walked, waiting = set(), [plugin]
    while waiting:
        for name in needed(waiting.pop(0)):
            if (shipped / name).is_file():
                if name not in walked:
                    walked.add(name)
                    waiting.append(shipped / name)
            elif not name.startswith(RUNTIME + SHIPPED):
                found.setdefault(name)
    return list(found)


def loadable(name: str) -> bool:
    """Whether the dynamic loader finds and loads ``name`` (a library's name or a file's path), as it will
    when Qt loads the plugin."""
    import ctypes

    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def missing_libraries(plugin: Path, can_load: Callable[[str], bool] = loadable) -> list[str]:
    """The system libraries ``plugin`` needs that ``can_load`` cannot load."""
    return [name for name in system_libraries(plugin) if not can_load(name)]


def package_manager(os_release: str) -> str | None:
    """``apt`` on Debian and its derivatives, ``dnf`` on Fedora and its, from ``/etc/os-release``'s text;
    ``None`` for another system."""
    fields = dict(line.partition("=")[::2] for line in os_release.splitlines())
    family = {fields.get("ID", ""), *fields.get("ID_LIKE", "").split()}
    family = {name.strip().strip("'\"") for name in family}
    if family & {"debian", "ubuntu"}:
        return "apt"
    if family & {"fedora", "rhel", "centos"}:
        return "dnf"
    return None


def install_command(missing: list[str], manager: str) -> str:
    """``sudo apt install …`` (or ``dnf``) with the package of each library in ``missing`` that has one."""
    column = 0 if manager == "apt" else 1
    packages = dict.fromkeys(PACKAGES[name][column] for name in missing if name in PACKAGES)
    return f"sudo {manager} install {' '.join(packages)}"


def install_line(missing: list[str], manager: str | None) -> str:
    """One line: the libraries ``missing``, and the command that installs them on this system (both
    commands when the system is neither of Debian's nor of Fedora's kind)."""
    unknown = [name for name in missing if name not in PACKAGES]
    if len(unknown) == len(missing):
        how = "install the packages that provide them"
    elif manager is not None:
        how = f"install them with: {install_command(missing, manager)}"
    else:
        apt, dnf = install_command(missing, "apt"), install_command(missing, "dnf")
        how = f"install them with: {apt} (Debian, Ubuntu) or {dnf} (Fedora)"
    if unknown and len(unknown) < len(missing):
        how += f", and what provides {_listed(unknown)}"
    return (
        f"error: the window cannot open: {_listed(missing)}, needed by Qt's X11 plugin, "
        f"{'is' if len(missing) == 1 else 'are'} not installed; {how}"
    )


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def xcb_plugin(environ: Mapping[str, str]) -> Path | None:
    """Qt's xcb plugin, where Qt will look for it; ``None`` if it is not there."""
    from PySide6.QtCore import QLibraryInfo

    folder = environ.get("QT_QPA_PLATFORM_PLUGIN_PATH") or os.path.join(
        QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath), "platforms"
    )
    plugin = Path(folder) / "libqxcb.so"
    return plugin if plugin.is_file() else None


def libraries_problem(environ: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """The line to print instead of letting Qt abort for want of a system library, or ``None``.

    Loading the plugin here costs nothing extra when it works (Qt finds it loaded); only when it fails
    are its libraries walked one by one to name every missing one.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not xcb_expected(environ, platform):
        return None
    plugin = xcb_plugin(environ)
    if plugin is None or loadable(str(plugin)):
        return None
    missing = missing_libraries(plugin)
    if not missing:
        return None  # something else is wrong with the plugin: Qt says what
    try:
        os_release = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        os_release = ""
    return install_line(missing, package_manager(os_release))
