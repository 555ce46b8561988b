"""``make launcher`` puts the checkout's ``recall-gui`` on the user's PATH: after it, the README's commands
run as written, from any folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recall_gui import __version__

ROOT = Path(__file__).resolve().parents[2]
COMMAND = Path(sys.executable).with_name("recall-gui")
MAKE = shutil.which("make")


@pytest.mark.process
@pytest.mark.skipif(MAKE is None or not COMMAND.is_file(), reason="needs make and an installed recall-gui")
def test_make_launcher_links_the_command_into_a_folder_on_the_path(tmp_path: Path) -> None:
    launchers = tmp_path / "bin"
    venv = COMMAND.parents[1]
    # -o: the environment this test runs in is set up already; make must not set it up again.
    launcher = [str(MAKE), "-s", "-o", f"{venv}/.installed-app", "launcher", f"VENV={venv}"]
    launcher.append(f"LAUNCHER_DIR={launchers}")
    made = subprocess.run(
        launcher,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert f"{launchers} is not on your PATH" in made.stdout
    assert (launchers / "recall-gui").resolve() == COMMAND.resolve()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {**os.environ, "PATH": f"{launchers}{os.pathsep}/usr/bin:/bin"}
    command = ["recall-gui", "--version"]
    ran = subprocess.run(command, cwd=elsewhere, env=environment, capture_output=True, text=True, check=False)
    assert ran.stdout.strip() == f"recall-gui {__version__}"
    again = subprocess.run(  # run twice, the link is replaced, and a folder on the PATH is not nagged about
        launcher,
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert "not on your PATH" not in again.stdout
