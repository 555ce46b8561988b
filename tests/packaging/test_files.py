"""The files in packaging/: the desktop entry, metadata and icons valid and consistent with each other and
with the app; the PyInstaller spec in step with what the app imports by name."""

from __future__ import annotations

import configparser
import shutil
import struct
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recall_gui.core.base.warmup import HEAVY_MODULES
from recall_gui.qt.agent_server import CLIENT_MODULES
from recall_gui.qt.app import DESKTOP_FILE_NAME

ROOT = Path(__file__).resolve().parents[2]
LINUX = ROOT / "packaging" / "linux"
ICONS = ROOT / "packaging" / "icons" / "hicolor"
DESKTOP_FILE = LINUX / f"{DESKTOP_FILE_NAME}.desktop"
METAINFO = next(LINUX.glob("*.metainfo.xml"))
ICON_SIZES = {16, 22, 24, 32, 48, 64, 128, 256, 512}


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read(DESKTOP_FILE, encoding="utf-8")
    return parser["Desktop Entry"]


def console_script() -> str:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    (name,) = scripts
    return str(name)


def test_the_menu_entry_is_named_as_the_app_declares_itself_and_runs_its_command() -> None:
    entry = desktop_entry()
    assert entry["Exec"] == console_script()
    assert entry["Icon"] == DESKTOP_FILE_NAME
    # X11 docks match windows by WM_CLASS, which Qt takes from the program and application name.
    assert entry["StartupWMClass"] == "recall-gui"
    assert entry["Terminal"] == "false"


def test_the_metainfo_launches_the_menu_entry_and_is_named_after_its_id() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.get("type") == "desktop-application"
    component_id = root.findtext("id")
    assert METAINFO.name == f"{component_id}.metainfo.xml"
    assert root.findtext("launchable[@type='desktop-id']") == DESKTOP_FILE.name
    assert root.findtext("provides/binary") == console_script()


def test_install_script_names_the_files_that_exist() -> None:
    script = (LINUX / "install.sh").read_text()
    assert f"{DESKTOP_FILE.name}" in script
    assert METAINFO.name in script


@pytest.mark.process
@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None, reason="apt-get install desktop-file-utils"
)
def test_the_menu_entry_is_valid() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(DESKTOP_FILE)], check=False, capture_output=True, text=True
    )
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout


@pytest.mark.process
@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="apt-get install appstream")
def test_the_metainfo_is_valid_even_pedantically() -> None:
    done = subprocess.run(
        ["appstreamcli", "validate", "--pedantic", "--no-net", str(METAINFO)],
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    assert "pedantic" not in done.stdout


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_icon_is_rendered_at_every_usual_size_in_the_hicolor_layout() -> None:
    found = {}
    for png in ICONS.glob("*/apps/*.png"):
        assert png.name == f"{DESKTOP_FILE_NAME}.png"
        size = int(png.parent.parent.name.split("x")[0])
        assert png.parent.parent.name == f"{size}x{size}"
        found[size] = png_size(png)
    assert found == {size: (size, size) for size in ICON_SIZES}


def test_the_window_uses_the_same_art_as_the_desktop() -> None:
    source = ROOT / "resources" / "icon" / f"{DESKTOP_FILE_NAME}.svg"
    assert (ROOT / "recall_gui" / "qt" / "assets" / "recall-gui.svg").read_bytes() == source.read_bytes()


@pytest.mark.process
@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="apt-get install librsvg2-bin")
def test_the_committed_pngs_are_what_the_render_script_makes(tmp_path: Path) -> None:
    copy = tmp_path / "checkout"
    for part in ("resources/icon", "packaging/icons", "recall_gui/qt/assets"):
        shutil.copytree(ROOT / part, copy / part)
    subprocess.run(["sh", str(copy / "packaging" / "icons" / "render.sh")], check=True, timeout=120)
    for png in ICONS.glob("*/apps/*.png"):
        rendered = copy / png.relative_to(ROOT)
        assert png_size(rendered) == png_size(png)
        # Another librsvg may round a few edge pixels differently; changed art differs by far more.
        difference = np.abs(rgba(rendered) - rgba(png)).max()
        assert difference <= 8, f"{png} is stale (differs by {difference}/255): run packaging/icons/render.sh"


def rgba(path: Path) -> Any:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"), dtype=np.int16)


def test_the_packaged_build_starts_the_mcp_server_with_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    from recall_gui.mcp.probe import ServerLaunch

    checkout = ServerLaunch.for_registry("/reg", env={})
    assert (checkout.command, checkout.args) == (
        sys.executable,
        ("-m", "recall_gui", "mcp", "--registry", "/reg"),
    )
    # In the PyInstaller build sys.executable is the recall-gui program, which knows no `-m`.
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    packaged = ServerLaunch.for_registry("/reg", env={})
    assert (packaged.command, packaged.args) == (sys.executable, ("mcp", "--registry", "/reg"))


def test_the_spec_bundles_every_module_the_window_imports_by_name() -> None:
    spec = (ROOT / "packaging" / "recall-gui.spec").read_text()
    hidden = spec[spec.index("hiddenimports = [") : spec.index("]", spec.index("hiddenimports = ["))]
    for name in (*HEAVY_MODULES, *CLIENT_MODULES):
        assert f'"{name}"' in hidden, f"{name} is imported by name: add it to the spec's hiddenimports"
