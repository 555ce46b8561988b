"""CI's gate on skips: with RECALL_GUI_STRICT_SKIPS=1 a skip whose reason is not allowed fails the run and
is named; an allowed one does not; without the setting nothing changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # runs the app's commands or servers in processes of their own

ROOT = Path(__file__).resolve().parents[2]

TESTS = """
import pytest

def test_runs():
    assert True

def test_allowed():
    pytest.skip("None is immortal from Python 3.12 on")

def test_missing_tool():
    pytest.skip("apt-get install some-tool")
"""


def run_tiny(tmp_path: Path, strict: bool) -> subprocess.CompletedProcess[str]:
    folder = tmp_path / "tiny"
    folder.mkdir(exist_ok=True)
    shutil.copy(ROOT / "tests" / "conftest.py", folder / "conftest.py")
    shutil.copy(ROOT / "tests" / "allowed_skips.txt", folder / "allowed_skips.txt")
    (folder / "test_tiny.py").write_text(TESTS, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RECALL_GUI_STRICT_SKIPS": "1" if strict else "0"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def test_an_unlisted_skip_fails_the_strict_run_and_is_named(tmp_path: Path) -> None:
    done = run_tiny(tmp_path, strict=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 skip(s) not on allowed_skips.txt" in done.stdout
    assert "test_missing_tool: " in done.stdout and "apt-get install some-tool" in done.stdout
    assert "test_allowed" not in done.stdout.split("not on allowed_skips.txt")[1]


def test_without_the_setting_skips_do_not_fail_the_run(tmp_path: Path) -> None:
    done = run_tiny(tmp_path, strict=False)
    assert done.returncode == 0, done.stdout + done.stderr
