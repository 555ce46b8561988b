"""Every shortcut the window lists works wherever the focus is, under a real X11 window: there a line edit
claims Ctrl+E (end of line) for itself, and the window's export did nothing while the query box had focus.

Offscreen Qt binds no such editing keys, so this runs the window under Xvfb (skipped where there is none).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kbtools import KnowledgeBase
from tests.waiting import wait_until

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def x11_display(tmp_path: Path) -> Iterator[str]:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb libxcb-icccm4 libxcb-keysyms1)")
    number = 90 + os.getpid() % 400
    while Path(f"/tmp/.X{number}-lock").exists():
        number += 1
    server = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until(Path(f"/tmp/.X11-unix/X{number}").exists, f"Xvfb :{number} listens", timeout=10)
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(10)


def test_export_and_browse_shortcuts_work_while_a_text_field_has_focus(
    x11_display: str, kb: KnowledgeBase, tmp_path: Path
) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": x11_display, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("x11_shortcuts.py")),
            str(kb.registry_dir),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    fired = json.loads(done.stdout.strip().splitlines()[-1])
    assert fired and all(fired.values()), fired
