"""The tests that hold much memory run on one worker (``--dist loadgroup``, tests/conftest.py's ONE_WORKER
group): with the pytest and pytest-xdist installed, a group's tests in two files land on the same worker,
so the demo is built once a run, and the modules that keep the app running beside their worker are all in
the group."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # runs pytest with two workers

GROUPED = """import pytest

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("number", range(4))
def test_grouped(number):
    pass

@pytest.mark.parametrize("number", range(4))
def test_free(number):
    pass
"""


def test_a_groups_tests_in_two_files_run_on_one_worker(tmp_path: Path) -> None:
    for name in ("test_one.py", "test_two.py"):
        (tmp_path / name).write_text(GROUPED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    workers = {
        match["worker"]
        for match in re.finditer(r"\[(?P<worker>gw\d)\] \[ *\d+%\] PASSED \S+::test_grouped", done.stdout)
    }
    assert len(re.findall(r"PASSED \S+::test_grouped", done.stdout)) == 8, done.stdout
    assert len(workers) == 1, done.stdout


def test_the_listed_modules_are_there_and_every_one_that_keeps_a_server_up_is_among_them() -> None:
    """The modules listed for the group are there, and every module that keeps an MCP server up the way
    an agent starts it (tests/mcp/live.py's ``live_session``) is in the group."""
    from tests.conftest import APP_PROCESS_FOLDER, APP_PROCESS_MODULES, HEAVY_MODULES

    root = Path(__file__).resolve().parents[2]
    listed = APP_PROCESS_MODULES | HEAVY_MODULES
    assert all((root / module).is_file() for module in listed), listed
    servers = {
        path.relative_to(root).as_posix()
        for path in (root / "tests").rglob("test_*.py")
        if path != Path(__file__).resolve() and "live_session(" in path.read_text(encoding="utf-8")
    }
    assert len(servers) > 5, servers
    outside = {module for module in servers if not module.startswith(APP_PROCESS_FOLDER)}
    assert outside <= APP_PROCESS_MODULES, outside - APP_PROCESS_MODULES
