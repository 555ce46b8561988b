"""The skip gate (tests/skip_gate.py) run on a tiny suite of its own, in a child pytest: a skip whose
reason is listed passes, any other fails the run naming it, and expected failures are not skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = "from tests.skip_gate import pytest_addoption, pytest_configure  # noqa: F401\n"
INI = "[pytest]\naddopts = -p no:cacheprovider\nallowed_skips = allowed.txt\n"
ALLOWED = "# why: the tests below need a tool this machine may lack\nno frobnicator here\n"


def run_suite(folder: Path, tests: str, allowed: str = ALLOWED) -> subprocess.CompletedProcess[str]:
    folder.mkdir(exist_ok=True)
    (folder / "pytest.ini").write_text(INI, encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (folder / "allowed.txt").write_text(allowed, encoding="utf-8")
    (folder / "test_tiny.py").write_text("import pytest\n\n" + tests, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_listed_skip_passes_and_an_expected_failure_is_no_skip(tmp_path: Path) -> None:
    done = run_suite(
        tmp_path / "suite",
        "def test_runs():\n    assert True\n\n"
        "def test_lacks_a_tool():\n    pytest.skip('no frobnicator here (apt-get install frobnicator)')\n\n"
        "@pytest.mark.xfail(reason='a known bug', strict=True)\ndef test_known_bug():\n    assert False\n",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 1 skipped, 1 xfailed" in done.stdout
    assert "skips that are not allowed" not in done.stdout


def test_an_unlisted_skip_fails_the_run_and_is_named(tmp_path: Path) -> None:
    done = run_suite(
        tmp_path / "suite",
        "def test_runs():\n    assert True\n\n"
        "@pytest.mark.skipif(True, reason='Xvfb is not installed')\ndef test_window():\n    pass\n\n"
        "def test_lacks_a_tool():\n    pytest.skip('no frobnicator here')\n",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 2 skipped" in done.stdout
    section = done.stdout.split("skips that are not allowed", 1)[1].split("short test summary info")[0]
    assert "test_tiny.py::test_window: Xvfb is not installed" in section
    assert "frobnicator" not in section
    assert "list its reason in allowed.txt" in section


def test_a_skip_while_collecting_counts_too(tmp_path: Path) -> None:
    done = run_suite(
        tmp_path / "suite",
        "pytest.importorskip('no_such_module_for_the_gate', reason='the test extra has it')\n\n"
        "def test_never_collected():\n    pass\n",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_tiny.py: the test extra has it" in done.stdout.split("skips that are not allowed", 1)[1]


def test_a_missing_allowed_list_is_a_usage_error(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    run_suite(folder, "def test_runs():\n    assert True\n")
    (folder / "allowed.txt").unlink()
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 4  # pytest's usage error
    assert "allowed.txt (the allowed_skips ini option) does not exist: create it" in done.stderr
